// Findings in words: the planted layer's heads must be found by kind, the identical pair as
// redundant, missing kinds reported with their best candidate, and short inputs said to be too
// short; stats.json carries the same findings.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "attention.hpp"
#include "findings.hpp"
#include "head_clustering.hpp"
#include "onednn_backend.hpp"
#include "stats_report.hpp"
#include "support.hpp"
#include "synth_layer.hpp"
#include "token_ids.hpp"

using namespace attn_viz;

namespace {

ModelAnalysis planted_analysis(const std::vector<std::string>& tokens, bool with_token_ids = true) {
    static OnednnBackend backend;
    const PlantedLayer p = make_planted_layer(tokens, test_support::rng()());
    AttentionLayer layer(backend, p.weights);
    AttentionRequest request;
    request.input = &p.embeddings;
    return analyze_layer(layer.run(request), &p.weights,
                         with_token_ids ? token_ids_from_labels(tokens) : std::vector<int64_t>{},
                         analysis_fixtures::default_options());
}

const Finding& finding(const std::vector<Finding>& findings, const std::string& kind) {
    for (const Finding& f : findings)
        if (f.kind == kind) return f;
    FAIL("no finding of kind " << kind);
    return findings.front();
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("findings name the planted heads by kind and the identical pair as redundant") {
    const ModelAnalysis a = planted_analysis(planted_demo_tokens());
    const std::vector<Finding> findings = find_findings(a);
    const std::vector<std::pair<std::string, std::vector<int64_t>>> planted = {
        {"previous-token", {0}}, {"sink", {1}}, {"diffuse", {2}}, {"self", {3}}};
    for (const auto& [kind, heads] : planted) {
        INFO(kind);
        const Finding& f = finding(findings, kind);
        CHECK(f.found);
        CHECK(f.heads == heads);
        CHECK(f.score > 0.99);
        CHECK(f.sentence.find("L0H" + std::to_string(heads[0])) != std::string::npos);
    }
    const Finding& next = finding(findings, "next-token");
    CHECK(next.found);
    CHECK((next.heads == std::vector<int64_t>{4, 5}));
    CHECK(next.sentence.rfind("next-token heads (next_token_mass >= 0.50): L0H4 (1.00) and L0H5 (1.00)", 0) == 0);
    const Finding& redundant = finding(findings, "redundant");
    CHECK(redundant.found);
    CHECK((redundant.heads == std::vector<int64_t>{4, 5}));
    CHECK(redundant.score < 1e-3);
    CHECK(redundant.threshold == 0.2);
    CHECK(redundant.sentence.find("redundant: L0H4 and L0H5 attend alike and write alike (JS distance at most ") == 0);
    CHECK(redundant.sentence.find("; output cosine at least 1.00, cut 0.90)") != std::string::npos);
    // No planted induction head: the best candidate and the threshold it misses are named. The
    // uniform head (2) puts 1/T on each induction target, more than any sharp head.
    const Finding& induction = finding(findings, "induction");
    CHECK_FALSE(induction.found);
    REQUIRE(induction.heads.size() == 1);
    CHECK(induction.heads[0] == 2);
    CHECK(induction.score == doctest::Approx(a.heads[2].induction));
    CHECK(induction.threshold == 0.4);
    CHECK(induction.sentence == "no induction head: the best is L0H2 with 0.11, threshold 0.40 (induction)");
}

TEST_CASE("findings follow the thresholds, and say when a score cannot be measured") {
    ModelAnalysis a = planted_analysis(planted_demo_tokens(), /*with_token_ids=*/false);
    a.thresholds.previous_token = 1.01;  // out of reach
    const std::vector<Finding> findings = find_findings(a);
    const Finding& previous = finding(findings, "previous-token");
    CHECK_FALSE(previous.found);
    CHECK(previous.heads == std::vector<int64_t>{0});
    CHECK(previous.sentence.rfind("no previous-token head: the best is L0H0 with 1.00, threshold 1.01", 0) == 0);
    for (const char* kind : {"induction", "duplicate-token"}) {
        const Finding& f = finding(findings, kind);
        CHECK_FALSE(f.found);
        CHECK(f.heads.empty());
        CHECK(std::isnan(f.score));
        CHECK(f.sentence.find("undefined for every head") != std::string::npos);
    }
    a.redundant_groups.clear();  // as if the cut were lower: the closest pair is still named
    const std::vector<Finding> without_groups = find_findings(a);
    const Finding& none = finding(without_groups, "redundant");
    CHECK_FALSE(none.found);
    CHECK((none.heads == std::vector<int64_t>{4, 5}));
    CHECK(none.sentence.rfind("no redundant heads: the closest pair is L0H4 and L0H5", 0) == 0);
}

TEST_CASE("inputs shorter than min_tokens_to_label are too short to tell: no head kinds, labels marked as guesses") {
    for (const int64_t T : {int64_t{2}, int64_t{5}, min_tokens_to_label - 1, min_tokens_to_label}) {
        INFO("T=" << T);
        std::vector<std::string> tokens;
        for (int64_t i = 0; i < T; ++i) tokens.push_back(std::string(1, static_cast<char>('a' + i % 3)));
        const ModelAnalysis a = planted_analysis(tokens);
        const std::vector<Finding> findings = find_findings(a);
        const bool short_input = T < min_tokens_to_label;
        CHECK(too_short_to_label(a) == short_input);
        CHECK((findings.front().kind == "too-short") == short_input);
        bool head_kinds = false;
        for (const Finding& f : findings) head_kinds |= f.kind == "sink" || f.kind == "previous-token";
        CHECK(head_kinds != short_input);
        const std::string table = stats_table(a);
        CHECK((table.find(a.labels[0] + "?") != std::string::npos) == short_input);
        if (short_input) CHECK(findings.front().sentence.find("too short to tell") != std::string::npos);
    }
}

TEST_CASE("stats.json holds the findings with heads, scores, thresholds and sentences; the table ends with them") {
    const ModelAnalysis a = planted_analysis(planted_demo_tokens(), /*with_token_ids=*/false);
    const std::vector<Finding> findings = find_findings(a);
    const nlohmann::json stats = stats_json(a);
    REQUIRE(stats.contains("findings"));
    const nlohmann::json& list = stats["findings"];
    REQUIRE(list.size() == findings.size());
    for (size_t n = 0; n < findings.size(); ++n) {
        const nlohmann::json& f = list[n];
        CHECK(f["kind"] == findings[n].kind);
        CHECK(f["found"] == findings[n].found);
        CHECK(f["sentence"] == findings[n].sentence);
        CHECK(f["statistic"] == findings[n].statistic);
        REQUIRE(f["heads"].size() == findings[n].heads.size());
        for (size_t h = 0; h < findings[n].heads.size(); ++h) {
            const HeadId& id = a.head_ids[static_cast<size_t>(findings[n].heads[h])];
            CHECK(f["heads"][h]["layer"] == id.layer);
            CHECK(f["heads"][h]["head"] == id.head);
            CHECK(f["heads"][h]["score"].get<double>() == doctest::Approx(findings[n].scores[h]));
        }
        if (std::isnan(findings[n].score)) CHECK(f["score"].is_null());  // never NaN in JSON
    }
    CHECK(stats["findings"][0]["threshold"] == 0.5);
    const std::string table = stats_table(a);
    const size_t legend = table.find("columns: entropy = ");
    const size_t words = table.find("findings:\n");
    REQUIRE(legend != std::string::npos);
    REQUIRE(words != std::string::npos);
    CHECK(legend < words);
    for (const Finding& f : findings) CHECK(table.find("  " + f.sentence + "\n", words) != std::string::npos);
}

TEST_CASE(
    "a redundant group whose farthest pair lies beyond the cut says so, naming the pair; close groups say at most") {
    ModelAnalysis a = planted_analysis(planted_demo_tokens());
    const double cut = a.thresholds.redundancy_js;
    // Heads 0, 1 and 2 as a chain: 0-1 and 1-2 close, 0-2 beyond the cut, yet their average
    // linkage ((far + near) / 2) is within it, so the three form one group. Random distances
    // keep the test honest about the numbers it prints.
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    for (int trial = 0; trial < 20; ++trial) {
        const double near = 0.02 + 0.06 * draw(test_support::rng());
        const double far = cut + 0.01 + (cut - near - 0.02) * draw(test_support::rng());  // (far + near) / 2 < cut
        HeadMatrix& js = a.matrices[static_cast<size_t>(PairMetric::js_distance)];
        for (int64_t x = 0; x < js.size; ++x)
            for (int64_t y = 0; y < js.size; ++y) js.at(x, y) = x == y ? 0.0 : 0.9;
        js.at(0, 1) = js.at(1, 0) = near;
        js.at(1, 2) = js.at(2, 1) = near;
        js.at(0, 2) = js.at(2, 0) = far;
        js.at(4, 5) = js.at(5, 4) = near / 2;
        a.redundant_groups = cluster_heads(js, cut);
        REQUIRE(a.redundant_groups == std::vector<std::vector<int64_t>>{{0, 1, 2}, {4, 5}});
        std::vector<const Finding*> groups;
        const std::vector<Finding> findings = find_findings(a);
        for (const Finding& f : findings)
            if (f.found && (f.kind == "redundant" || f.kind == "attend-alike")) groups.push_back(&f);
        REQUIRE(groups.size() == 2);
        // The chain's heads (previous-token, sink, diffuse) write differently: they only attend alike.
        const HeadMatrix& cosine = a.matrix(PairMetric::output_cosine);
        const double lowest = std::min({cosine.at(0, 1), cosine.at(0, 2), cosine.at(1, 2)});
        REQUIRE(lowest < a.thresholds.redundancy_output_cosine);
        char mean[16], largest[16], close[16], cut_text[16], lowest_text[16];
        std::snprintf(mean, sizeof mean, "%.2f", (2 * near + far) / 3);
        std::snprintf(largest, sizeof largest, "%.2f", far);
        std::snprintf(close, sizeof close, near / 2 >= 0.01 ? "%.2f" : "%.3g", near / 2);
        std::snprintf(cut_text, sizeof cut_text, "%.2f", cut);
        std::snprintf(lowest_text, sizeof lowest_text, std::abs(lowest) >= 0.01 ? "%.2f" : "%.3g", lowest);
        INFO(groups[0]->sentence);
        CHECK(groups[0]->kind == "attend-alike");
        CHECK(groups[0]->score == doctest::Approx(far));
        CHECK(groups[0]->sentence == "attend alike: L0H0, L0H1 and L0H2 (mean JS distance " + std::string(mean) +
                                         " within the cut " + cut_text + "; the farthest pair, L0H0 and L0H2, is " +
                                         largest + " apart), but write differently (output cosine " + lowest_text +
                                         ", cut 0.90)");
        CHECK(groups[0]->sentence.find("at most") == std::string::npos);
        CHECK(groups[1]->kind == "redundant");
        CHECK(groups[1]->sentence == "redundant: L0H4 and L0H5 attend alike and write alike (JS distance at most " +
                                         std::string(close) + ", cut " + cut_text +
                                         "; output cosine at least 1.00, cut 0.90)");
    }
    // The same chain writing alike is redundant as a group, though its farthest pair lies beyond
    // the cut: the group is cut on its average distance, the outputs are what is shown.
    HeadMatrix& cosine = a.matrices[static_cast<size_t>(PairMetric::output_cosine)];
    for (const auto& [x, y] : {std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 2}})
        cosine.at(x, y) = cosine.at(y, x) = 0.95;
    const std::vector<Finding> alike = find_findings(a);
    const auto chain = std::find_if(alike.begin(), alike.end(), [](const Finding& f) {
        return f.found && f.heads == std::vector<int64_t>{0, 1, 2};
    });
    REQUIRE(chain != alike.end());
    CHECK(chain->kind == "redundant");
    CHECK(chain->sentence.rfind("redundant: L0H0, L0H1 and L0H2 attend alike and write alike (mean JS distance ", 0) ==
          0);
    CHECK(chain->sentence.ends_with("; output cosine at least 0.95, cut 0.90)"));
}

TEST_CASE("heads that attend alike in different layers are not shown redundant; two sink heads are flagged as such") {
    // Two planted layers of the same patterns with other value and output weights: every head of
    // layer 1 attends as its twin in layer 0 does. No output is compared across layers, so the
    // groups attend alike; the group of the two sink heads says that it is alike through the
    // first token alone. Within layer 0, the twins 4 and 5 still write alike.
    static OnednnBackend backend;
    const std::vector<std::string> tokens = planted_demo_tokens();
    const PlantedLayer p0 = make_planted_layer(tokens, 11), p1 = make_planted_layer(tokens, 12);
    AttentionLayer l0(backend, p0.weights), l1(backend, p1.weights);
    AttentionRequest request;
    request.input = &p0.embeddings;
    const LayerResult r0 = l0.run(request), r1 = l1.run(request);
    const ModelAnalysis a =
        analyze_model({&r0, &r1}, {&p0.weights, &p1.weights}, {}, analysis_fixtures::default_options());
    std::vector<const Finding*> groups;
    const std::vector<Finding> findings = find_findings(a);
    for (const Finding& f : findings)
        if (f.found && (f.kind == "redundant" || f.kind == "attend-alike")) groups.push_back(&f);
    REQUIRE(groups.size() == a.redundant_groups.size());
    bool sinks = false, across = false;
    for (const Finding* f : groups) {
        INFO(f->sentence);
        CHECK(f->kind == "attend-alike");  // every group spans both layers
        if (f->heads == std::vector<int64_t>{1, 7}) {
            sinks = true;
            CHECK(f->sentence.rfind("attend alike: L0H1 and L1H1 (JS distance at most ", 0) == 0);
            CHECK(
                f->sentence.ends_with(", cut 0.20); both are sink heads (first_token_mass at least 1.00, threshold "
                                      "0.50), alike through the first token alone, not duplicates"));
        } else {
            across |= f->sentence.find(
                          "; in different layers, whose outputs are not compared, so not shown "
                          "redundant") != std::string::npos;
        }
    }
    CHECK(sinks);
    CHECK(across);
    const Finding& none = finding(findings, "redundant");
    CHECK_FALSE(none.found);
    CHECK(none.sentence == "no redundant heads: no heads that attend alike are shown to write alike");
    const std::string table = stats_table(a);
    CHECK(table.find("\nattend alike (sink heads): L0H1 L1H1\n") != std::string::npos);
    CHECK(table.find("\nredundant: ") == std::string::npos);
    // Pair by pair: the cross-layer twins attend alike, only the same-layer twins are redundant.
    CHECK(pair_evidence(a, 1, 7).both_sinks);
    CHECK_FALSE(pair_evidence(a, 1, 7).redundant);
    CHECK(pair_evidence(a, 0, 6).attend_alike);
    CHECK_FALSE(pair_evidence(a, 0, 6).same_layer);
    CHECK(std::isnan(pair_evidence(a, 0, 6).output_cosine));
    CHECK_FALSE(pair_evidence(a, 0, 6).redundant);
    CHECK(pair_evidence(a, 4, 5).redundant);
    const nlohmann::json stats = stats_json(a);  // held: a range-for over a temporary's member dangles
    for (const auto& pair : stats["redundant_pairs"])
        if (pair["a"]["layer"] != pair["b"]["layer"]) CHECK(pair["redundant"] == false);
}

TEST_CASE("heads that attend alike in one layer without an output cosine are not shown redundant") {
    ModelAnalysis a = planted_analysis(planted_demo_tokens());
    HeadMatrix& cosine = a.matrices[static_cast<size_t>(PairMetric::output_cosine)];
    cosine.at(4, 5) = cosine.at(5, 4) = NAN;  // as for a layer run without its output weights
    const std::vector<Finding> findings = find_findings(a);
    const Finding& twins = finding(findings, "attend-alike");
    CHECK(twins.heads == std::vector<int64_t>{4, 5});
    CHECK(twins.sentence.find("; their outputs were not compared, so not shown redundant") != std::string::npos);
    // Two sink heads in one layer, writing alike: still not offered as duplicates.
    ModelAnalysis sinks = planted_analysis(planted_demo_tokens());
    sinks.heads[4].first_token_mass = sinks.heads[5].first_token_mass = 0.8;
    CHECK(pair_evidence(sinks, 4, 5).both_sinks);
    CHECK_FALSE(pair_evidence(sinks, 4, 5).redundant);
    const std::string sentence = finding(find_findings(sinks), "attend-alike").sentence;
    CHECK(sentence.rfind("attend alike: L0H4 and L0H5 (", 0) == 0);
    CHECK(sentence.find("; both are sink heads (first_token_mass at least 0.80, threshold 0.50)") != std::string::npos);
    CHECK(stats_table(sinks).find("\nattend alike (sink heads): L0H4 L0H5\n") != std::string::npos);
    // A lower cut on the output cosine is a threshold like the others.
    set_threshold(sinks.thresholds, "redundancy_output_cosine=0.5");
    CHECK(sinks.thresholds.redundancy_output_cosine == 0.5);
}

TEST_CASE("on an input too short to tell, redundant groups are stated as guesses, as the labels are") {
    std::vector<std::string> tokens = {"a", "b", "c", "a", "b"};
    const ModelAnalysis a = planted_analysis(tokens);
    REQUIRE(too_short_to_label(a));
    REQUIRE_FALSE(a.redundant_groups.empty());  // the planted twins 4 and 5 are alike at any length
    const std::vector<Finding> findings = find_findings(a);
    CHECK(findings.front().sentence.find("the labels and redundant groups are guesses") != std::string::npos);
    for (const Finding& f : findings)
        if (f.kind == "redundant")
            CHECK(f.sentence.find("(a guess: the input is too short to tell)") != std::string::npos);
    const std::string table = stats_table(a);
    CHECK(table.find("\nredundant (a guess): ") != std::string::npos);
    CHECK(table.find("\nredundant: ") == std::string::npos);
}

TEST_CASE("a mixed head is named with the pattern it comes nearest to and its score, in the findings and stats.json") {
    ModelAnalysis a = planted_analysis(planted_demo_tokens());
    std::uniform_real_distribution<double> below(0.05, 0.45);
    for (int trial = 0; trial < 20; ++trial) {
        // Head 2 becomes mixed: every rule misses; its previous-token mass is the nearest (of 0.5).
        HeadStats& s = a.heads[2];
        s.induction = 0.001, s.self_mass = 0.002, s.next_token_mass = 0.0, s.normalized_entropy = 0.01;
        s.previous_token_mass = below(test_support::rng());
        s.first_token_mass = s.previous_token_mass * 0.9;  // near, but a smaller fraction of the same 0.5
        s.mean_distance = 50.0;                            // local needs <= 2: 2/50 of the way
        REQUIRE(label_head(s, a.thresholds) == "mixed");
        a.labels[2] = "mixed";
        const NearestPattern p = nearest_pattern(s, a.thresholds);
        CHECK(std::string(p.label) == "previous-token");
        CHECK(p.score == s.previous_token_mass);
        CHECK(p.threshold == 0.5);
        const std::vector<Finding> findings = find_findings(a);
        const Finding& mixed = finding(findings, "mixed");
        CHECK(mixed.heads == std::vector<int64_t>{2});
        char score[16];
        std::snprintf(score, sizeof score, "%.2f", s.previous_token_mass);
        CHECK(mixed.sentence ==
              "mixed head (no pattern reaches its threshold): L0H2 nearest previous-token (previous_token_mass " +
                  std::string(score) + ", needs 0.50)");
        const nlohmann::json head = stats_json(a)["heads"][2];
        CHECK(head["nearest_pattern"]["label"] == "previous-token");
        CHECK(head["nearest_pattern"]["score"].get<double>() == doctest::Approx(s.previous_token_mass));
        CHECK_FALSE(stats_json(a)["heads"][0].contains("nearest_pattern"));
    }
    // Local is nearest when the head is almost local and far from every other rule.
    HeadStats s = a.heads[2];
    s.previous_token_mass = s.first_token_mass = 0.05, s.mean_distance = 2.2;
    CHECK(std::string(nearest_pattern(s, a.thresholds).label) == "local");
    // No mixed head: no finding.
    const ModelAnalysis planted = planted_analysis(planted_demo_tokens());
    for (const Finding& f : find_findings(planted)) CHECK(f.kind != "mixed");
}

TEST_CASE("with the sparse-attention error, a finding names the median keys needed and the most demanding head") {
    ModelAnalysis a = planted_analysis(planted_demo_tokens());
    for (const Finding& f : find_findings(a)) CHECK(f.kind != "sparse-error");  // not measured: no finding
    std::uniform_int_distribution<int> keys(1, 12);
    std::vector<double> needed;
    for (HeadStats& s : a.heads) {
        s.keys_needed = keys(test_support::rng()), s.window_needed = keys(test_support::rng());
        needed.push_back(s.keys_needed);
    }
    a.heads[3].keys_needed = 13;  // the most demanding, uniquely
    needed[3] = 13;
    std::vector<double> sorted = needed;
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> windows;
    for (const HeadStats& s : a.heads) windows.push_back(s.window_needed);
    std::sort(windows.begin(), windows.end());
    const std::vector<Finding> findings = find_findings(a);
    const Finding& f = finding(findings, "sparse-error");
    CHECK(f.heads == std::vector<int64_t>{3});
    CHECK(f.score == 13);
    char median[16], window[16];
    std::snprintf(median, sizeof median, "%.4g", sorted[sorted.size() / 2]);
    std::snprintf(window, sizeof window, "%.4g", windows[windows.size() / 2]);
    CHECK(f.sentence == "sparse attention (output error <= 5%): the median head needs its top " + std::string(median) +
                            " of " + std::to_string(a.num_keys) + " keys or a sink + window of " + window +
                            "; the most demanding, L0H3, needs 13");
}

}  // TEST_SUITE("analysis")
