// safetensors reading and writing: round trips in every float dtype, rounding, hostile headers.
#include <bit>
#include <cmath>
#include <cstring>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "safetensors.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A safetensors file from a header text and a data buffer of `buffer_bytes` random bytes.
std::string safetensors_bytes(const std::string& header, size_t buffer_bytes, uint64_t declared_length = UINT64_MAX) {
    const uint64_t length = declared_length == UINT64_MAX ? header.size() : declared_length;
    std::string bytes(reinterpret_cast<const char*>(&length), 8);
    bytes += header;
    for (size_t i = 0; i < buffer_bytes; ++i) bytes += static_cast<char>(rng()() & 0xff);
    return bytes;
}

// Opening (and loading every tensor of) `bytes` must fail with bad_input naming the file and `fragment`.
void expect_rejected(const ScratchDir& dir, const std::string& bytes, const std::string& fragment) {
    const std::string path = dir / "hostile.safetensors";
    write_text(path, bytes);
    expect_error(ErrorKind::bad_input,
                 [&] {
                     SafetensorsFile file(path);
                     for (const std::string& name : file.names()) file.load(name);
                 },
                 {"hostile.safetensors", fragment});
}

// The representable neighbours of a rounded value must not be closer to the input; ties go to even.
template <typename ToBits, typename FromBits>
void check_round_to_nearest_even(float x, ToBits to_bits, FromBits from_bits) {
    const uint16_t h = to_bits(x);
    const double rounded = from_bits(h), error = std::fabs(rounded - double(x));
    for (int step : {-1, 1}) {
        const uint16_t neighbour = static_cast<uint16_t>(h + step);
        const double other = from_bits(neighbour);
        if (!std::isfinite(other) || (neighbour & 0x7fff) == 0x7fff || ((neighbour ^ h) & 0x8000)) continue;
        const double other_error = std::fabs(other - double(x));
        CHECK_MESSAGE(error <= other_error, "x=" << x << " rounded to " << rounded << ", " << other << " is closer");
        if (error == other_error) CHECK_MESSAGE((h & 1) == 0, "tie at x=" << x << " not rounded to even");
    }
}

}  // namespace

