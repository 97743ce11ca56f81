// attn-viz model --inputs on encoder-decoder folders (random BART and T5 folders written by
// scripts/reference_hf_seq2seq.py): every head's mean and std over the corpus's (source, target)
// pairs, the cross heads' alignment too, against the single-text runs of each line averaged here
// in double; shards merging to the single corpus run; a one-line corpus with a one-token target;
// lines without a target, ids the model cannot take, partials of another kind or other weights refused.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "corpus_merge_fixture.hpp"
#include "hf_reference_folder.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// One corpus line and the options of the single-text run of the same pair.
struct PairLine {
    std::string json, options;
};

// "[1, 2]" and "1,2" of `count` random ids below 256 (the reference tokenizer's byte tokens).
std::pair<std::string, std::string> random_ids(int64_t count) {
    std::string list, option;
    for (int64_t i = 0; i < count; ++i) {
        const std::string id = std::to_string(rng()() % 256);
        list += (i ? ", " : "") + id;
        option += (i ? "," : "") + id;
    }
    return {"[" + list + "]", option};
}

// A random text of 1..8 letters and spaces.
std::string random_text() {
    std::string text;
    for (uint64_t n = 1 + rng()() % 8; n > 0; --n) text += " abcde"[rng()() % 6];
    return text.front() == ' ' ? "x" + text : text;
}

// Line 0: a one-token target; then ids and texts in turn, sources of 1..9 tokens, targets of 1..6.
std::vector<PairLine> random_pairs(int64_t count) {
    std::vector<PairLine> lines;
    for (int64_t n = 0; n < count; ++n) {
        if (n % 2 == 0) {
            const auto [source, source_option] = random_ids(1 + static_cast<int64_t>(rng()() % 9));
            const auto [target, target_option] = random_ids(n == 0 ? 1 : 1 + static_cast<int64_t>(rng()() % 6));
            lines.push_back({"{\"tokens\": " + source + ", \"target_tokens\": " + target + "}",
                             "--tokens " + source_option + " --target-tokens " + target_option});
        } else {
            const std::string source = random_text(), target = random_text();
            lines.push_back({"{\"text\": \"" + source + "\", \"target_text\": \"" + target + "\"}",
                             "--text \"" + source + "\" --target-text \"" + target + "\""});
        }
    }
    return lines;
}

void write_corpus(const std::string& path, const std::vector<PairLine>& lines) {
    std::string text;
    for (const PairLine& line : lines) text += line.json + "\n";
    write_text(path, text);
}

double value_of(const nlohmann::json& x) { return x.is_null() ? NAN : x.get<double>(); }

// Mean and population std of the defined values (null: NaN, skipped as the corpus skips it); NaN
// and NaN when there is none.
std::pair<double, double> moments(const std::vector<double>& values) {
    double sum = 0, count = 0;
    for (double v : values)
        if (!std::isnan(v)) sum += v, ++count;
    if (count == 0) return {NAN, NAN};
    const double mean = sum / count;
    double squares = 0;
    for (double v : values)
        if (!std::isnan(v)) squares += (v - mean) * (v - mean);
    return {mean, std::sqrt(squares / count)};
}

void check_close(const nlohmann::json& got, double expected, const std::string& what) {
    if (std::isnan(expected)) {
        CHECK_MESSAGE(got.is_null(), what << ": " << got.dump());
        return;
    }
    REQUIRE_MESSAGE(got.is_number(), what << ": " << got.dump());
    const double x = got.get<double>();
    CHECK_MESSAGE(std::fabs(x - expected) <= 1e-9 * std::fabs(expected) + 1e-12,
                  what << ": " << x << " vs " << expected);
}

// The corpus run's stats.json against the single runs' (one per line, in order): every head's
// statistic (those its "std" names) and its cross alignment, mean and std over the lines.
void check_against_single_runs(const nlohmann::json& corpus, const std::vector<nlohmann::json>& singles) {
    CHECK(corpus["num_sequences"] == singles.size());
    const nlohmann::json& heads = corpus["heads"];
    REQUIRE(heads.size() == singles.front()["heads"].size());
    int64_t compared = 0;
    for (size_t n = 0; n < heads.size(); ++n) {
        const nlohmann::json& head = heads[n];
        CAPTURE(head["stack"].get<std::string>());
        CAPTURE(head["layer"].get<int>());
        CAPTURE(head["head"].get<int>());
        for (const nlohmann::json& single : singles) {
            CHECK(single["heads"][n]["stack"] == head["stack"]);
            CHECK(single["heads"][n]["layer"] == head["layer"]);
            CHECK(single["heads"][n]["head"] == head["head"]);
        }
        const auto check_block = [&](const nlohmann::json& means, const nlohmann::json& stds, const std::string& key,
                                     const auto& value) {
            std::vector<double> values;
            for (const nlohmann::json& single : singles) values.push_back(value_of(value(single["heads"][n])));
            const auto [mean, spread] = moments(values);
            check_close(means[key], mean, key + " mean");
            check_close(stds[key], spread, key + " std");
            ++compared;
        };
        for (const auto& [key, spread] : head["std"].items())
            if (key != "alignment")
                check_block(head, head["std"], key, [&key = key](const nlohmann::json& h) { return h[key]; });
        CHECK(head.contains("alignment") == (head["stack"] == "cross"));
        if (head.contains("alignment"))
            for (const char* key : {"entropy", "confidence", "diagonal", "monotonicity", "coverage"})
                check_block(head["alignment"], head["std"]["alignment"], key,
                            [key](const nlohmann::json& h) { return h["alignment"][key]; });
    }
    CHECK(compared >= static_cast<int64_t>(heads.size()) * 10);  // every head, every statistic
}

