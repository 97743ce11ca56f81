// attn-viz model's circuit analyses over a corpus of stories260K sequences (--inputs):
// --logit-attribution aggregated over every attributed position (checked against the
// per-sequence runs averaged here), through partials (--shard, --save-partial, merge equal to one
// run), --composition written as in a single run, and activation patching over pairs of a clean
// and a corrupted corpus (--patch-from-inputs) against the per-pair runs averaged here, merged
// from shards, with the corpora's mismatches refused (skipped with a message where ../shared is
// absent).
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

const std::vector<std::vector<int>> sequences = {
    {1, 403, 407, 261, 300, 290}, {1, 290, 403, 407}, {1, 300, 261, 290, 403, 407, 261, 300}};

std::string model_files(const std::string& model) {
    return " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin";
}

// Shard 1/2 of DIR/c.jsonl run with `files` alone (DIR/n1.json) does not merge with the partial
// DIR/p0.json of a run with `what`.
void check_merge_refused_without(const std::string& files, const ScratchDir& dir, const std::string& what) {
    REQUIRE(run_attn_viz("model -q" + files + " --inputs " + (dir / "c.jsonl") + " --shard 1/2 --save-partial " +
                         (dir / "n1.json") + " --stats-only --out " + (dir / "n1"))
                .exit_code == 0);
    const CommandResult without =
        run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "n1.json") + " --out " + (dir / "bad"));
    CHECK(without.exit_code == 3);
    CHECK_MESSAGE(without.output.find("partials with and without " + what + " cannot be merged") != std::string::npos,
                  without.output);
}

// component "head" of layer l, head h -> l * 8 + h; of a layer's sum ("heads") or feed-forward
// ("mlp") of layer l -> 1000 * (1 + kind) + l.
int component_key(const std::string& component, int layer, int head) {
    if (component == "head") return layer * 8 + head;
    return 1000 * (component == "heads" ? 1 : 2) + layer;
}

// Mean and population std of values, as the corpus run reports them.
struct Moments {
    double sum = 0, squares = 0;
    int count = 0;
    void add(double x) { sum += x, squares += x * x, ++count; }
    double mean() const { return sum / count; }
    double std() const { return std::sqrt(std::max(0.0, squares / count - mean() * mean())); }
};

// The rows of a CSV file after its header, as fields.
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line)) {
        std::vector<std::string> f;
        std::istringstream fields(line);
        for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
        rows.push_back(std::move(f));
    }
    return rows;
}

// Each single run's logit_attribution.csv (position, target_id, component, layer, head,
// contribution) at the positions before the last (those with a next token): per component key.
void add_single_run(std::map<int, Moments>& moments, const std::string& csv, int positions) {
    std::map<std::pair<int, int>, double> layer_sums;  // (position, layer) -> the heads' sum
    for (const std::vector<std::string>& f : csv_rows(csv)) {
        const int position = std::stoi(f[0]);
        if (position >= positions || (f[2] != "head" && f[2] != "mlp")) continue;
        const double value = std::stod(f[5]);
        moments[component_key(f[2], std::stoi(f[3]), f[2] == "head" ? std::stoi(f[4]) : 0)].add(value);
        if (f[2] == "head") layer_sums[{position, std::stoi(f[3])}] += value;
    }
    for (const auto& [at, sum] : layer_sums) moments[component_key("heads", at.second, 0)].add(sum);
}

// The corpus run's logit_attribution.csv (component, layer, head, mean, std, count) -> per key.
std::map<int, std::array<double, 3>> corpus_rows(const std::string& csv) {
    std::map<int, std::array<double, 3>> rows;
    for (const std::vector<std::string>& f : csv_rows(csv)) {
        if (f[0] != "head" && f[0] != "heads" && f[0] != "mlp") continue;
        rows[component_key(f[0], std::stoi(f[1]), f[0] == "head" ? std::stoi(f[2]) : 0)] = {
            std::stod(f[3]), std::stod(f[4]), std::stod(f[5])};
    }
    return rows;
}

