// Scripting over many runs: --stats-only (statistics files, no pictures), --json (one JSON
// document on stdout, nothing else), provenance in stats.json, and progress on stderr only at a
// terminal.
#include <filesystem>
#include <tuple>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "file_digest.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// A JSONL corpus of `n` random sequences of 3 to 6 tokens for a D-wide layer.
void write_corpus(const ScratchDir& dir, int64_t D, int n) {
    std::string lines;
    for (int s = 0; s < n; ++s) {
        const Tensor x = random_tensor({3 + s % 4, D});
        nlohmann::json rows = nlohmann::json::array();
        for (int64_t t = 0; t < x.dim(0); ++t)
            rows.push_back(std::vector<float>(x.data.begin() + t * D, x.data.begin() + (t + 1) * D));
        lines += nlohmann::json{{"embeddings", rows}}.dump() + "\n";
    }
    write_text(dir / "c.jsonl", lines);
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("--stats-only writes the statistics files and no picture; it excludes --html and --svg") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 5);
    const std::string run = layer_fixture_run(dir);
    const CommandResult r = run_attn_viz(run + " --stats-only -q --dump-attention " + (dir / "a.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    std::set<std::string> files = names_in(dir / "out");
    files.erase(".attn-viz-run");
    CHECK(files == std::set<std::string>{"heads.csv", "pairs.csv", "stats.json"});
    CHECK(fs::exists(dir / "a.npy"));  // dumps are not pictures
    CHECK(nlohmann::json::parse(read_text(dir / "out/stats.json"))["heads"].size() == 3);
    for (const char* picture : {" --html", " --svg 0"}) {
        const CommandResult refused = run_attn_viz(run + "2 --stats-only" + picture);
        CHECK(refused.exit_code == 2);
        CHECK(refused.output.rfind("attn-viz: error: run: --", 0) == 0);
        CHECK(refused.output.find("excludes") != std::string::npos);
        CHECK(!fs::exists(dir / "out2"));
    }
}

TEST_CASE(
    "--json prints one JSON document on stdout and nothing else: the per-head table, the output folder and "
    "provenance") {
    ScratchDir dir;
    write_layer_fixture(dir, 16, 4, 6);
    const CommandResult r = run_attn_viz("run --json --weights " + (dir / "w.json") + " --input " + (dir / "x.json") +
                                         " --out " + (dir / "out") + " 2>/dev/null");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json doc = nlohmann::json::parse(r.output);  // throws on anything else on stdout
    CHECK(doc["format"] == "attn-viz/summary@1");
    CHECK(doc["command"] == "run");
    CHECK(doc["out"] == dir / "out");
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(doc["heads"] == stats["heads"]);
    CHECK(doc["redundant_groups"] == stats["redundant_groups"]);
    CHECK(doc["tokens"] == stats["tokens"]);
    CHECK(!doc.contains("correlation"));  // N x N matrices stay in stats.json
    CHECK(doc["provenance"] == stats["provenance"]);
    CHECK(fs::exists(dir / "out/head_00.png"));

    // A batch: one summary per sequence, in its folder's order.
    const CommandResult batch =
        run_attn_viz("run --json -q --stats-only --weights " + (dir / "w.json") + " --input " + (dir / "x.json") +
                     " --input " + (dir / "x.json") + " --out " + (dir / "batch"));
    REQUIRE_MESSAGE(batch.exit_code == 0, batch.output);
    const nlohmann::json both = nlohmann::json::parse(batch.output);
    REQUIRE(both["sequences"].size() == 2);
    CHECK(both["sequences"][1]["folder"] == "seq_01/");
    CHECK(both["sequences"][1]["heads"] == nlohmann::json::parse(read_text(dir / "batch/seq_01/stats.json"))["heads"]);
}

TEST_CASE("stats.json records the tool's version, the command line and every file read with its size and SHA-256") {
    ScratchDir dir;
    write_npy_layer_fixture(dir, 8, 2, 4);  // w.json naming four .npy files, x.json naming emb.npy
    const std::vector<std::string> args = {"run",     "-q",           "--weights", dir / "w.json",
                                           "--input", dir / "x.json", "--out",     dir / "out"};
    std::string line;
    for (const std::string& a : args) line += " " + a;
    REQUIRE(run_attn_viz(line).exit_code == 0);
    const nlohmann::json p = nlohmann::json::parse(read_text(dir / "out/stats.json"))["provenance"];
    CHECK(p["tool"] == "attn-viz");
    CHECK(p["version"] == run_attn_viz("--version").output.substr(0, run_attn_viz("--version").output.size() - 1));
    CHECK(p["command_line"].size() == args.size() + 1);
    CHECK(p["command_line"][1] == "run");
    CHECK(p["command_line"].back() == dir / "out");
    std::set<std::string> read;
    for (const auto& input : p["inputs"]) {
        const std::string path = input["path"];
        read.insert(fs::path(path).filename().string());
        CHECK(input["sha256"] == file_sha256(path));
        CHECK(input["bytes"] == fs::file_size(path));
    }
    CHECK(read == std::set<std::string>{"emb.npy", "w.json", "wk.npy", "wo.npy", "wq.npy", "wv.npy", "x.json"});
    CHECK(!p.contains("seed"));
}

TEST_CASE(
    "corpus mode: --json carries the means and stds, provenance lists the corpus, and progress shows only at a "
    "terminal, with the count of the sequences") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_corpus(dir, 8, 5);
    const std::vector<std::string> args = {"run", "--weights", dir / "w.json", "--inputs", dir / "c.jsonl", "--out"};
    std::string line;
    for (const std::string& a : args) line += " " + a;
    const CommandResult piped = run_attn_viz(line + " " + (dir / "piped") + " --json");
    REQUIRE_MESSAGE(piped.exit_code == 0, piped.output);
    const nlohmann::json doc = nlohmann::json::parse(piped.output);  // stderr, joined in, is silent too
    CHECK(doc["num_sequences"] == 5);
    CHECK(doc["heads"][0].contains("std"));
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "piped/stats.json"));
    bool corpus_listed = false;
    for (const auto& input : stats["provenance"]["inputs"]) corpus_listed |= input["path"] == dir / "c.jsonl";
    CHECK(corpus_listed);

    std::vector<std::string> at_terminal = args;
    at_terminal.push_back(dir / "tty");
    const CommandResult shown = run_on_terminal(at_terminal);
    REQUIRE_MESSAGE(shown.exit_code == 0, shown.output);
    CHECK(shown.output.find("attn-viz: sequence 5 of 5\033[K") != std::string::npos);
    CHECK(shown.output.find("\r\033[K") != std::string::npos);  // erased when done
    CHECK(shown.output.find("5 sequences from") != std::string::npos);
    // The count is the shard's, blank lines left out as the run leaves them; a folder's is its .json files.
    write_text(dir / "blanks.jsonl", "\n \t\r\n" + read_text(dir / "c.jsonl") + "\n");
    fs::create_directories(dir / "folder");
    for (const char* name : {"a.json", "b.json", "c.json"})
        fs::copy_file(dir / "x.json", dir / ("folder/" + std::string(name)));
    write_text(dir / "folder/README", "not a sequence");
    for (const auto& [corpus, shard, count] :
         {std::tuple{dir / "blanks.jsonl", "1/2", "2 of 2"}, std::tuple{dir / "folder", "0/2", "2 of 2"},
          std::tuple{dir / "folder", "0/1", "3 of 3"}}) {
        CAPTURE(corpus);
        const CommandResult counted = run_on_terminal({"run", "--weights", dir / "w.json", "--inputs", corpus,
                                                       "--shard", shard, "--out", dir / "counted", "--force"});
        REQUIRE_MESSAGE(counted.exit_code == 0, counted.output);
        CHECK(counted.output.find("attn-viz: sequence " + std::string(count) + "\033[K") != std::string::npos);
    }
    at_terminal.back() = dir / "quiet";
    at_terminal.push_back("-q");
    const CommandResult quiet = run_on_terminal(at_terminal);
    REQUIRE(quiet.exit_code == 0);
    CHECK(quiet.output.empty());
}

}  // TEST_SUITE("cli")
