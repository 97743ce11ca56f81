// Corpus runs split into shards (--shard I/N) and merged: `attn-viz run` over a layer and
// `attn-viz model --inputs` over a whole (random) llama2.c model, each equal to one single run.
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "corpus_merge_fixture.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("cli") {

TEST_CASE("run --shard I/N: N shards of a corpus merge to the single run over it") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 4, rng()() % 2 == 0);
    const int64_t count = 7 + static_cast<int64_t>(rng()() % 8), shards = 2 + static_cast<int64_t>(rng()() % 4);
    CAPTURE(count);
    CAPTURE(shards);
    std::string corpus;
    for (int64_t n = 0; n < count; ++n)
        corpus += random_sequence_line(1 + static_cast<int64_t>(rng()() % 9), 12) + "\n";
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
    CHECK_MESSAGE(r.output.find("c.jsonl: shard 2/3 holds no sequences (the corpus holds 2") != std::string::npos,
                  r.output);
    CHECK(!fs::exists(dir / "out"));
}

TEST_CASE(
    "merge refuses a shard twice, other splits, other weights and a corpus changed between shards; a gap unless "
    "--allow-partial") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    std::vector<std::string> lines;
    for (int n = 0; n < 8; ++n) lines.push_back(random_sequence_line(2 + n % 3, 8) + "\n");
    const auto write_corpus = [&](const std::string& name, size_t count) {
        std::string text;
        for (size_t n = 0; n < count; ++n) text += lines[n];
        write_text(dir / name, text);
    };
    write_corpus("c.jsonl", 8);
    write_text(dir / "d.jsonl", random_sequence_line(2, 8) + "\n" + random_sequence_line(3, 8) + "\n" +
                                    random_sequence_line(4, 8) + "\n");
    const auto shard = [&](const std::string& partial, const std::string& spec, const std::string& corpus = "c.jsonl",
                           const std::string& weights = "") {
        CommandResult r = run_attn_viz("run -q --weights " + (weights.empty() ? dir / "w.json" : weights) +
                                       " --inputs " + (dir / corpus) + " --shard " + spec + " --out " +
                                       (dir / ("run_" + partial)) + " --save-partial " + (dir / (partial + ".json")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    };
    for (int i = 0; i < 4; ++i) shard(std::string("p").append(std::to_string(i)), std::to_string(i) + "/4");
    // The merge of `partials` ("p0 p1 ...") into DIR/NAME, with `options`.
    const auto merge = [&](const std::string& partials, const std::string& name, const std::string& options = "") {
        std::string files;
        for (size_t at = 0; at < partials.size();) {
            const size_t end = std::min(partials.find(' ', at), partials.size());
            files.append(" ").append(dir / (partials.substr(at, end - at) + ".json"));
            at = end + 1;
        }
        return run_attn_viz("merge" + files + " --out " + (dir / name) + options);
    };
    const auto refused = [&](const std::string& partials, const std::vector<std::string>& fragments) {
        CommandResult r = merge(partials, "refused");
        CHECK_MESSAGE(r.exit_code == 3, partials << ": " << r.output);
        for (const std::string& fragment : fragments)
            CHECK_MESSAGE(r.output.find(fragment) != std::string::npos, "'" << fragment << "' not in: " << r.output);
        CHECK(!fs::exists(dir / "refused"));
    };

    // All four: complete; with a whole run of another corpus, both are reported.
    shard("d", "0/1", "d.jsonl");
    CommandResult r = merge("p0 p1 p2 p3 d", "all", " --save-partial " + (dir / "all.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK_MESSAGE(r.output.find("coverage: 4 of 4 shards of " + (dir / "c.jsonl") + ", 8 sequences; 1 of 1 shards of " +
                                (dir / "d.jsonl") + ", 3 sequences") != std::string::npos,
                  r.output);

    // A shard twice: the same file, a partial that already holds it, or the shard run again.
    refused("p0 p1 p1 p2 p3", {"p1.json: shard 1/4 of", "already merged from", "p1.json"});
    refused("all p2", {"p2.json: shard 2/4 of", "already merged from", "all.json"});
    shard("p2again", "2/4");
    refused("p0 p1 p2 p2again p3", {"p2again.json: shard 2/4", "p2.json"});
    // The same corpus split two ways: shard 0/2 holds sequences of shards 0/4 and 2/4.
    shard("q0", "0/2");
    refused("p0 p1 q0 p3", {"q0.json: splits", "into 2 shards", "into 4"});

    // A gap: refused, or merged with --allow-partial and reported in stats.json.
    refused("p0 p1 p3", {"shard 2 of 4 is missing (3 of 4 shards, 6 of 8 sequences)", "--allow-partial"});
    shard("d0", "0/2", "d.jsonl");
    refused("p0 p1 p2 p3 d0", {"d.jsonl: shard 1 of 2 is missing (1 of 2 shards, 2 of 3 sequences)"});
    r = merge("p0 p1 p3", "gap", " --allow-partial");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("warning: " + (dir / "c.jsonl") + ": shard 2 of 4 is missing") != std::string::npos);
    CHECK(r.output.find("coverage: 3 of 4 shards of " + (dir / "c.jsonl") + ", 6 of 8 sequences") != std::string::npos);
    const nlohmann::json gap = read_stats(dir / "gap");
    CHECK(gap["num_sequences"] == 6);
    CHECK(gap["corpora"][0]["shards"] == nlohmann::json({0, 1, 3}));

    // Other weights: the layer's fingerprint differs.
    ScratchDir other;
    write_layer_fixture(other, 8, 2, 3);
    shard("other_weights", "2/4", "c.jsonl", other / "w.json");
    refused("p0 p1 other_weights p3", {"other_weights.json", "other weights"});

    // The corpus changed (one line) before shard 2 ran again: its fingerprint differs.
    lines[5] = random_sequence_line(3, 8) + "\n";
    write_corpus("c.jsonl", 8);
    shard("p2changed", "2/4");
    refused("p0 p1 p2changed p3", {"p2changed.json: its shards of", "changed between its shards' runs"});
}

