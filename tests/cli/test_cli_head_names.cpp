// One head notation on the command line (L1H3 in any case, or 1:3; messages print L1H3), and run
// --layer N naming its heads LN (the model case is skipped with a message where ../shared is
// absent; model --ablate's notation is tested with its other outputs in test_model_ablation_cli).
#include <cstdio>
#include <filesystem>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// An input of T random rows of D numbers with tokens w0, w1, ... as DIR/x.json.
void write_input(const ScratchDir& dir, int64_t T, int64_t D) {
    write_text(dir / "x.json", random_sequence_line(T, D));
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("--svg takes L0H2, l0h2, 0:2 and 2 for the same head; a bad head is refused in LxHy") {
    ScratchDir dir;
    write_layer_fixture(dir, 16, 4, 9);
    const std::string run = "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out ";
    std::set<std::string> pictures;
    int runs = 0;
    for (const std::string head : {"L0H2", "l0h2", "L0h2", "0:2", "2"}) {
        INFO(head);
        const std::string out = dir / ("out_" + std::to_string(runs++));
        const CommandResult r = run_attn_viz(run + out + " --svg " + head);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        pictures.insert(read_text(out + "/head_02.svg"));
    }
    CHECK(pictures.size() == 1);
    const CommandResult bad = run_attn_viz(run + (dir / "bad") + " --svg L0H7");
    CHECK(bad.exit_code == 2);
    CHECK(bad.output == "attn-viz: error: svg head L0H7 is out of range: the layer has 4 heads\n");
    CHECK_FALSE(fs::exists(dir / "bad"));
}

TEST_CASE("compare --fail-above names the failing heads as LxHy, with the layer compared") {
    ScratchDir dir;
    write_layer_fixture(dir, 16, 4, 9);
    write_weights_file(dir / "b.json", random_layer(16, 4, 4, false, true));
    const CommandResult r = run_attn_viz("compare -q " + (dir / "w.json") + " " + (dir / "b.json") + " --input " +
                                         (dir / "x.json") + " --fail-above 0");
    CHECK(r.exit_code == 1);
    for (int h = 0; h < 4; ++h)
        CHECK(r.output.find("attn-viz: L0H" + std::to_string(h) + ": js_distance ") != std::string::npos);
    CHECK(r.output.find("head ") == std::string::npos);
}

}  // TEST_SUITE("cli")

TEST_SUITE("model") {

TEST_CASE("run --layer N names its heads LN in the table, the findings and stats.json, and --svg LNHx draws them") {
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (hf.empty()) return;
    ScratchDir dir;
    write_input(dir, 12, 64);
    const std::string run =
        "run --weights " + hf + "/model.safetensors --layout llama --layer 3 --input " + (dir / "x.json");
    const CommandResult r = run_attn_viz(run + " --out " + (dir / "out") + " --svg L3H5");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    REQUIRE(stats["heads"].size() == 8);
    for (const auto& head : stats["heads"]) CHECK(head["layer"] == 3);
    for (const auto& finding : stats["findings"])
        for (const auto& head : finding["heads"]) CHECK(head["layer"] == 3);
    // Table rows start with the layer number; findings name L3Hx and never L0Hx.
    for (int h = 0; h < 8; ++h) {
        char row[32];
        std::snprintf(row, sizeof row, "\n    3    %d ", h);
        CHECK(r.output.find(row) != std::string::npos);
    }
    CHECK(r.output.find("L0H") == std::string::npos);
    CHECK(r.output.find("L3H") != std::string::npos);
    CHECK(fs::exists(dir / "out/head_05.svg"));
    const CommandResult other = run_attn_viz(run + " --out " + (dir / "other") + " --svg 2:5");
    CHECK(other.exit_code == 2);
    CHECK(other.output == "attn-viz: error: --svg '2:5': L2H5 is not drawn: run draws layer 3 only\n");
}

}  // TEST_SUITE("model")
