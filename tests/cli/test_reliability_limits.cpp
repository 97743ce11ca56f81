// The memory budget: sizes parse, every loader refuses a declared shape beyond its LoadLimits'
// budget or the file before allocating, and the CLI's --max-memory refuses a run whose estimate
// exceeds it.
#include <cstring>
#include <fstream>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "json_tensor.hpp"
#include "layer_cost.hpp"
#include "load_limits.hpp"
#include "npy.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"
#include "weights_file.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A version-1 .npy header for float32 `shape_text` ("(3, 4)") followed by `data_bytes` bytes.
std::string npy_bytes(const std::string& shape_text, size_t data_bytes) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }";
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    for (size_t i = 0; i < data_bytes; ++i)
        bytes += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng()) & 0x3f);
    return bytes;
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("parse_memory_size reads bytes and binary suffixes and refuses the rest") {
    const uint64_t n = std::uniform_int_distribution<uint64_t>(1, 4000)(rng());
    CHECK(parse_memory_size(std::to_string(n)) == n);
    CHECK(parse_memory_size(std::to_string(n) + "K") == n << 10);
    CHECK(parse_memory_size(std::to_string(n) + "m") == n << 20);
    CHECK(parse_memory_size(std::to_string(n) + "G") == n << 30);
    CHECK(parse_memory_size(std::to_string(n) + "GiB") == n << 30);
    CHECK(parse_memory_size(std::to_string(n) + "MB") == n << 20);
    CHECK(parse_memory_size("1T") == uint64_t{1} << 40);
    for (const char* bad : {"", "G", "0", "-5", "5X", "1.5G", "99999999999999999999", "16777216T", "8 G"})
        expect_error(ErrorKind::usage, [&] { parse_memory_size(bad); }, {std::string(bad) + "\" is not a size"});
}

TEST_CASE("the default budget is a fraction of the machine's memory, and LoadLimits start with it") {
    const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGE_SIZE));
    CHECK(machine_memory() <= physical);
    CHECK(default_memory_budget() > 0);
    CHECK(default_memory_budget() < machine_memory());
    CHECK(LoadLimits{}.memory_budget == default_memory_budget());
    CHECK(!LoadLimits{}.allow_nonfinite);
}

TEST_CASE("check_memory names what, the bytes and the budget, and says a larger budget helps") {
    const uint64_t limit = std::uniform_int_distribution<uint64_t>(1, 100000)(rng());
    check_memory(limit, limit, "fits exactly");
    CHECK(expect_error(
              ErrorKind::bad_input, [&] { check_memory(limit + 1, limit, "the thing"); }, {},
              Remedy::raise_memory_budget) == "the thing needs " + std::to_string(limit + 1) +
                                                  " bytes, more than the memory budget of " + std::to_string(limit) +
                                                  " bytes");
    expect_error(
        ErrorKind::bad_input, [] { check_memory_elements(uint64_t{1} << 62, 8, 1000, "overflowing"); },
        {"overflowing needs 18446744073709551615 bytes"}, Remedy::raise_memory_budget);
}

TEST_CASE("a Tensor beyond the machine's memory is refused before allocating, whatever the budget") {
    const int64_t just_over = static_cast<int64_t>(machine_memory() / sizeof(float)) + 1;
    expect_error(ErrorKind::bad_input, [&] { Tensor({just_over}); },
                 {"a tensor of shape [" + std::to_string(just_over) + "]", "more than this machine's memory"});
    // Far beyond any machine: refused, not a bad_alloc.
    expect_error(ErrorKind::bad_input, [] { Tensor({int64_t{1} << 20, int64_t{1} << 20, 64}); }, {"machine's memory"});
    const int64_t rows = std::uniform_int_distribution<int64_t>(2, 40)(rng());
    CHECK(Tensor({rows, 25}).size() == rows * 25);
}