// Each line of `lines` run alone (-q --stats-only) into DIR/single_I; their stats.json documents.
std::vector<nlohmann::json> single_runs(const ScratchDir& dir, const std::string& model,
                                        const std::vector<PairLine>& lines) {
    std::vector<nlohmann::json> stats;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string out = dir / ("single_" + std::to_string(i));
        const CommandResult r =
            run_attn_viz("model -q --stats-only --model " + model + " " + lines[i].options + " --out " + out);
        REQUIRE_MESSAGE(r.exit_code == 0, lines[i].options << ": " << r.output);
        stats.push_back(nlohmann::json::parse(read_text(out + "/stats.json")));
    }
    return stats;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "model --inputs on BART and T5 folders: each head's mean and std over the pairs are the single runs'; shards merge "
    "to one run") {
    for (const char* config : {"--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 2 --ffn "
                               "20 --vocab 300 --positions 40",
                               "--model-type t5 --d-model 12 --heads 3 --head-dim 5 --encoder-layers 1 "
                               "--decoder-layers 2 --ffn 14 --vocab 300 --gated"}) {
        CAPTURE(config);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_seq2seq.py",
                              std::string(config) + " --source-tokens 3 --target-tokens 2 --tokenizer");
        const std::string model = dir.path().string();
        const int64_t count = 4 + static_cast<int64_t>(rng()() % 3);
        const std::vector<PairLine> lines = random_pairs(count);
        write_corpus(dir / "c.jsonl", lines);
        const CommandResult r =
            run_attn_viz("model --model " + model + " --inputs " + (dir / "c.jsonl") + " --out " + (dir / "corpus"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find(std::to_string(count) + " sequences from ") != std::string::npos);
        for (const char* file : {"encoder/stats.json", "decoder/heads.csv", "cross/pairs.csv", "cross/correlation.png"})
            CHECK_MESSAGE(fs::exists(dir / ("corpus/" + std::string(file))), file);
        CHECK(!fs::exists(dir / "corpus/encoder/layer_00"));  // corpus mode keeps no maps
        const nlohmann::json corpus = nlohmann::json::parse(read_text(dir / "corpus/stats.json"));
        const std::vector<nlohmann::json> singles = single_runs(dir, model, lines);
        check_against_single_runs(corpus, singles);
        int64_t longest_source = 0;
        for (const nlohmann::json& single : singles)
            longest_source = std::max<int64_t>(longest_source, single["stacks"]["cross"]["num_keys"].get<int64_t>());
        CHECK(corpus["stacks"]["cross"]["num_keys"] == longest_source);
        CHECK(corpus["stacks"]["decoder"]["causal"] == true);
        CHECK(corpus["corpora"][0]["num_sequences"] == count);

        // One line, its target one token: the means are that run's statistics, every std 0 (or null).
        write_corpus(dir / "one.jsonl", {lines.front()});
        const CommandResult one =
            run_attn_viz("model -q --model " + model + " --inputs " + (dir / "one.jsonl") + " --out " + (dir / "one"));
        REQUIRE_MESSAGE(one.exit_code == 0, one.output);
        check_against_single_runs(nlohmann::json::parse(read_text(dir / "one/stats.json")), {singles.front()});
        CHECK(singles.front()["stacks"]["decoder"]["num_queries"] == 1);

        check_shards_merge_to_single_run(dir, "model --model " + model + " --inputs " + (dir / "c.jsonl"),
                                         2 + static_cast<int64_t>(rng()() % 2), count);
    }
}

