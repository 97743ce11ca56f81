// Corpus runs split into shards (--shard I/N) and merged: `attn-viz run` over a layer and
// `attn-viz model --inputs` over a whole (random) llama2.c model, each equal to one single run.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Every number of two stats.json documents equal to 1e-9 relative (1e-15 absolute near zero),
// everything else exactly.
void check_same_statistics(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "") {
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        CHECK_MESSAGE(std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)) + 1e-15, path << ": " << x << " vs " << y);
    } else if (a.is_object() && b.is_object()) {
        CHECK_MESSAGE(a.size() == b.size(), path);
        for (const auto& [key, value] : a.items()) {
            REQUIRE_MESSAGE(b.contains(key), path << "." << key);
            check_same_statistics(value, b[key], path + "." + key);
        }
    } else if (a.is_array() && b.is_array()) {
        REQUIRE_MESSAGE(a.size() == b.size(), path);
        for (size_t i = 0; i < a.size(); ++i) check_same_statistics(a[i], b[i], path + "[" + std::to_string(i) + "]");
    } else {
        CHECK_MESSAGE(a == b, path << ": " << a.dump() << " vs " << b.dump());
    }
}

nlohmann::json read_stats(const std::string& dir) { return nlohmann::json::parse(read_text(dir + "/stats.json")); }

// Runs `command` (ending in "--inputs C") over the whole corpus into DIR/single, and as `shards`
// shards whose partials merge into DIR/merged; the two reports must agree. Returns the shards'
// outputs, concatenated.
std::string check_shards_merge_to_single_run(const ScratchDir& dir, const std::string& command, int64_t shards, int64_t corpus_size) {
    CommandResult r = run_attn_viz(command + " --out " + (dir / "single"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    std::string partials, outputs;
    for (int64_t i = 0; i < shards; ++i) {
        const std::string shard = std::to_string(i) + "/" + std::to_string(shards), name = std::string("p").append(std::to_string(i));
        const std::string partial = dir / (name + ".json");
        r = run_attn_viz(command + " --shard " + shard + " --out " + (dir / name) + " --save-partial " + partial);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find("(shard " + shard + "; the corpus holds " + std::to_string(corpus_size) + ")") != std::string::npos);
        partials += " " + partial;
        outputs += r.output;
    }
    r = run_attn_viz("merge -q " + partials + " --out " + (dir / "merged"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json single = read_stats(dir / "single");
    CHECK(single["num_sequences"] == corpus_size);
    check_same_statistics(single, read_stats(dir / "merged"));
    return outputs;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("run --shard I/N: N shards of a corpus merge to the single run over it") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 4, rng()() % 2 == 0);
    const int64_t count = 7 + static_cast<int64_t>(rng()() % 8), shards = 2 + static_cast<int64_t>(rng()() % 4);
    CAPTURE(count);
    CAPTURE(shards);
    std::string corpus;
    for (int64_t n = 0; n < count; ++n) corpus += random_sequence_line(1 + static_cast<int64_t>(rng()() % 9), 12) + "\n";
    write_text(dir / "c.jsonl", corpus);
    const std::string run = "run --weights " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl");
    check_shards_merge_to_single_run(dir, run, shards, count);
    // Shard I holds the sequences i with i mod N = I.
    CHECK(read_stats(dir / "p1")["num_sequences"] == (count - 2) / shards + 1);
}

TEST_CASE("--shard: a malformed shard or one without --inputs is a usage error, an empty shard bad input") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "c.jsonl", random_sequence_line(3, 8) + "\n" + random_sequence_line(2, 8) + "\n");
    const std::string run = "run -q --weights " + (dir / "w.json") + " --out " + (dir / "out");
    for (const char* bad : {"2/2", "1", "-1/2", "1/0", "a/b"}) {
        CommandResult r = run_attn_viz(run + " --inputs " + (dir / "c.jsonl") + " --shard " + bad);
        CHECK_MESSAGE(r.exit_code == 2, bad << ": " << r.output);
        CHECK(r.output.find("--shard") != std::string::npos);
    }
    CHECK(run_attn_viz(run + " --input " + (dir / "x.json") + " --shard 0/2").exit_code == 2);
    CommandResult r = run_attn_viz(run + " --inputs " + (dir / "c.jsonl") + " --shard 2/3");
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("c.jsonl: shard 2/3 holds no sequences (the corpus holds 2") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "out"));
}

TEST_CASE("model --inputs: texts and token ids through every layer, aggregated; shards merge to the single run") {
    ScratchDir dir;
    // 263 tokens: <unk>, BOS, EOS, 256 bytes, " ", "a", "b", "ab"; 2 layers of 2 heads, D = 16.
    write_text(dir / "tok.bin", tokenizer_bytes(vocabulary_with_bytes({{" ", -1}, {"a", -1}, {"b", -1}, {"ab", 3}}), 6));
    write_text(dir / "m.bin", llama2c_checkpoint_bytes(16, 32, 2, 2, 2, 263, 24));
    const std::string corpus = "{\"text\": \"ab ba abab\"}\n{\"tokens\": [1, 260, 261, 260, 261]}\n\n{\"text\": \"\"}\n"
                               "{\"tokens\": [1, 262, 259, 262, 262, 3, 99]}\n{\"text\": \"b a b\\u00e9\"}\n";
    write_text(dir / "c.jsonl", corpus);
    const std::string model = "model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin");
    check_shards_merge_to_single_run(dir, model + " --inputs " + (dir / "c.jsonl"), 2, 5);
    const nlohmann::json stats = read_stats(dir / "single");
    CHECK(stats["num_layers"] == 2);
    CHECK(stats["heads"].size() == 4);
    CHECK(stats["num_queries"] == 9);  // the longest: BOS " " "b" " " "a" " " "b" and the two bytes of "é"
    CHECK(stats["heads"][0]["std"].contains("entropy"));

    // A line the model cannot take names the line; corpus mode keeps no maps and takes no text.
    write_text(dir / "bad.jsonl", corpus + "{\"tokens\": [1, 263]}\n");
    CommandResult r = run_attn_viz(model + " -q --inputs " + (dir / "bad.jsonl") + " --out " + (dir / "bad"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("bad.jsonl:7: ") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "bad"));
    for (const char* extra : {" --text hello", " --generate 3", " --dump-attention a.npy", " --html"})
        CHECK_MESSAGE(run_attn_viz(model + " -q --inputs " + (dir / "c.jsonl") + " --out " + (dir / "bad") + extra).exit_code == 2,
                      extra);
}

}