void check_relative(double actual, double expected) {
    CHECK(std::abs(actual - expected) <= 1e-9 * std::max(1.0, std::abs(expected)));
}

}  // namespace

TEST_SUITE("model") {
TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --inputs --logit-attribution --composition: the per-sequence runs averaged; shards merged equal one run") {
    if (model.empty()) return;
    std::string corpus;
    for (const std::vector<int>& ids : sequences) corpus += "{\"tokens\": [" + id_list(ids) + "]}\n";
    write_text(dir / "c.jsonl", corpus);
    const std::string files = model_files(model);
    const CommandResult r = run_attn_viz("model" + files + " --inputs " + (dir / "c.jsonl") +
                                         " --logit-attribution --composition --out " + (dir / "corpus"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "corpus/stats.json"));
    const nlohmann::json& a = stats["logit_attribution"];
    CHECK(a["target"] == "next token");
    CHECK(a["positions"] == 5 + 3 + 7);
    REQUIRE(a["heads"].size() == 40);
    CHECK(fs::exists(dir / "corpus/logit_attribution_heads.png"));
    REQUIRE(a["findings"].size() == 1);
    CHECK(r.output.find("  " + a["findings"][0].get<std::string>() + "\n") != std::string::npos);

    // Against each sequence run alone, its positions with a next token pooled here.
    std::map<int, Moments> expected;
    for (size_t s = 0; s < sequences.size(); ++s) {
        const std::string out = dir / ("single" + std::to_string(s));
        REQUIRE(run_attn_viz("model -q" + files + " --tokens " + id_list(sequences[s]) +
                             " --logit-attribution --stats-only --out " + out)
                    .exit_code == 0);
        add_single_run(expected, read_text(out + "/logit_attribution.csv"), static_cast<int>(sequences[s].size()) - 1);
    }
    const std::map<int, std::array<double, 3>> rows = corpus_rows(read_text(dir / "corpus/logit_attribution.csv"));
    REQUIRE(rows.size() == 40 + 5 + 5);
    for (const auto& [key, m] : expected) {
        INFO(key);
        REQUIRE(rows.count(key) == 1);
        CHECK(rows.at(key)[2] == m.count);
        check_relative(rows.at(key)[0], m.mean());
        CHECK(std::abs(rows.at(key)[1] - m.std()) <= 1e-7 * std::max(1.0, m.std()));
    }
    for (const auto& head : a["heads"])
        check_relative(head["mean"].get<double>(), rows.at(head["layer"].get<int>() * 8 + head["head"].get<int>())[0]);

    // Composition from the weights: as a single run writes it.
    REQUIRE(run_attn_viz("model -q" + files + " --tokens 1,403 --composition --stats-only --out " + (dir / "weights"))
                .exit_code == 0);
    CHECK(read_text(dir / "corpus/composition.csv") == read_text(dir / "weights/composition.csv"));
    CHECK(stats["composition"] == nlohmann::json::parse(read_text(dir / "weights/stats.json"))["composition"]);

    // Two shards' partials merged: the one run's attribution.
    for (const char* shard : {"0", "1"}) {
        const CommandResult part =
            run_attn_viz("model -q" + files + " --inputs " + (dir / "c.jsonl") + " --logit-attribution --shard " +
                         shard + "/2 --save-partial " + (dir / ("p" + std::string(shard) + ".json")) +
                         " --stats-only --out " + (dir / ("shard" + std::string(shard))));
        REQUIRE_MESSAGE(part.exit_code == 0, part.output);
    }
    const CommandResult merged =
        run_attn_viz("merge " + (dir / "p0.json") + " " + (dir / "p1.json") + " --out " + (dir / "merged"));
    REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
    const nlohmann::json m = nlohmann::json::parse(read_text(dir / "merged/stats.json"))["logit_attribution"];
    CHECK(m["positions"] == a["positions"]);
    REQUIRE(m["heads"].size() == 40);
    const std::map<int, std::array<double, 3>> merged_rows =
        corpus_rows(read_text(dir / "merged/logit_attribution.csv"));
    for (const auto& [key, row] : rows) {
        INFO(key);
        check_relative(merged_rows.at(key)[0], row[0]);
        check_relative(merged_rows.at(key)[1], row[1]);
        CHECK(merged_rows.at(key)[2] == row[2]);
    }

    // Partials of runs with another target, or without attribution, do not merge.
    REQUIRE(run_attn_viz("model -q" + files + " --inputs " + (dir / "c.jsonl") +
                         " --logit-attribution --target 300 --shard 1/2 "
                         "--save-partial " +
                         (dir / "t1.json") + " --stats-only --out " + (dir / "t1"))
                .exit_code == 0);
    const CommandResult other_target =
        run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "t1.json") + " --out " + (dir / "bad"));
    CHECK(other_target.exit_code == 3);
    CHECK(other_target.output.find("partials attributing different targets cannot be merged") != std::string::npos);
    check_merge_refused_without(files, dir, "direct logit attribution");
    const nlohmann::json target = nlohmann::json::parse(read_text(dir / "t1/stats.json"))["logit_attribution"];
    CHECK(target["positions"] == 4);  // shard 1/2 holds the second sequence: every position attributed
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --inputs --patch-from-inputs: every pair patched, the per-pair runs averaged; shards merged; mismatched "
    "corpora refused") {
    if (model.empty()) return;
    // Each corrupted partner: its clean sequence with one token changed.
    std::string clean, corrupted;
    std::vector<std::vector<int>> partners;
    for (const std::vector<int>& ids : sequences) {
        std::vector<int> partner = ids;
        partner[partner.size() / 2] = 268 + static_cast<int>(partners.size());
        partners.push_back(partner);
        clean += "{\"tokens\": [" + id_list(ids) + "]}\n";
        corrupted += "{\"tokens\": [" + id_list(partner) + "]}\n";
    }
    write_text(dir / "c.jsonl", clean);
    write_text(dir / "c2.jsonl", corrupted);
    const std::string files = model_files(model),
                      pairs = " --inputs " + (dir / "c.jsonl") + " --patch-from-inputs " + (dir / "c2.jsonl");
    const CommandResult r = run_attn_viz("model" + files + pairs + " --out " + (dir / "corpus"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json p = nlohmann::json::parse(read_text(dir / "corpus/stats.json"))["activation_patching"];
    CHECK(p["metric"] == "loss");
    CHECK(p["pairs"] == 3);
    REQUIRE(p["heads"].size() == 40);
    CHECK(fs::exists(dir / "corpus/patching_delta.png"));
    CHECK(fs::exists(dir / "corpus/patching_kl.png"));
    REQUIRE(!p["findings"].empty());
    CHECK(p["findings"][0].get<std::string>().rfind("over 3 pairs, activation patching (loss)", 0) == 0);
    CHECK(r.output.find(p["findings"][0].get<std::string>()) != std::string::npos);

    // Against each pair patched alone (patching.csv: rank, index, layer, head, delta, fraction,
    // kl, value), pooled here per head (index).
    std::map<int, Moments> delta, kl;
    Moments clean_loss;
    for (size_t s = 0; s < sequences.size(); ++s) {
        const std::string out = dir / ("single" + std::to_string(s));
        REQUIRE(run_attn_viz("model -q" + files + " --tokens " + id_list(sequences[s]) + " --patch-from-tokens " +
                             id_list(partners[s]) + " --stats-only --out " + out)
                    .exit_code == 0);
        for (const std::vector<std::string>& f : csv_rows(read_text(out + "/patching.csv"))) {
            delta[std::stoi(f[1])].add(std::stod(f[4]));
            kl[std::stoi(f[1])].add(std::stod(f[6]));
        }
        clean_loss.add(
            nlohmann::json::parse(read_text(out + "/stats.json"))["activation_patching"]["clean"].get<double>());
    }
    check_relative(p["clean"]["mean"].get<double>(), clean_loss.mean());
    // The corpus's patching.csv: rank, index, layer, head, delta_mean, delta_std, fraction, kl_mean, kl_std, pairs.
    const std::vector<std::vector<std::string>> rows = csv_rows(read_text(dir / "corpus/patching.csv"));
    REQUIRE(rows.size() == 40);
    for (const std::vector<std::string>& f : rows) {
        const int index = std::stoi(f[1]);
        INFO(index);
        check_relative(std::stod(f[4]), delta[index].mean());
        CHECK(std::abs(std::stod(f[5]) - delta[index].std()) <= 1e-7 * std::max(1.0, delta[index].std()));
        check_relative(std::stod(f[7]), kl[index].mean());
        CHECK(f[9] == "3");
    }
    CHECK(std::abs(std::stod(rows[0][4])) >= std::abs(std::stod(rows[39][4])));  // ranked by |mean change|

    // Two shards merged: the one run's table; a partial without patching does not merge.
    for (const char* shard : {"0", "1"})
        REQUIRE(run_attn_viz("model -q" + files + pairs + " --shard " + shard + "/2 --save-partial " +
                             (dir / ("p" + std::string(shard) + ".json")) + " --stats-only --out " +
                             (dir / ("shard" + std::string(shard))))
                    .exit_code == 0);
    const CommandResult merged =
        run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "p1.json") + " --out " + (dir / "merged"));
    REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
    const std::vector<std::vector<std::string>> merged_rows = csv_rows(read_text(dir / "merged/patching.csv"));
    REQUIRE(merged_rows.size() == rows.size());
    for (size_t k = 0; k < rows.size(); ++k) {
        CHECK(merged_rows[k][1] == rows[k][1]);
        check_relative(std::stod(merged_rows[k][4]), std::stod(rows[k][4]));
        check_relative(std::stod(merged_rows[k][7]), std::stod(rows[k][7]));
    }
    check_merge_refused_without(files, dir, "activation patching");

    // Corpora that do not pair up, and the options of one text in corpus mode, are refused.
    write_text(dir / "short.jsonl", "{\"tokens\": [1, 403]}\n" + corrupted.substr(corrupted.find('\n') + 1));
    write_text(dir / "fewer.jsonl", corrupted.substr(0, corrupted.find('\n') + 1));
    write_text(dir / "more.jsonl", corrupted + "{\"tokens\": [1, 403]}\n");
    const std::vector<std::pair<std::string, std::string>> refused = {
        {" --inputs " + (dir / "c.jsonl") + " --patch-from-inputs " + (dir / "short.jsonl"),
         "short.jsonl:1: 2 tokens, its clean partner " + (dir / "c.jsonl") +
             ":1 6; patching needs the same number of tokens"},
        {" --inputs " + (dir / "c.jsonl") + " --patch-from-inputs " + (dir / "fewer.jsonl"),
         "the corrupted corpus ends before the clean one"},
        {" --inputs " + (dir / "c.jsonl") + " --patch-from-inputs " + (dir / "more.jsonl"),
         "more sequences than the clean one"}};
    for (const auto& [options, message] : refused) {
        const CommandResult bad = run_attn_viz("model -q" + files + options + " --out " + (dir / "bad"));
        CHECK(bad.exit_code == 3);
        CHECK_MESSAGE(bad.output.find(message) != std::string::npos, bad.output);
        CHECK(!fs::exists(dir / "bad"));
    }
    const CommandResult one_text = run_attn_viz("model -q" + files + " --inputs " + (dir / "c.jsonl") +
                                                " --patch-from-tokens 1,2,3 --out " + (dir / "bad"));
    CHECK(one_text.exit_code == 2);
    CHECK(one_text.output.find("over a corpus, give each sequence its partner with --patch-from-inputs") !=
          std::string::npos);
    const CommandResult no_corpus = run_attn_viz("model -q" + files + " --tokens 1,403 --patch-from-inputs " +
                                                 (dir / "c2.jsonl") + " --out " + (dir / "bad"));
    CHECK(no_corpus.exit_code == 2);
    CHECK(no_corpus.output.find("--patch-from-inputs: pairs a corrupted corpus with --inputs") != std::string::npos);
    CHECK(!fs::exists(dir / "bad"));
}
}  // TEST_SUITE("model")
