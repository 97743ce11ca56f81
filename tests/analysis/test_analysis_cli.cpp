// The analysis commands end to end: `attn-viz synth` (and running its output) and `attn-viz merge`.
#include <algorithm>
#include <filesystem>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "corpus_stats.hpp"
#include "synth_layer.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A partial result over `count` random runs (random sequence fingerprints) of two layers x two
// heads whose weights have the fingerprint `weights`.
void write_partial(const std::string& path, int count, uint64_t weights = 1) {
    CorpusAccumulator acc(weights, LabelThresholds{});
    for (int n = 0; n < count; ++n) {
        const LayerResult a = analysis_fixtures::random_layer({2, 6, 6, 3, true, 0.0});
        const LayerResult b = analysis_fixtures::random_layer({2, 6, 6, 3, true, 0.0});
        acc.add(
            analyze_model({&a, &b}, {}, analysis_fixtures::random_tokens(6, 3), analysis_fixtures::default_options()),
            rng()());
    }
    acc.save_partial(path);
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("attn-viz synth writes a layer that attn-viz run accepts") {
    ScratchDir dir;
    CommandResult r = run_attn_viz("synth --out " + (dir / "demo") + " --seed 3");
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("previous-token") != std::string::npos);
    CHECK(std::filesystem::exists(dir / "demo/weights.json"));
    r = run_attn_viz("synth --out " + (dir / "short") + " --tokens 'a b a c' -q");
    CHECK(r.exit_code == 0);
    CHECK(r.output.empty());
    const auto input = nlohmann::json::parse(read_text(dir / "short/input.json"));
    CHECK(input["tokens"] == nlohmann::json({"a", "b", "a", "c"}));
    r = run_attn_viz("run --weights " + (dir / "demo/weights.json") + " --input " + (dir / "demo/input.json") +
                     " --out " + (dir / "run") + " -q");
    CHECK(r.exit_code == 0);
    CHECK(run_attn_viz("synth --out " + (dir / "bad") + " --tokens one").exit_code == 2);
    CHECK(run_attn_viz("synth").exit_code == 2);
}

TEST_CASE("attn-viz merge combines partial files into stats.json and CSV tables") {
    ScratchDir dir;
    write_partial(dir / "a.json", 3);
    write_partial(dir / "b.json", 4);
    CommandResult r = run_attn_viz("merge " + (dir / "a.json") + " " + (dir / "b.json") + " --out " + (dir / "out") +
                                   " --threshold redundancy_js=0.5 --save-partial " + (dir / "all.json"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("merged 7 sequences") != std::string::npos);
    const auto stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["format"] == "attn-viz/stats@1");
    CHECK(stats["num_sequences"] == 7);
    CHECK(stats["heads"].size() == 4);
    CHECK(stats["heads"][3]["std"].contains("entropy"));
    CHECK(stats["correlation_std"].size() == 4);
    CHECK(stats["thresholds"]["redundancy_js"] == 0.5);
    const std::string heads = read_text(dir / "out/heads.csv"), pairs = read_text(dir / "out/pairs.csv");
    CHECK(heads.substr(0, heads.find('\n')).find(",punctuation_mass,entropy_std,") != std::string::npos);
    CHECK(std::count(heads.begin(), heads.end(), '\n') == 5);  // header + 4 heads
    CHECK(pairs.substr(0, pairs.find('\n')).find("choice_mi,centred_correlation,correlation_std") != std::string::npos);
    CHECK(std::count(pairs.begin(), pairs.end(), '\n') == 7);  // header + 6 pairs
    CHECK(CorpusAccumulator::load_partial(dir / "all.json").num_sequences() == 7);

    // Errors: a hostile partial (3), an unknown threshold (2), no partial (2).
    write_text(dir / "bad.json", "{\"format\": \"attn-viz/partial@1\", \"num_layers\": -1}");
    r = run_attn_viz("merge " + (dir / "bad.json") + " --out " + (dir / "out2"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("bad.json") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "out2"));
    CHECK(run_attn_viz("merge " + (dir / "a.json") + " --out " + (dir / "out3") + " --threshold bogus=1").exit_code ==
          2);
    CHECK(run_attn_viz("merge --out " + (dir / "out4")).exit_code == 2);
}

TEST_CASE(
    "attn-viz merge refuses sequences counted twice and partials of other weights or thresholds, naming both files") {
    ScratchDir dir;
    write_partial(dir / "a.json", 3);
    write_partial(dir / "b.json", 2);
    write_partial(dir / "other_weights.json", 2, 2);
    write_partial(dir / "other_thresholds.json", 2);
    nlohmann::json thresholds = nlohmann::json::parse(read_text(dir / "other_thresholds.json"));
    thresholds["thresholds"]["induction"] = 0.25;
    write_text(dir / "other_thresholds.json", thresholds.dump());
    REQUIRE(run_attn_viz("merge -q " + (dir / "a.json") + " " + (dir / "b.json") + " --out " + (dir / "ab") +
                         " --save-partial " + (dir / "ab.json"))
                .exit_code == 0);
    auto expect_refused = [&](const std::string& first, const std::string& second, const std::string& why) {
        const CommandResult r =
            run_attn_viz("merge " + (dir / first) + " " + (dir / second) + " --out " + (dir / "refused"));
        INFO(r.output);
        CHECK(r.exit_code == 3);
        const std::string prefix = "attn-viz: error: " + (dir / second) + ": ";
        REQUIRE(r.output.find(prefix) == 0);
        CHECK(r.output.find(dir / first, prefix.size()) != std::string::npos);
        CHECK(r.output.find(why) != std::string::npos);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        CHECK(!std::filesystem::exists(dir / "refused"));
    };
    expect_refused("a.json", "a.json", "3 of its 3 sequences are already counted from");
    expect_refused("b.json", "ab.json", "2 of its 5 sequences are already counted from");
    expect_refused("a.json", "other_weights.json", "other weights");
    expect_refused("b.json", "other_thresholds.json", "induction=0.25");

    // A partial of an earlier version (no fingerprints, no thresholds) merges with a warning.
    nlohmann::json old = nlohmann::json::parse(read_text(dir / "a.json"));
    old.erase("fingerprints"), old.erase("thresholds");
    write_text(dir / "old.json", old.dump());
    const CommandResult r = run_attn_viz("merge " + (dir / "old.json") + " " + (dir / "b.json") + " --out " +
                                         (dir / "mixed") + " --save-partial " + (dir / "mixed.json"));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("warning: " + (dir / "old.json") + ": 3 of its 3 sequences have no fingerprint") !=
          std::string::npos);
    CHECK(r.output.find("merged 5 sequences") != std::string::npos);
    const CorpusAccumulator mixed = CorpusAccumulator::load_partial(dir / "mixed.json");
    CHECK(mixed.num_sequences() == 5);
    CHECK(mixed.num_fingerprinted() == 2);
}

}  // TEST_SUITE("analysis")