TEST_SUITE("formats") {

TEST_CASE("safetensors round-trips tensors stored as F32, F64, F16 and BF16") {
    ScratchDir dir;
    const std::vector<std::vector<int64_t>> shapes = {{7}, {3, 5}, {2, 1, 9}, {1, 1}, {0, 4}};
    struct Case {
        SafetensorsDtype dtype;
        double relative;
    };
    for (Case c : {Case{SafetensorsDtype::f32, 0}, Case{SafetensorsDtype::f64, 0},
                   Case{SafetensorsDtype::f16, 1.0 / 2048}, Case{SafetensorsDtype::bf16, 1.0 / 256}}) {
        CAPTURE(safetensors_dtype_name(c.dtype));
        std::vector<std::pair<std::string, Tensor>> tensors;
        for (size_t i = 0; i < shapes.size(); ++i)
            tensors.emplace_back("layer." + std::to_string(i) + ".w", random_tensor(shapes[i], 3.0f));
        write_safetensors(dir / "w.safetensors", tensors, c.dtype);
        SafetensorsFile file(dir / "w.safetensors");
        CHECK(file.names().size() == tensors.size());
        for (const auto& [name, original] : tensors) {
            CHECK(file.contains(name));
            CHECK(file.shape(name) == original.shape);
            CHECK(file.entry(name).dtype == c.dtype);
            const Tensor back = file.load(name);
            REQUIRE(back.shape == original.shape);
            for (size_t k = 0; k < back.data.size(); ++k)
                CHECK(std::fabs(back.data[k] - original.data[k]) <= c.relative * std::fabs(original.data[k]) + 1e-30);
        }
        CHECK_FALSE(file.contains("absent"));
        CHECK_THROWS_AS(file.load("absent"), Error);
    }
}

TEST_CASE("F16 and BF16 conversions round to nearest even and keep specials") {
    std::uniform_real_distribution<float> exponent(-30.0f, 17.0f);
    std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
    for (int i = 0; i < 20000; ++i) {
        const float x = (i % 2 ? -1.0f : 1.0f) * mantissa(rng()) * std::exp2(exponent(rng()));
        if (std::fabs(x) < 65504.0f) check_round_to_nearest_even(x, float_to_f16, f16_to_float);
        check_round_to_nearest_even(x, float_to_bf16, bf16_to_float);
    }
    // Exact ties between two halves: 1 + 2^-11 lies between 1 and 1 + 2^-10.
    CHECK(float_to_f16(1.0f + std::exp2(-11.0f)) == 0x3c00);
    CHECK(float_to_f16(1.0f + 3 * std::exp2(-11.0f)) == 0x3c02);
    CHECK(float_to_bf16(1.0f + std::exp2(-8.0f)) == 0x3f80);
    CHECK(f16_to_float(0x0001) == std::exp2(-24.0f));  // smallest subnormal
    CHECK(float_to_f16(std::exp2(-24.0f)) == 0x0001);
    CHECK(float_to_f16(70000.0f) == 0x7c00);
    CHECK(float_to_f16(-65504.0f) == 0xfbff);
    CHECK(std::isinf(f16_to_float(float_to_f16(INFINITY))));
    CHECK(std::isnan(f16_to_float(float_to_f16(NAN))));
    CHECK(std::isnan(bf16_to_float(float_to_bf16(NAN))));
    CHECK(std::signbit(f16_to_float(float_to_f16(-0.0f))));
}

TEST_CASE("safetensors reads metadata and refuses to convert integer tensors") {
    ScratchDir dir;
    const std::string header =
        R"({"__metadata__":{"format":"pt"},"ids":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})";
    write_text(dir / "ids.safetensors", safetensors_bytes(header, 8));
    SafetensorsFile file(dir / "ids.safetensors");
    CHECK(file.metadata().at("format") == "pt");
    CHECK(file.names() == std::vector<std::string>{"ids"});
    expect_error(ErrorKind::bad_input, [&] { file.load("ids"); }, {"'ids'", "I32"});
    expect_error(ErrorKind::bad_input, [&] { check_of_shape(file, "ids", {2}); }, {"'ids'", "I32"});
}

TEST_CASE("safetensors rejects hostile headers before allocating") {
    ScratchDir dir;
    const auto one = [](const std::string& dtype, const std::string& shape, const std::string& offsets) {
        return R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
    };
    expect_rejected(dir, safetensors_bytes(one("F32", "[2]", "[0,8]"), 4), "past the data buffer");
    expect_rejected(dir,
                    safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                      12),
                    "overlaps");
    expect_rejected(dir, safetensors_bytes(one("F32", "[3]", "[0,8]"), 8), "needs 12 bytes");
    expect_rejected(dir, safetensors_bytes(one("F32", "[1099511627776,1099511627776]", "[0,8]"), 8), "absurdly large");
    expect_rejected(dir, safetensors_bytes(one("F32", "[65536,65536,65536,65536]", "[0,8]"), 8), "absurdly large");
    expect_rejected(dir, safetensors_bytes(one("F32", "[-2]", "[0,8]"), 8), "non-negative");
    expect_rejected(dir, safetensors_bytes(one("F32", "[2]", "[8,0]"), 8), "begin after they end");
    expect_rejected(dir, safetensors_bytes(one("F32", "[2]", "[0]"), 8), "data_offsets");
    expect_rejected(dir, safetensors_bytes(one("F17", "[2]", "[0,8]"), 8), "unknown dtype \"F17\"");
    expect_rejected(dir, safetensors_bytes(one("F32", "[2]", "[0,8]"), 8, 1000), "exceeds the file");
    expect_rejected(dir, safetensors_bytes(one("F32", "[2]", "[0,8]"), 8, uint64_t{1} << 62), "absurd");
    expect_rejected(dir, safetensors_bytes("{\"t\": {\"dtype\": \"F32\", ", 8), "not valid JSON");
    // One tensor named twice (a JSON parser keeps the last silently), even with the same entry.
    expect_rejected(dir,
                    safetensors_bytes(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                      R"("t":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                      8),
                    "safetensors header: tensor \"t\" appears twice");
    expect_rejected(dir,
                    safetensors_bytes(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                      R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
                                      8),
                    "appears twice");
    expect_rejected(dir, safetensors_bytes("[1, 2, 3]", 8), "not a JSON object");
    expect_rejected(dir, safetensors_bytes(R"({"t": 5})", 8), "not an object");
    expect_rejected(dir, std::string("\x05\x00\x00", 3), "too short");
    // A well-formed file cut short: the last tensor's bytes run past the end.
    write_safetensors(dir / "ok.safetensors", {{"a", random_tensor({4, 4})}, {"b", random_tensor({3})}});
    const std::string good = read_text(dir / "ok.safetensors");
    expect_rejected(dir, good.substr(0, good.size() - 3), "past the data buffer");
    expect_rejected(dir, good.substr(0, 20), "exceeds the file");
    CHECK_THROWS_AS(SafetensorsFile(dir / "missing.safetensors"), Error);
}

}  // TEST_SUITE("formats")
