#include <algorithm>
#include <filesystem>
#include <set>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "npy.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Nothing but the given names in the scratch folder: no output dir, no staging leftovers.
void check_only(const ScratchDir& dir, std::set<std::string> expected) {
    std::set<std::string> found;
    for (const auto& e : fs::directory_iterator(dir.path())) found.insert(e.path().filename().string());
    CHECK(found == expected);
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("run writes stats.json with a heads list, the dumps, and a table on stdout") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 5);
    CommandResult r = run_attn_viz(layer_fixture_run(dir) + " --dump-attention " + (dir / "a.npy") + " --dump-output " +
                                   (dir / "o.npy"));
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("entropy") != std::string::npos);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["format"] == "attn-viz/stats@1");
    REQUIRE(stats["heads"].size() == 3);
    for (const auto& head : stats["heads"]) {
        CHECK(head["entropy"].get<double>() > 0);
        CHECK(head["normalized_entropy"].get<double>() <= 1.0 + 1e-9);
    }
    REQUIRE(stats["correlation"].size() == 3);
    CHECK(stats["correlation"][1][1].get<double>() == doctest::Approx(1.0));
    CHECK(read_npy(dir / "a.npy").shape == std::vector<int64_t>{3, 5, 5});
    CHECK(read_npy(dir / "o.npy").shape == std::vector<int64_t>{5, 12});
}

TEST_CASE("--quiet prints nothing and --help explains every option") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    CommandResult r = run_attn_viz(layer_fixture_run(dir) + " -q");
    CHECK(r.exit_code == 0);
    CHECK(r.output.empty());
    CommandResult help = run_attn_viz("run --help");
    CHECK(help.exit_code == 0);
    for (const char* option :
         {"--weights", "--input", "--out", "--dump-attention", "--dump-output", "--quiet", "--context"})
        CHECK(help.output.find(option) != std::string::npos);
}

TEST_CASE("usage errors exit 2") {
    CHECK(run_attn_viz("").exit_code == 2);
    CHECK(run_attn_viz("run --weights").exit_code == 2);
    CHECK(run_attn_viz("frobnicate").exit_code == 2);
}

TEST_CASE("bad input files give a one-line error naming the file, exit 3, and leave nothing behind") {
    struct BadCase {
        const char* what;
        std::string weights, input;  // "" = the valid fixture
        const char* message;
    };
    const std::string ok_matrix = "[[1,0],[0,1]]";
    auto layer = [&](const std::string& extra) {
        return "{\"format\":\"attn-viz/weights@1\",\"d_model\":2,\"num_heads\":1" + extra + "}";
    };
    const std::string all =
        ",\"W_Q\":" + ok_matrix + ",\"W_K\":" + ok_matrix + ",\"W_V\":" + ok_matrix + ",\"W_O\":" + ok_matrix;
    const BadCase cases[] = {
        {"missing key", layer(",\"W_Q\":" + ok_matrix), "", "missing key \"W_K\""},
        {"D not divisible by H", "{\"format\":\"attn-viz/weights@1\",\"d_model\":5,\"num_heads\":2}", "",
         "not divisible"},
        {"ragged rows", layer(",\"W_Q\":[[1,0],[0]],\"W_K\":[[1,0],[0,1]],\"W_V\":[[1,0],[0,1]],\"W_O\":[[1,0],[0,1]]"),
         "", "row [1] has 1 entries, expected 2"},
        {"wrong row length",
         layer(",\"W_Q\":[[1,0,3],[0,1,2]],\"W_K\":[[1,0],[0,1]],\"W_V\":[[1,0],[0,1]],\"W_O\":[[1,0],[0,1]]"), "",
         "expected 2"},
        {"non-numeric",
         layer(",\"W_Q\":[[1,\"x\"],[0,1]],\"W_K\":[[1,0],[0,1]],\"W_V\":[[1,0],[0,1]],\"W_O\":[[1,0],[0,1]]"), "",
         "W_Q[0, 1] is not a number"},
        {"non-finite",
         layer(",\"W_Q\":[[1,1e39],[0,1]],\"W_K\":[[1,0],[0,1]],\"W_V\":[[1,0],[0,1]],\"W_O\":[[1,0],[0,1]]"), "",
         "not a finite"},
        {"overflowing number", layer(",\"W_Q\":[[1,1e999],[0,1]]"), "", "w.json"},
        {"bad JSON", "{\"format\": ", "", "invalid JSON"},
        {"wrong format", "{\"format\":\"other@2\"}", "", "unsupported format"},
        {"missing npy", layer(",\"W_Q\":{\"npy\":\"nope.npy\"}"), "", "nope.npy"},
        {"input row length", layer(all), "{\"embeddings\":[[1,2],[3]]}", "x.json"},
        {"input tokens count", layer(all), "{\"tokens\":[\"a\"],\"embeddings\":[[1,2],[3,4]]}", "1 tokens for 2"},
        {"input no rows", layer(all), "{\"embeddings\":[]}", "x.json"},
        {"input bad mask", layer(all), "{\"embeddings\":[[1,2]],\"attention_mask\":[7]}", "attention_mask"},
        {"nested 50,000 levels", "{\"format\":" + std::string(50000, '[') + std::string(50000, ']') + "}", "",
         "w.json: JSON nesting deeper than 64 levels"},
    };
    for (const BadCase& c : cases) {
        const std::string what = c.what;
        CAPTURE(what);
        ScratchDir dir;
        write_text(dir / "w.json", c.weights);
        write_text(dir / "x.json", c.input.empty() ? "{\"embeddings\":[[1,2],[3,4]]}" : c.input);
        CommandResult r = run_attn_viz(layer_fixture_run(dir) + " --dump-attention " + (dir / "a.npy"));
        CHECK(r.exit_code == 3);
        CHECK(r.output.find(c.message) != std::string::npos);
        CHECK(r.output.find(c.input.empty() ? "w.json" : "x.json") != std::string::npos);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        check_only(dir, {"w.json", "x.json"});
    }
}