TEST_CASE(".npy: a shape larger than the file is refused; one within the file but over the budget too") {
    const int64_t rows = std::uniform_int_distribution<int64_t>(3, 9)(rng());
    std::string shape = "(";  // appended, not "(" + std::to_string(..): that trips GCC 12's -Wrestrict
    shape += std::to_string(rows) + ", 4)";
    const std::string fits = npy_bytes(shape, size_t(rows) * 16);
    CHECK(parse_npy(reinterpret_cast<const unsigned char*>(fits.data()), fits.size(), "fits.npy").shape ==
          std::vector<int64_t>{rows, 4});
    const std::string huge = npy_bytes("(1000000000, 1000000)", 64);
    expect_error(ErrorKind::bad_input,
                 [&] { parse_npy(reinterpret_cast<const unsigned char*>(huge.data()), huge.size(), "huge.npy"); },
                 {"huge.npy", "truncated .npy data"});
    const auto* bytes = reinterpret_cast<const unsigned char*>(fits.data());
    CHECK(parse_npy(bytes, fits.size(), "fits.npy", limits_with_budget(uint64_t(rows) * 16)).size() == rows * 4);
    expect_error(
        ErrorKind::bad_input,
        [&] { parse_npy(bytes, fits.size(), "fits.npy", limits_with_budget(uint64_t(rows) * 16 - 4)); },
        {"fits.npy: .npy array of shape [", "memory budget"}, Remedy::raise_memory_budget);
}

TEST_CASE("weights JSON declaring a huge d_model with short arrays is refused without allocating D x D") {
    ScratchDir dir;
    // d_model 2^20 would be a 4 TB matrix; the rows say otherwise, and that is found first.
    write_text(dir / "w.json", R"({"format":"attn-viz/weights@1","d_model":1048576,"num_heads":1,)"
                               R"("W_Q":[[1,2],[3,4]],"W_K":[[1,2],[3,4]],"W_V":[[1,2],[3,4]],"W_O":[[1,2],[3,4]]})");
    expect_error(ErrorKind::bad_input, [&] { read_weights_file(dir / "w.json"); },
                 {"w.json", "W_Q has 2 entries, expected 1048576"});
}

TEST_CASE("a JSON document whose parsed form would exceed the budget is refused before parsing") {
    ScratchDir dir;
    write_layer_fixture(dir, 4, 2, 3);
    const uint64_t size = std::filesystem::file_size(dir / "w.json");
    CHECK(read_weights_file(dir / "w.json", limits_with_budget(size * json_bytes_per_text_byte)).d_model == 4);
    expect_error(
        ErrorKind::bad_input,
        [&] { read_weights_file(dir / "w.json", limits_with_budget(size * json_bytes_per_text_byte - 1)); },
        {dir / "w.json", ": parsing " + std::to_string(size) + " bytes of JSON needs", "memory budget"},
        Remedy::raise_memory_budget);
}

TEST_CASE("safetensors: a tensor within the file but over the budget is refused when loaded") {
    ScratchDir dir;
    const int64_t n = std::uniform_int_distribution<int64_t>(5, 30)(rng());
    // Wide enough that the header's parsing budget (16 bytes per header byte) is far below the tensor's.
    write_safetensors(dir / "m.safetensors", {{"x", random_tensor({n, 300})}});
    CHECK(SafetensorsFile(dir / "m.safetensors", limits_with_budget(uint64_t(n) * 1200)).load("x").size() == n * 300);
    const SafetensorsFile file(dir / "m.safetensors", limits_with_budget(uint64_t(n) * 1200 - 1));
    expect_error(
        ErrorKind::bad_input, [&] { file.load("x"); },
        {dir / "m.safetensors" + ": tensor 'x' of shape [" + std::to_string(n) + ", 300]", "memory budget"},
        Remedy::raise_memory_budget);
}

TEST_CASE("an inline JSON tensor over the budget is refused, naming the file and the tensor") {
    const Tensor t = random_tensor({6, 7});
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t r = 0; r < 6; ++r)
        rows.push_back(std::vector<float>(t.data.begin() + r * 7, t.data.begin() + (r + 1) * 7));
    CHECK(read_json_tensor(rows, {6, -1}, "W_Q", {"w.json", ".", limits_with_budget(6 * 7 * 4)}).size() == 42);
    expect_error(
        ErrorKind::bad_input,
        [&] {
            read_json_tensor(rows, {6, -1}, "W_Q", {"w.json", ".", limits_with_budget(6 * 7 * 4 - 1)});
        },
        {"w.json: W_Q of shape [6, 7]", "memory budget"}, Remedy::raise_memory_budget);
}

