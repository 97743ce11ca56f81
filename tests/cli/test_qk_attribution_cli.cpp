// attn-viz model --qk-attribution (with --query-position and --key-position): every head's terms
// in qk_attribution.csv sum to its score, the stats.json entries, pictures, findings and report
// section, on the trained stories260K and on a random GPT-2 folder (LayerNorm, learned
// positions); its refusals, each naming the option (skipped where ../shared is absent).
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Each head's sum of the `term` column of qk_attribution.csv, and its number of rows.
std::map<std::string, std::pair<double, int>> csv_term_sums(const std::string& path) {
    std::istringstream csv(read_text(path));
    std::string line;
    std::getline(csv, line);
    CHECK(line == "head,query_position,key_position,rank,query_component,key_component,term,share");
    std::map<std::string, std::pair<double, int>> sums;
    while (std::getline(csv, line)) {
        // The components are quoted and hold no comma: the term is the 7th field.
        std::vector<std::string> fields;
        std::stringstream row(line);
        for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
        REQUIRE(fields.size() == 8);
        sums[fields[0]].first += std::stod(fields[6]);
        ++sums[fields[0]].second;
    }
    return sums;
}

// The run's qk_attribution entries checked: each head's CSV terms sum to its score, its
// positions are the asked ones, its picture exists.
void check_entries(const fs::path& out, const std::vector<std::string>& heads, int64_t query, int64_t key) {
    const nlohmann::json stats = nlohmann::json::parse(read_text(out / "stats.json"));
    REQUIRE(stats.contains("qk_attribution"));
    const nlohmann::json& entries = stats["qk_attribution"];
    REQUIRE(entries.size() == heads.size());
    const auto sums = csv_term_sums(out / "qk_attribution.csv");
    for (size_t n = 0; n < heads.size(); ++n) {
        const nlohmann::json& e = entries[n];
        INFO(heads[n]);
        CHECK(e["name"] == heads[n]);
        if (query >= 0) CHECK(e["query_position"] == query);
        if (key >= 0) CHECK(e["key_position"] == key);
        const double score = e["score"].get<double>();
        CHECK(std::abs(e["term_sum"].get<double>() - score) <= 1e-9 * std::max(1.0, std::abs(score)));
        // The CSV's terms are printed to 17 digits: their sum is the score to rounding.
        CHECK(std::abs(sums.at(heads[n]).first - score) <= 1e-6 * std::max(1.0, std::abs(score)));
        CHECK(sums.at(heads[n]).second == static_cast<int>(e["query_totals"].size() * e["key_totals"].size()));
        CHECK(fs::is_regular_file(out / ("qk_attribution_" + heads[n] + ".png")));
        CHECK(e["finding"].get<std::string>().find(heads[n] + " attends from") == 0);
    }
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --qk-attribution on stories260K: the induction head's terms, positions by default and given") {
    if (model.empty()) return;
    const std::string run = "model --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                            "/tok512.bin --text \"Lily saw a red ball. Lily saw a red\" --html --out ";
    CommandResult r = run_attn_viz(run + (dir / "a") + " --qk-attribution L4H4,L1H3");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    check_entries(dir / "a", {"L4H4", "L1H3"}, -1, -1);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "a/stats.json"));
    // By default: the last token, and the key the head attends to most from it.
    const nlohmann::json& induction = stats["qk_attribution"][0];
    CHECK(induction["query_position"] == stats["tokens"].size() - 1);
    CHECK(induction["attention"].get<double>() > 0.5);
    CHECK(r.output.find(induction["finding"].get<std::string>()) != std::string::npos);
    // The induction head reads the previous-token heads at its key: together they give the
    // largest key-side part, more than any single other component (docs/circuits.md).
    REQUIRE(!induction["previous_token_heads"].empty());
    const double previous = induction["previous_token_total"].get<double>();
    CHECK(previous > 0);
    for (const nlohmann::json& total : induction["key_totals"]) {
        const std::string name = total["component"];
        bool is_previous = false;
        for (const nlohmann::json& head : induction["previous_token_heads"]) is_previous = is_previous || head == name;
        if (!is_previous) CHECK_MESSAGE(std::abs(total["total"].get<double>()) < previous, name);
    }
    CHECK(induction["finding"].get<std::string>().find("more than any other component: an induction circuit") !=
          std::string::npos);
    CHECK(read_text(dir / "a/report.html").find("<section class=\"analysis\" id=\"qk_attribution\">") !=
          std::string::npos);

    r = run_attn_viz(run + (dir / "b") + " -q --qk-attribution L3H5 --query-position 9 --key-position 2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    check_entries(dir / "b", {"L3H5"}, 9, 2);

    // Refusals: each names its option, exits 2 and writes nothing.
    const std::pair<std::string, std::string> refusals[] = {
        {" --qk-attribution L5H0", "--qk-attribution: "},
        {" --qk-attribution L1H1,L1H1", "--qk-attribution: "},
        {" --qk-attribution L1H1 --query-position 40",
         "--qk-attribution: query position 40 is outside the input's 14 tokens (0..13)"},
        {" --qk-attribution L1H1 --query-position 3 --key-position 7", "key position 7 is after query position 3"},
        {" --key-position 2", "--key-position requires --qk-attribution"},
        {" --qk-attribution L1H1 --stream-layers", "--stream-layers writes each layer's report before the next"},
    };
    for (const auto& [extra, message] : refusals) {
        INFO(extra);
        r = run_attn_viz(run + (dir / "bad") + " -q" + extra);
        CHECK(r.exit_code == 2);
        CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
        CHECK(!fs::exists(dir / "bad"));
    }
    r = run_attn_viz("model -q --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                     "/tok512.bin --inputs " + (dir / "a/stats.json") + " --qk-attribution L1H1 --out " +
                     (dir / "bad"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--qk-attribution: not implemented over a corpus yet") != std::string::npos);
}

TEST_CASE("model --qk-attribution on a GPT-2 folder sums; a BERT folder is refused by name") {
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_transformer.py",
                          "--model-type gpt2 --d-model 24 --heads 4 --layers 3 --ffn 37 --vocab 270 --tokens 9 "
                          "--tokenizer");
    CommandResult r = run_attn_viz("model -q --model " + dir.path().string() + " --tokens 5,17,3,99,4,17,3 --out " +
                                   (dir / "out") + " --qk-attribution L2H0-3,L1H2 --query-position 5");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    check_entries(dir / "out", {"L2H0", "L2H1", "L2H2", "L2H3", "L1H2"}, 5, -1);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    bool position_part = false;  // GPT-2's learned positions are a component of their own
    for (const nlohmann::json& total : stats["qk_attribution"][0]["key_totals"])
        position_part = position_part || total["component"] == "pos_embed";
    CHECK(position_part);

    ScratchDir bert;
    make_reference_folder(bert, "reference_hf_transformer.py",
                          "--model-type bert --d-model 18 --heads 3 --layers 2 --ffn 20 --vocab 70 --tokens 5 "
                          "--tokenizer");
    r = run_attn_viz("model -q --model " + bert.path().string() + " --tokens 2,5,6,3 --out " + (bert / "out") +
                     " --qk-attribution L1H0");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--qk-attribution: this model's attention scores do not split into per-component terms: ") !=
          std::string::npos);
    CHECK(!fs::exists(bert / "out"));
}

}  // TEST_SUITE("model")