TEST_CASE("truncated and unreadable .npy references are bad input too") {
    ScratchDir dir;
    write_layer_fixture(dir, 4, 2, 3);
    write_npy(dir / "x.npy", random_tensor({3, 4}));
    std::string bytes = read_text(dir / "x.npy");
    write_text(dir / "x.npy", bytes.substr(0, bytes.size() - 5));
    write_text(dir / "xr.json", "{\"embeddings\": {\"npy\": \"x.npy\"}}");
    CommandResult r =
        run_attn_viz("run --weights " + (dir / "w.json") + " --input " + (dir / "xr.json") + " --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("x.npy: truncated") != std::string::npos);
    write_text(dir / "x.npy", "garbage");
    r = run_attn_viz("run --weights " + (dir / "w.json") + " --input " + (dir / "xr.json") + " --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("magic") != std::string::npos);
    CHECK(!fs::exists(dir / "out"));
}

TEST_CASE("an earlier run in --out is kept unless --force replaces it; a foreign non-empty folder needs --force") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string args = layer_fixture_run(dir) + " -q";
    REQUIRE(run_attn_viz(args).exit_code == 0);
    const auto first = snapshot(dir / "out");
    const CommandResult kept = run_attn_viz(args);
    CHECK(kept.exit_code == 2);
    CHECK(kept.output == "attn-viz: error: " + (dir / "out") +
                             ": holds an earlier attn-viz run, which is kept (use --force to replace it)\n");
    CHECK(snapshot(dir / "out") == first);
    REQUIRE(run_attn_viz(args + " --force").exit_code == 0);
    // --json without --out writes nothing, so it needs no --force however often it runs.
    const std::string json = "run --json --weights " + (dir / "w.json") + " --input " + (dir / "x.json");
    CHECK(run_attn_viz(json).exit_code == 0);
    CHECK(run_attn_viz(json).exit_code == 0);
    fs::create_directories(dir / "foreign");
    write_text(dir / "foreign/notes.txt", "mine");
    const std::string foreign =
        "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out " + (dir / "foreign");
    CommandResult r = run_attn_viz(foreign);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--force") != std::string::npos);
    CHECK(run_attn_viz(foreign + " --force").exit_code == 0);
    CHECK(read_text(dir / "foreign/notes.txt") == "mine");
    CHECK(fs::exists(dir / "foreign/stats.json"));
}

TEST_CASE("a dump path that is an input file is refused") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string before = read_text(dir / "x.json");
    CommandResult r = run_attn_viz(layer_fixture_run(dir) + " --dump-output " + (dir / "x.json"));
    CHECK(r.exit_code == 2);
    CHECK(read_text(dir / "x.json") == before);
}

}  // TEST_SUITE("cli")