TEST_CASE(
    "model --inputs on an encoder-decoder refuses a line without a target, ids it cannot take, partials of another "
    "kind or model; a decoder a line with a target") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 270 "
        "--source-tokens 2 --target-tokens 2 --tokenizer");
    const std::string model = "model -q --model " + dir.path().string() + " --out " + (dir / "o") + " --inputs ";
    const std::string good = "{\"tokens\": [3, 4], \"target_tokens\": [5]}\n";
    write_text(dir / "untargeted.jsonl", good + "{\"text\": \"abc\"}\n");
    write_text(dir / "texts.txt", "abc\n");
    write_text(dir / "outside.jsonl", good + good + "{\"tokens\": [3], \"target_tokens\": [270]}\n");
    write_text(dir / "empty_target.jsonl", "{\"text\": \"ab\", \"target_tokens\": []}\n");
    for (const auto& [corpus, needle] : std::vector<std::pair<std::string, std::string>>{
             {"untargeted.jsonl", "untargeted.jsonl:2: an encoder-decoder's corpus line needs its decoder input too"},
             {"texts.txt", "texts.txt:1: an encoder-decoder's corpus line needs its decoder input too"},
             {"outside.jsonl", "outside.jsonl:3: "},
             {"empty_target.jsonl", "empty_target.jsonl:1: \"target_tokens\" must be a non-empty list of token ids"}}) {
        CAPTURE(corpus);
        const CommandResult r = run_attn_viz(model + (dir / corpus));
        CHECK(r.exit_code == 3);
        CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') <= 2);
        CHECK(!fs::exists(dir / "o"));
    }
    write_text(dir / "c.jsonl", good);
    const CommandResult targeted = run_attn_viz(model + (dir / "c.jsonl") + " --target-text abc");
    CHECK(targeted.exit_code == 2);
    CHECK_MESSAGE(targeted.output.find("--inputs excludes --target-text") != std::string::npos, targeted.output);
    // What an encoder-decoder's corpus does not do yet is refused by name, not ignored.
    for (const char* option : {"--html", "--ablate"}) {
        const CommandResult refused =
            run_attn_viz(model + (dir / "c.jsonl") + " " + option + (option[2] == 'a' ? " encoder/all" : ""));
        CHECK(refused.exit_code == 2);
        CHECK_MESSAGE(refused.output.find(std::string(option) + ": not implemented over an encoder-decoder's corpus") !=
                          std::string::npos,
                      refused.output);
        CHECK(!fs::exists(dir / "o"));
    }

    // A partial of a decoder model beside one of this encoder-decoder, and a damaged partial.
    CommandResult r = run_attn_viz(model + (dir / "c.jsonl") + " --save-partial " + (dir / "seq2seq.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    ScratchDir llama;
    make_reference_folder(
        llama, "reference_hf_llama.py",
        "--model-type llama --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 270 --tokens 3 --tokenizer");
    write_text(llama / "c.jsonl", "{\"tokens\": [1, 2]}\n");
    r = run_attn_viz("model -q --model " + llama.path().string() + " --inputs " + (llama / "c.jsonl") + " --out " +
                     (llama / "o") + " --save-partial " + (dir / "decoder.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    // A decoder model has no decoder input: a line with a target is refused, not run without it.
    write_text(llama / "targeted.jsonl", "{\"tokens\": [1, 2]}\n{\"tokens\": [1], \"target_tokens\": [2]}\n");
    r = run_attn_viz("model -q --model " + llama.path().string() + " --inputs " + (llama / "targeted.jsonl") +
                     " --out " + (llama / "t"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("targeted.jsonl:2: \"target_text\" and \"target_tokens\" are the decoder input of an "
                                "encoder-decoder model") != std::string::npos,
                  r.output);
    CHECK(!fs::exists(llama / "t"));
    r = run_attn_viz("merge -q " + (dir / "seq2seq.json") + " " + (dir / "decoder.json") + " --out " + (dir / "m"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(
        r.output.find("decoder.json: is not an encoder-decoder partial (attn-viz/seq2seq-partial@1) while ") !=
            std::string::npos,
        r.output);
    r = run_attn_viz("merge -q " + (dir / "decoder.json") + " " + (dir / "seq2seq.json") + " --out " + (dir / "m"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("seq2seq.json: is an encoder-decoder partial") != std::string::npos, r.output);
    // The same corpus through another random model of the same shape: other weights, refused.
    ScratchDir other;
    make_reference_folder(
        other, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 270 "
        "--source-tokens 2 --target-tokens 2 --tokenizer");
    r = run_attn_viz("model -q --model " + other.path().string() + " --inputs " + (dir / "c.jsonl") + " --out " +
                     (other / "o") + " --save-partial " + (dir / "other.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q --allow-partial " + (dir / "seq2seq.json") + " " + (dir / "other.json") + " --out " +
                     (dir / "m"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("other.json: was computed with other weights") != std::string::npos, r.output);
    nlohmann::json damaged = nlohmann::json::parse(read_text(dir / "seq2seq.json"));
    damaged["cross_alignment"]["heads"]["mean"].erase(0);
    write_text(dir / "damaged.json", damaged.dump());
    r = run_attn_viz("merge -q " + (dir / "damaged.json") + " --out " + (dir / "m"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("damaged.json cross_alignment heads") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "m"));
}

}  // TEST_SUITE("model")
