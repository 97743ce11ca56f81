// compare A B --inputs FILE over two whole models: every measure's mean and std equal those of the
// single compares of each sequence, shards merged equal the single corpus run, merge refuses compare
// partials of another model pair, a mix with corpus partials and a corrupted one; and on
// stories260K (skipped with a message where ../shared/models/stories260K-gguf is absent) a 4-bit
// copy moves more than Q8_0 over a corpus, at the heads and at the output.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Two random llama2.c models of one shape (2 layers of 2 heads, D = 16, 263 tokens) and their
// tokenizer; returns "A B --tokenizer T".
std::string write_model_pair(const ScratchDir& dir) {
    write_small_llama2c_model(dir, "a.bin");
    write_small_llama2c_model(dir, "b.bin");
    return (dir / "a.bin") + " " + (dir / "b.bin") + " --tokenizer " + (dir / "tok.bin");
}

// `count` random sequences of 2 to 12 token ids, as {"tokens": [...]} lines; each also as "1,5,9".
std::vector<std::string> write_token_corpus(const std::string& path, int count) {
    std::vector<std::string> ids;
    std::string corpus;
    for (int n = 0; n < count; ++n) {
        nlohmann::json tokens = nlohmann::json::array();
        std::string list;
        for (uint64_t t = 0, T = 2 + rng()() % 11; t < T; ++t) {
            const int id = static_cast<int>(3 + rng()() % 260);
            tokens.push_back(id);
            if (t > 0) list += ',';
            list += std::to_string(id);
        }
        corpus += nlohmann::json({{"tokens", tokens}}).dump() + "\n";
        ids.push_back(list);
    }
    write_text(path, corpus);
    return ids;
}

bool close(double x, double y) { return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)) + 1e-12; }

// Mean and population std of the defined (non-null) values; both null when none is.
std::pair<nlohmann::json, nlohmann::json> moments(const std::vector<nlohmann::json>& values) {
    std::vector<double> defined;
    for (const nlohmann::json& v : values)
        if (v.is_number()) defined.push_back(v.get<double>());
    if (defined.empty()) return {nullptr, nullptr};
    double mean = 0, m2 = 0;
    for (double x : defined) mean += x;
    mean /= static_cast<double>(defined.size());
    for (double x : defined) m2 += (x - mean) * (x - mean);
    return {mean, std::sqrt(m2 / static_cast<double>(defined.size()))};
}

void check_value(const nlohmann::json& expected, const nlohmann::json& got, const std::string& what) {
    if (expected.is_null()) {
        CHECK_MESSAGE(got.is_null(), what << ": " << got);
        return;
    }
    REQUIRE_MESSAGE(got.is_number(), what << ": " << got);
    CHECK_MESSAGE(close(expected.get<double>(), got.get<double>()),
                  what << ": expected " << expected << ", got " << got);
}

