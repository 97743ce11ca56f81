// Findings in words: the planted layer's heads must be found by kind, the identical pair as
// redundant, missing kinds reported with their best candidate, and short inputs said to be too
// short; stats.json carries the same findings.
#include <doctest/doctest.h>

#include <cmath>

#include "attention.hpp"
#include "findings.hpp"
#include "onednn_backend.hpp"
#include "stats_report.hpp"
#include "support.hpp"
#include "synth_layer.hpp"
#include "token_ids.hpp"

using namespace attn_viz;

namespace {

ModelAnalysis planted_analysis(const std::vector<std::string>& tokens, bool with_token_ids = true) {
    static OnednnBackend backend(2);
    const PlantedLayer p = make_planted_layer(tokens, test_support::rng()());
    AttentionLayer layer(backend, p.weights);
    AttentionRequest request;
    request.input = &p.embeddings;
    return analyze_layer(layer.run(request), &p.weights, with_token_ids ? token_ids_from_labels(tokens) : std::vector<int64_t>{},
                         AnalysisOptions{});
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
    CHECK(redundant.sentence.find("L0H4 and L0H5") != std::string::npos);
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

}