TEST_CASE("estimate_layer_run_bytes covers the attention map and grows with T*S") {
    const int64_t D = 64, H = 4, T = std::uniform_int_distribution<int64_t>(10, 200)(rng());
    const uint64_t estimate = estimate_layer_run_bytes(D, H, H, D / H, T, T);
    const uint64_t map = uint64_t(H * T * T) * 4, weights = uint64_t(4 * D * D) * 4;
    CHECK(estimate >= map + weights + uint64_t(T * D) * 4 * 2);
    CHECK(estimate < 4 * (map + weights + uint64_t(T * D) * 4 * 8));
    CHECK(estimate_layer_run_bytes(D, H, H, D / H, 2 * T, 2 * T) - estimate >= 3 * map);
    CHECK(estimate_layer_run_bytes(int64_t{1} << 40, 1 << 20, 1 << 20, 1 << 20, int64_t{1} << 40, int64_t{1} << 40) ==
          UINT64_MAX);
}

TEST_CASE("run --max-memory refuses a layer run beyond it (exit 3) and accepts one within it") {
    ScratchDir dir;
    // Large enough that the quadratic run estimate clears the linear JSON size whatever digits
    // the random numbers print with.
    const int64_t T = std::uniform_int_distribution<int64_t>(450, 490)(rng());
    write_layer_fixture(dir, 8, 2, T);
    const uint64_t estimate = estimate_layer_run_bytes(8, 2, 2, 4, T, T);
    // The JSON files themselves fit: the run is what is refused.
    REQUIRE(std::filesystem::file_size(dir / "x.json") * json_bytes_per_text_byte < estimate - 1);
    const std::string args = layer_fixture_run(dir) + " -q";
    CommandResult r = run_attn_viz(args + " --max-memory " + std::to_string(estimate - 1));
    CHECK(r.exit_code == 3);
    const std::string tokens = std::to_string(T);
    CHECK(r.output.find("running the layer on " + tokens + " x " + tokens + " tokens needs " +
                        std::to_string(estimate) + " bytes") != std::string::npos);
    CHECK(r.output.find("memory budget of " + std::to_string(estimate - 1) + " bytes (--max-memory)") !=
          std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out"));
    CHECK(run_attn_viz(args + " --max-memory " + std::to_string(estimate)).exit_code == 0);
    r = run_attn_viz(args + " --max-memory lots");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("\"lots\" is not a size") != std::string::npos);
}

TEST_CASE("run --inputs checks each corpus sequence's run against --max-memory as it is read") {
    ScratchDir dir;
    const int64_t T = std::uniform_int_distribution<int64_t>(450, 490)(rng());
    write_layer_fixture(dir, 8, 2, T);
    // The short sequence first: the refusal comes when the long one is read.
    const std::string long_line = read_text(dir / "x.json");
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "corpus.jsonl", read_text(dir / "x.json") + "\n" + long_line + "\n");
    const uint64_t estimate = estimate_layer_run_bytes(8, 2, 2, 4, T, T);
    REQUIRE(long_line.size() * json_bytes_per_text_byte < estimate - 1);
    const std::string args =
        "run -q --weights " + (dir / "w.json") + " --inputs " + (dir / "corpus.jsonl") + " --out " + (dir / "out");
    const CommandResult r = run_attn_viz(args + " --max-memory " + std::to_string(estimate - 1));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("running the layer on " + std::to_string(T) + " x " + std::to_string(T) + " tokens needs " +
                        std::to_string(estimate) + " bytes, more than the memory budget of " +
                        std::to_string(estimate - 1) + " bytes (--max-memory)") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out"));
    CHECK(run_attn_viz(args + " --max-memory " + std::to_string(estimate)).exit_code == 0);
}

}  // TEST_SUITE("reliability")