// Every number of `expected` equal (to 1e-9) in `got`, every other value identical; "provenance"
// and "corpora" (which name the run) are left out.
void check_same_document(const nlohmann::json& expected, const nlohmann::json& got, const std::string& where) {
    if (expected.is_number() && got.is_number()) return check_value(expected, got, where);
    if (expected.is_object()) {
        REQUIRE_MESSAGE(got.is_object(), where);
        for (const auto& [key, value] : expected.items())
            if (key != "provenance" && key != "corpora") check_same_document(value, got.at(key), where + "." + key);
        return;
    }
    if (expected.is_array()) {
        REQUIRE_MESSAGE((got.is_array() && got.size() == expected.size()), where);
        for (size_t k = 0; k < expected.size(); ++k)
            check_same_document(expected[k], got[k], where + "[" + std::to_string(k) + "]");
        return;
    }
    CHECK_MESSAGE(expected == got, where << ": " << expected << " vs " << got);
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "compare --inputs: each measure's mean and std over the corpus are those of the single compares of its sequences") {
    ScratchDir dir;
    const std::string models = write_model_pair(dir);
    const std::vector<std::string> sequences = write_token_corpus(dir / "c.jsonl", 5);
    const CommandResult r =
        run_attn_viz("compare " + models + " --inputs " + (dir / "c.jsonl") + " --out " + (dir / "corpus"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("summary: 4 heads compared") != std::string::npos);
    CHECK(r.output.find("output over 5 sequences: mean KL(A || B)") != std::string::npos);
    CHECK(r.output.find("5 sequences from " + (dir / "c.jsonl")) != std::string::npos);
    std::vector<nlohmann::json> singles;
    for (size_t n = 0; n < sequences.size(); ++n) {
        const std::string out = dir / ("single" + std::to_string(n));
        const CommandResult s = run_attn_viz("compare -q " + models + " --tokens " + sequences[n] + " --out " + out);
        REQUIRE_MESSAGE(s.exit_code == 0, s.output);
        singles.push_back(read_json(out + "/compare.json"));
    }
    const nlohmann::json corpus = read_json(dir / "corpus/compare.json");
    CHECK(corpus["format"] == "attn-viz/compare@1");
    CHECK(corpus["sequences"] == 5);
    REQUIRE(corpus["heads"].size() == 4);
    // A measure (of_single picks it from each single compare) against the corpus's `key` and `key`_std.
    const auto check_measure = [&](const nlohmann::json& in_corpus, const std::string& key,
                                   const std::function<nlohmann::json(const nlohmann::json&)>& of_single,
                                   const std::string& what) {
        std::vector<nlohmann::json> values;
        for (const nlohmann::json& single : singles) values.push_back(of_single(single));
        const auto [mean, spread] = moments(values);
        check_value(mean, in_corpus.at(key), what + " mean");
        check_value(spread, in_corpus.at(key + "_std"), what + " std");
    };
    for (size_t h = 0; h < 4; ++h) {
        const nlohmann::json& head = corpus["heads"][h];
        CHECK(head["index"] == h);
        const std::string name = head["name"];
        for (const char* key : {"map_js_distance", "map_correlation", "map_cosine", "top1_agreement"})
            check_measure(
                head, key, [&](const nlohmann::json& s) { return s["heads"][h][key]; }, name + " " + key);
        check_measure(
            head, "label_changed",
            [&](const nlohmann::json& s) {
                return nlohmann::json(s["heads"][h]["label_a"] != s["heads"][h]["label_b"] ? 1.0 : 0.0);
            },
            name + " label_changed");
        for (const char* side : {"a", "b", "change"})
            for (const auto& [statistic, value] : head[side].items()) {
                const nlohmann::json in_corpus = {{"x", value}, {"x_std", head[std::string(side) + "_std"][statistic]}};
                check_measure(
                    in_corpus, "x", [&](const nlohmann::json& s) { return s["heads"][h][side][statistic]; },
                    name + " " + side + "." + statistic);
            }
    }
    for (const char* key : {"mean_kl", "max_kl", "loss_a", "loss_b", "top1_agreement"})
        check_measure(
            corpus["output"], key, [&](const nlohmann::json& s) { return s["output"][key]; },
            std::string("output ") + key);
    CHECK(corpus["output"]["sequences"] == 5);
    // The summary ranks the mean JS distance; --fail-above tests it.
    double largest = 0;
    for (const auto& head : corpus["heads"]) largest = std::max(largest, head["map_js_distance"].get<double>());
    CHECK(corpus["summary"]["largest"]["value"].get<double>() == largest);
    const CommandResult failing = run_attn_viz("compare -q " + models + " --inputs " + (dir / "c.jsonl") +
                                               " --fail-above " + std::to_string(largest * 0.999));
    CHECK(failing.exit_code == 1);
    CHECK(failing.output.find(corpus["summary"]["largest"]["head"].get<std::string>() + ": js_distance") !=
          std::string::npos);
    CHECK(run_attn_viz("compare -q " + models + " --inputs " + (dir / "c.jsonl") + " --fail-above " +
                       std::to_string(largest * 1.001))
              .exit_code == 0);
}

TEST_CASE("compare --inputs --shard: the shards' compare partials merge to the single corpus run") {
    ScratchDir dir;
    const std::string models = write_model_pair(dir);
    write_token_corpus(dir / "c.jsonl", 7);
    const std::string corpus = "compare -q " + models + " --inputs " + (dir / "c.jsonl");
    REQUIRE(run_attn_viz(corpus + " --out " + (dir / "single")).exit_code == 0);
    std::string partials;
    for (int i = 0; i < 3; ++i) {
        const std::string n = std::to_string(i), partial = dir / ("p" + n + ".json");
        const CommandResult r =
            run_attn_viz(corpus + " --shard " + n + "/3 --out " + (dir / ("s" + n)) + " --save-partial " + partial);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        partials += " " + partial;
        CHECK(read_json(partial)["format"] == "attn-viz/compare-partial@1");
    }
    // A bare file name is written in the working directory (fs::status's "no such file" is not
    // taken for a failure to create the folder).
    const CommandResult bare = run_command("cd '" + dir.path().string() + "' && '" + attn_viz_binary() + "' " + corpus +
                                           " --shard 0/3 --out bare --save-partial bare.json");
    REQUIRE_MESSAGE(bare.exit_code == 0, bare.output);
    CHECK(read_json(dir / "bare.json")["heads"] == read_json(dir / "p0.json")["heads"]);
    const CommandResult merged = run_attn_viz("merge" + partials + " --out " + (dir / "merged"));
    REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
    CHECK(merged.output.find("coverage: 3 of 3 shards of " + (dir / "c.jsonl") + ", 7 sequences") != std::string::npos);
    const nlohmann::json single = read_json(dir / "single/compare.json"),
                         whole = read_json(dir / "merged/compare.json");
    check_same_document(single, whole, "compare.json");
    CHECK(whole["sequences"] == 7);
    CHECK(whole["corpora"][0]["shards"] == nlohmann::json({0, 1, 2}));
    // A gap is refused as for corpus partials.
    const CommandResult gap =
        run_attn_viz("merge " + (dir / "p0.json") + " " + (dir / "p2.json") + " --out " + (dir / "gap"));
    CHECK(gap.exit_code == 3);
    CHECK(gap.output.find("shard 1 of 3 is missing") != std::string::npos);
}

TEST_CASE(
    "merge refuses a compare partial of another model pair or thresholds, a mix with corpus partials, and a corrupted "
    "one") {
    ScratchDir dir;
    const std::string models = write_model_pair(dir);
    write_text(dir / "c.bin", llama2c_checkpoint_bytes(16, 32, 2, 2, 2, 263, 24));
    write_token_corpus(dir / "c.jsonl", 4);
    const auto partial = [&](const std::string& pair, const std::string& shard, const std::string& name) {
        const CommandResult r =
            run_attn_viz("compare -q " + pair + " --inputs " + (dir / "c.jsonl") + " --shard " + shard + " --out " +
                         (dir / ("run_" + name)) + " --save-partial " + (dir / (name + ".json")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    };
    partial(models, "0/2", "p0");
    partial(models, "1/2", "p1");
    partial((dir / "a.bin") + " " + (dir / "c.bin") + " --tokenizer " + (dir / "tok.bin"), "1/2", "other");
    partial(models + " --threshold induction=0.55", "1/2", "thresholds");
    const CommandResult corpus_run = run_attn_viz(
        "model -q --checkpoint " + (dir / "a.bin") + " --tokenizer " + (dir / "tok.bin") + " --inputs " +
        (dir / "c.jsonl") + " --shard 1/2 --out " + (dir / "run_model") + " --save-partial " + (dir / "model.json"));
    REQUIRE_MESSAGE(corpus_run.exit_code == 0, corpus_run.output);
    const auto refused = [&](const std::string& files, const std::vector<std::string>& fragments) {
        const CommandResult r = run_attn_viz("merge " + files + " --out " + (dir / "refused"));
        CHECK_MESSAGE(r.exit_code == 3, files << ": " << r.output);
        for (const std::string& fragment : fragments)
            CHECK_MESSAGE(r.output.find(fragment) != std::string::npos, "'" << fragment << "' not in: " << r.output);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
        CHECK(!fs::exists(dir / "refused"));
    };
    refused((dir / "p0.json") + " " + (dir / "other.json"), {"other.json: compares another model pair", "p0.json"});
    refused((dir / "p0.json") + " " + (dir / "thresholds.json"),
            {"thresholds.json: labels heads with another induction than"});
    refused((dir / "p0.json") + " " + (dir / "model.json"),
            {"model.json: is not a compare partial", "merge partials of one kind"});
    refused((dir / "model.json") + " " + (dir / "p0.json"),
            {"p0.json: is a compare partial", "merge partials of one kind"});
    REQUIRE(run_attn_viz("merge " + (dir / "p0.json") + " " + (dir / "p1.json") + " -q --out " + (dir / "fine"))
                .exit_code == 0);

    // Corrupted: each edit of a valid partial is refused naming the file.
    const nlohmann::json valid = read_json(dir / "p1.json");
    const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> corruptions = {
        {[](nlohmann::json& j) { j["heads"]["mean"][3] = "x"; }, "mean[3] is \"x\", expected a finite number"},
        {[](nlohmann::json& j) { j["heads"]["m2"][0] = -1.0; }, "m2[0] is -1.0, expected a finite number >= 0"},
        {[](nlohmann::json& j) { j["heads"]["count"].erase(0); }, "expected arrays of"},
        {[](nlohmann::json& j) { j["heads"]["count"][1] = 99; }, "count[1] is 99, expected an integer in 0.."},
        {[](nlohmann::json& j) { j["heads"]["count"][0] = -1; }, "count[0] is -1, expected an integer in 0.."},
        {[](nlohmann::json& j) { j["num_heads"] = 3; }, "expected arrays of"},
        {[](nlohmann::json& j) { j["num_sequences"] = 5; }, "cover"},
        {[](nlohmann::json& j) { j["fingerprints"]["model_a"] = "zz"; }, "not a fingerprint"},
        {[](nlohmann::json& j) { j["measures"][0] = "other"; }, "\"measures\""},
        {[](nlohmann::json& j) { j["output"]["mean"] = 1; }, "expected arrays of"},
        {[](nlohmann::json& j) { j.erase("corpora"); }, "missing \"corpora\""},
    };
    for (size_t k = 0; k < corruptions.size(); ++k) {
        nlohmann::json bad = valid;
        corruptions[k].first(bad);
        write_text(dir / "bad.json", bad.dump());
        CAPTURE(k);
        refused((dir / "p0.json") + " " + (dir / "bad.json"), {"bad.json", corruptions[k].second});
    }
    write_text(dir / "bad.json", valid.dump().substr(0, 200));
    refused((dir / "p0.json") + " " + (dir / "bad.json"), {"bad.json", "not valid JSON"});
}

TEST_CASE("compare --inputs refuses single-sequence options, layers, and --save-partial without --out") {
    ScratchDir dir;
    const std::string models = write_model_pair(dir);
    write_token_corpus(dir / "c.jsonl", 2);
    const std::string corpus = "compare -q " + models + " --inputs " + (dir / "c.jsonl");
    for (const std::string& extra : {std::string(" --text ab"), std::string(" --tokens 1,2"),
                                     std::string(" --generate 2"), " --diff-pictures 1 --out " + (dir / "o")}) {
        const CommandResult r = run_attn_viz(corpus + extra);
        CHECK_MESSAGE(r.exit_code == 2, extra << ": " << r.output);
        CHECK(r.output.find("a corpus compare keeps no maps and no single input") != std::string::npos);
    }
    const CommandResult no_out = run_attn_viz(corpus + " --save-partial " + (dir / "p.json"));
    CHECK(no_out.exit_code == 2);
    CHECK(no_out.output.find("--save-partial: the partial is written with the run's outputs: give --out DIR") !=
          std::string::npos);
    write_layer_fixture(dir, 8, 2, 4);
    const CommandResult layers =
        run_attn_viz("compare -q " + (dir / "w.json") + " " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl"));
    CHECK(layers.exit_code == 2);
    CHECK(layers.output.find("--inputs runs two whole models over a corpus") != std::string::npos);
}

TEST_CASE("stories260K over a corpus: Q8_0 moves little, a 4-bit copy more, in mean JS distance and mean KL") {
    const std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf", "stories260K-Q8_0.gguf"});
    if (gguf.empty()) return;
    ScratchDir dir;
    write_text(dir / "c.jsonl",
               "{\"text\": \"Once upon a time, there was a little girl named Lily.\"}\n"
               "{\"text\": \"She loved to play outside in the park with her dog.\"}\n"
               "{\"text\": \"One day, Tom saw a big red ball under the tree.\"}\n");
    const CommandResult made = run_command("/usr/bin/python3 " + source_dir() + "/scripts/quantize_gguf.py " + gguf +
                                           "/stories260K.gguf " + (dir / "Q4_0.gguf") + " --type Q4_0");
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);
    for (const std::string& copy : {gguf + "/stories260K-Q8_0.gguf", dir / "Q4_0.gguf"}) {
        const CommandResult r =
            run_attn_viz("compare " + gguf + "/stories260K.gguf " + copy + " --inputs " + (dir / "c.jsonl") +
                         " --out " + (dir / (copy.ends_with("Q8_0.gguf") ? "q8" : "q4")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find("summary: 40 heads compared") != std::string::npos);
        CHECK(r.output.find("3 sequences from ") != std::string::npos);
    }
    const nlohmann::json q8 = read_json(dir / "q8/compare.json"), q4 = read_json(dir / "q4/compare.json");
    const auto mean_js = [](const nlohmann::json& c) {
        double total = 0;
        for (const auto& head : c["heads"]) total += head["map_js_distance"].get<double>();
        return total / static_cast<double>(c["heads"].size());
    };
    MESSAGE("over 3 sequences, mean JS distance per head: Q8_0 "
            << mean_js(q8) << ", Q4_0 " << mean_js(q4) << "; mean KL: Q8_0 " << q8["output"]["mean_kl"] << ", Q4_0 "
            << q4["output"]["mean_kl"]);
    CHECK(q8["sequences"] == 3);
    CHECK(mean_js(q8) > 0);
    CHECK(mean_js(q4) > 2 * mean_js(q8));
    CHECK(q8["output"]["mean_kl"].get<double>() > 0);
    CHECK(q4["output"]["mean_kl"].get<double>() > 2 * q8["output"]["mean_kl"].get<double>());
    CHECK(q4["output"]["mean_kl_std"].get<double>() >= 0);
}

}  // TEST_SUITE("model")
