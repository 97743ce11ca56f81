// What a run says and draws (issue 15): findings and a legend after the table, findings in
// stats.json, --vmin/--vmax, layer numbers in titles, the hint for dark long causal maps, and
// short inputs said to be too short to tell.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

using namespace test_support;

namespace {

std::string synth_layer(const ScratchDir& dir, const std::string& tokens) {
    const CommandResult r =
        run_attn_viz("synth -q --out " + (dir / "synth") + (tokens.empty() ? "" : " --tokens \"" + tokens + "\""));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    return " --weights " + (dir / "synth/weights.json") + " --input " + (dir / "synth/input.json");
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("run prints a legend and the findings in words after the table; stats.json holds them") {
    ScratchDir dir;
    const CommandResult r = run_attn_viz("run" + synth_layer(dir, "") + " --out " + (dir / "out") + " --svg 2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const size_t table = r.output.find("layer head label"), legend = r.output.find("\ncolumns: entropy = "),
                 findings = r.output.find("\nfindings:\n");
    REQUIRE(table != std::string::npos);
    REQUIRE(legend != std::string::npos);
    REQUIRE(findings != std::string::npos);
    CHECK(table < legend);
    CHECK(legend < findings);
    for (const char* column : {"entropy", "norm", "conf", "dist", "prev", "next", "self", "first", "keys90", "margin",
                               "share", "dup", "induct"})
        CHECK(r.output.find(column, legend) < findings);
    CHECK(r.output.find("  sink head (first_token_mass >= 0.50): L0H1 (1.00)\n", findings) != std::string::npos);
    CHECK(r.output.find("  next-token heads (next_token_mass >= 0.50): L0H4 (1.00) and L0H5 (1.00)\n", findings) !=
          std::string::npos);
    CHECK(r.output.find("  no induction head: the best is L0H2 with 0.11, threshold 0.40 (induction)\n", findings) !=
          std::string::npos);
    CHECK(r.output.find("  redundant: L0H4 and L0H5 attend alike", findings) != std::string::npos);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    REQUIRE(stats["findings"].is_array());
    std::vector<std::string> kinds;
    for (const auto& f : stats["findings"]) {
        kinds.push_back(f["kind"]);
        CHECK(r.output.find("  " + f["sentence"].get<std::string>() + "\n", findings) != std::string::npos);
    }
    CHECK(kinds == std::vector<std::string>{"previous-token", "next-token", "self", "sink", "induction",
                                            "duplicate-token", "diffuse", "redundant"});
    // run's picture titles name the layer (the SVG carries the same title as the PNG).
    CHECK(read_text(dir / "out/head_02.svg").find("layer 0 head 2 - diffuse") != std::string::npos);
}

TEST_CASE("an input too short to tell says so instead of labelling heads confidently") {
    ScratchDir dir;
    const CommandResult r = run_attn_viz("run" + synth_layer(dir, "a b c d") + " --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("  too short to tell: the input has 4 tokens, labelling heads needs at least 8") !=
          std::string::npos);
    CHECK(r.output.find(" sink? ") != std::string::npos);
    CHECK(r.output.find("sink head (") == std::string::npos);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["findings"][0]["kind"] == "too-short");
    CHECK(stats["findings"][0]["threshold"] == 8);
}

TEST_CASE("--vmin and --vmax take finite numbers, bottom below top") {
    ScratchDir dir;
    const std::string layer = synth_layer(dir, "");
    const CommandResult ok = run_attn_viz("run -q" + layer + " --out " + (dir / "ok") + " --vmin 0 --vmax 0.25");
    CHECK_MESSAGE(ok.exit_code == 0, ok.output);
    const CommandResult only_top =
        run_attn_viz("run -q" + layer + " --out " + (dir / "top") + " --vmax 0.5 --scale head");
    CHECK_MESSAGE(only_top.exit_code == 0, only_top.output);
    const CommandResult equal = run_attn_viz("run -q" + layer + " --out " + (dir / "bad") + " --vmin 0.5 --vmax 0.5");
    CHECK(equal.exit_code == 2);
    CHECK(equal.output.find("--vmin 0.5 must be below --vmax 0.5") != std::string::npos);
    const CommandResult words = run_attn_viz("run -q" + layer + " --out " + (dir / "bad") + " --vmax lots");
    CHECK(words.exit_code == 2);
    CHECK(words.output.find("--vmax 'lots': expected a finite number") != std::string::npos);
    CHECK(run_attn_viz("run -q" + layer + " --out " + (dir / "bad") + " --vmin nan").exit_code == 2);
}

TEST_CASE("long causal maps that come out dark get a hint naming --log-scale, and only then") {
    ScratchDir dir;
    std::string words;
    for (int i = 0; i < 64; ++i) words += (i ? " w" : "w") + std::to_string(i);
    const std::string layer = synth_layer(dir, words);
    // Causal, the uniform head (2) spreads row i over i + 1 keys: most rows stay below a tenth.
    const CommandResult dark = run_attn_viz("run" + layer + " --causal --out " + (dir / "dark"));
    REQUIRE_MESSAGE(dark.exit_code == 0, dark.output);
    CHECK(dark.output.find("hint: 1 of 6 maps are mostly dark") != std::string::npos);
    CHECK(dark.output.find("--log-scale shows their structure") != std::string::npos);
    const CommandResult log = run_attn_viz("run" + layer + " --causal --log-scale --out " + (dir / "log"));
    REQUIRE_MESSAGE(log.exit_code == 0, log.output);
    CHECK(log.output.find("hint:") == std::string::npos);
    const CommandResult bidirectional = run_attn_viz("run" + layer + " --out " + (dir / "plain"));
    REQUIRE_MESSAGE(bidirectional.exit_code == 0, bidirectional.output);
    CHECK(bidirectional.output.find("hint:") == std::string::npos);  // 1/64 everywhere: flat on any scale
}

}  // TEST_SUITE("cli")