TEST_CASE("model --inputs: texts and token ids through every layer, aggregated; shards merge to the single run") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    const std::string corpus =
        "{\"text\": \"ab ba abab\"}\n{\"tokens\": [1, 260, 261, 260, 261]}\n\n{\"text\": \"\"}\n"
        "{\"tokens\": [1, 262, 259, 262, 262, 3, 99]}\n{\"text\": \"b a b\\u00e9\"}\n";
    write_text(dir / "c.jsonl", corpus);
    check_shards_merge_to_single_run(dir, model + " --inputs " + (dir / "c.jsonl"), 2, 5);
    const nlohmann::json stats = read_stats(dir / "single");
    CHECK(stats["num_layers"] == 2);
    CHECK(stats["heads"].size() == 4);
    CHECK(stats["num_queries"] == 9);  // the longest: BOS " " "b" " " "a" " " "b" and the two bytes of "é"
    CHECK(stats["heads"][0]["std"].contains("entropy"));

    // Shard 1 of another model (same shape, other numbers) is refused beside shard 0 of this one.
    write_text(dir / "m2.bin", llama2c_checkpoint_bytes(16, 32, 2, 2, 2, 263, 24));
    CommandResult r = run_attn_viz("model -q --checkpoint " + (dir / "m2.bin") + " --tokenizer " + (dir / "tok.bin") +
                                   " --inputs " + (dir / "c.jsonl") + " --shard 1/2 --out " + (dir / "other") +
                                   " --save-partial " + (dir / "other.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "other.json") + " --out " + (dir / "mixed"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("other weights") != std::string::npos, r.output);
    // A copy of a corpus at another path is the same corpus: counted twice, refused; two different
    // corpora (even one of a text, one of its ids) are both counted.
    write_text(dir / "ids.jsonl", "{\"tokens\": [1, 259, 260, 259, 261]}\n{\"text\": \"ab\"}\n");
    write_text(dir / "copy.jsonl", "{\"tokens\": [1, 259, 260, 259, 261]}\n{\"text\": \"ab\"}\n");
    write_text(dir / "text.jsonl", "{\"text\": \"a b\"}\n");
    for (const char* name : {"ids", "copy", "text"}) {
        const std::string base = dir / name;
        r = run_attn_viz(model + " -q --inputs " + base + ".jsonl --out " + base + " --save-partial " + base + ".json");
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    }
    r = run_attn_viz("merge -q " + (dir / "ids.json") + " " + (dir / "copy.json") + " --out " + (dir / "twice"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("copy.json: shard 0/1 of " + (dir / "copy.jsonl") + " is already merged from ") !=
                      std::string::npos,
                  r.output);
    r = run_attn_viz("merge " + (dir / "ids.json") + " " + (dir / "text.json") + " --out " + (dir / "two"));
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK(read_stats(dir / "two")["num_sequences"] == 3);

    // A line the model cannot take names the line; corpus mode takes no text, generates nothing and
    // dumps no single input's maps.
    write_text(dir / "bad.jsonl", corpus + "{\"tokens\": [1, 263]}\n");
    r = run_attn_viz(model + " -q --inputs " + (dir / "bad.jsonl") + " --out " + (dir / "bad"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("bad.jsonl:7: ") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "bad"));
    for (const char* extra : {" --text hello", " --generate 3", " --dump-attention a.npy"})
        CHECK_MESSAGE(
            run_attn_viz(model + " -q --inputs " + (dir / "c.jsonl") + " --out " + (dir / "bad") + extra).exit_code ==
                2,
            extra);
}

TEST_CASE(
    "model --inputs: a corpus whose repeated lines fall in different shards merges to the single run; a shard twice is "
    "refused") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    // "The end." at positions 1, 3 and 5: in shards 1, 0 and 2 of 3; "ab ba" at 0 and 6 (shard 0 both).
    write_text(dir / "c.jsonl",
               "{\"text\": \"ab ba\"}\n{\"text\": \"The end.\"}\n{\"text\": \"a b\"}\n"
               "{\"text\": \"The end.\"}\n\n{\"tokens\": [1, 262, 259, 262]}\n{\"text\": \"The end.\"}\n"
               "{\"text\": \"ab ba\"}\n");
    check_shards_merge_to_single_run(dir, model + " --inputs " + (dir / "c.jsonl"), 3, 7);
    CommandResult r = run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "p1.json") + " " + (dir / "p1.json") +
                                   " " + (dir / "p2.json") + " --out " + (dir / "twice"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("shard 1/3 of ") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "twice"));
    // Shard 1 again from a copy of the corpus under another name: the same corpus (fingerprint),
    // refused.
    fs::copy_file(dir / "c.jsonl", dir / "copy.jsonl");
    r = run_attn_viz(model + " -q --inputs " + (dir / "copy.jsonl") + " --shard 1/3 --out " + (dir / "copy") +
                     " --save-partial " + (dir / "copy1.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q --allow-partial " + (dir / "p1.json") + " " + (dir / "copy1.json") + " --out " +
                     (dir / "twice"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("copy1.json: shard 1/3 of " + (dir / "copy.jsonl") + " is already merged from ") !=
                      std::string::npos,
                  r.output);
    CHECK(!fs::exists(dir / "twice"));
}

}  // TEST_SUITE("cli")
