// No run ever destroys a user's file: not a file it reads only through another one (an .npy a
// weights file refers to, the config.json beside a checkpoint, a corpus folder's files), not the
// inputs of compare and merge, nothing outside --out reached through a symbolic link or a planted
// manifest entry, and nothing a run killed with SIGKILL left behind. Every refusal is exit 2 and
// leaves every file as it was.
#include <csignal>
#include <filesystem>
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "cli_fixtures.hpp"
#include "safetensors.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Runs attn-viz with `arguments`, which must be refused with exit 2 and a message containing
// `message`, and checks that nothing below `dir` changed (no file, folder or link added, removed
// or altered).
void check_refused_leaving_everything(const ScratchDir& dir, const std::string& arguments, const std::string& message) {
    CAPTURE(arguments);
    const auto before = snapshot(dir.path());
    const CommandResult r = run_attn_viz(arguments);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
    CHECK(snapshot(dir.path()) == before);
}

// The files a run directory's manifest lists, and the files it holds besides the manifest.
std::set<std::string> manifest_files(const fs::path& out) {
    std::set<std::string> files;
    std::istringstream lines(read_text((out / ".attn-viz-run").string()));
    for (std::string line; std::getline(lines, line);) files.insert(line);
    return files;
}

// Every file and link below `out` but the run's manifest.
std::set<std::string> output_files(const fs::path& out) {
    std::set<std::string> files;
    for (const auto& [name, what] : snapshot(out))
        if (what != "folder" && name != ".attn-viz-run") files.insert(name);
    return files;
}

// `run` of DIR/w.json on DIR/x.json into DIR/out.
std::string plain_run(const ScratchDir& dir) { return layer_fixture_run(dir) + " -q"; }

// Starts that run with --dump-output to a FIFO nobody reads: it blocks there with its staging
// folder made, which this waits for.
pid_t start_run_blocked_on_fifo(const ScratchDir& dir) {
    REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
    const pid_t pid = spawn_attn_viz({"run", "-q", "--weights", dir / "w.json", "--input", dir / "x.json", "--out",
                                      dir / "out", "--dump-output", dir / "fifo"});
    REQUIRE(wait_until([&] { return !staging_in(dir.path()).empty(); }));
    return pid;
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("a dump that is a file the run reads through another file (an .npy tensor, a hard link of one) is refused") {
    ScratchDir dir;
    write_npy_layer_fixture(dir, 8, 2, 5);
    const std::string run = layer_fixture_run(dir) + " -q --force";  // refused with --force too
    REQUIRE(run_attn_viz(run + " --dump-attention " + (dir / "a.npy")).exit_code == 0);
    fs::create_hard_link(dir / "wk.npy", dir / "same_as_wk.npy");
    check_refused_leaving_everything(dir, run + " --dump-attention " + (dir / "wq.npy"),
                                     (dir / "wq.npy") + ": refusing to overwrite an input: " + (dir / "wq.npy") +
                                         ", read as tensor W_Q of " + (dir / "w.json"));
    check_refused_leaving_everything(dir, run + " --dump-output " + (dir / "emb.npy"),
                                     (dir / "emb.npy") + ": refusing to overwrite an input: " + (dir / "emb.npy") +
                                         ", read as tensor embeddings of " + (dir / "x.json"));
    check_refused_leaving_everything(
        dir, run + " --dump-output " + (dir / "same_as_wk.npy"),
        (dir / "same_as_wk.npy") + ": refusing to overwrite an input: " + (dir / "wk.npy"));
    // A file of the run directory that the weights refer to: replacing stats.json would destroy W_V.
    fs::rename(dir / "wv.npy", dir / "out/stats.json");
    nlohmann::json weights = nlohmann::json::parse(read_text(dir / "w.json"));
    weights["W_V"] = {{"npy", "out/stats.json"}};
    write_text(dir / "w.json", weights.dump());
    check_refused_leaving_everything(dir, run, (dir / "out/stats.json") + ": refusing to overwrite an input");
}

TEST_CASE("the config.json beside a safetensors checkpoint, and a --config file, are inputs no dump may replace") {
    ScratchDir dir;
    const int64_t D = 8;
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const char* name :
         {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"})
        tensors.emplace_back("encoder.layer.0." + std::string(name) + ".weight", random_tensor({D, D}));
    write_safetensors(dir / "m.safetensors", tensors);
    write_text(dir / "config.json", R"({"num_attention_heads": 2, "hidden_size": 8})");
    write_text(dir / "other.json", R"({"num_attention_heads": 4, "hidden_size": 8})");
    write_layer_fixture(dir, D, 2, 4);
    const std::string run = "run -q --force --weights " + (dir / "m.safetensors") + " --layout bert --input " +
                            (dir / "x.json") + " --out " + (dir / "out");
    const CommandResult fine = run_attn_viz(run);
    REQUIRE_MESSAGE(fine.exit_code == 0, fine.output);
    CHECK(fs::exists(dir / "out/head_01.png"));  // two heads: config.json was read
    check_refused_leaving_everything(dir, run + " --dump-attention " + (dir / "config.json"),
                                     (dir / "config.json") + ": refusing to overwrite an input: " +
                                         (dir / "config.json") + ", read as model config");
    check_refused_leaving_everything(
        dir, run + " --config " + (dir / "other.json") + " --dump-output " + (dir / "other.json"),
        (dir / "other.json") + ": refusing to overwrite an input");
    check_refused_leaving_everything(dir, run + " --dump-output " + (dir / "m.safetensors"),
                                     (dir / "m.safetensors") + ": refusing to overwrite an input");
}

TEST_CASE("corpus mode: a file inside the --inputs folder or referred to by a JSONL line is never replaced") {
    ScratchDir dir;
    write_npy_layer_fixture(dir, 8, 2, 4);
    fs::create_directories(dir / "corpus");
    for (const char* name : {"a.json", "b.json", "stats.json"}) {
        write_npy(dir / ("corpus/" + std::string(name) + ".npy"), random_tensor({3, 8}));
        const nlohmann::json sequence = {{"embeddings", {{"npy", std::string(name) + ".npy"}}}};
        write_text(dir / ("corpus/" + std::string(name)), sequence.dump());
    }
    const std::string run = "run -q --force --weights " + (dir / "w.json") + " --inputs " + (dir / "corpus");
    const CommandResult fine = run_attn_viz(run + " --out " + (dir / "out") + " --save-partial " + (dir / "p.json"));
    REQUIRE_MESSAGE(fine.exit_code == 0, fine.output);
    check_refused_leaving_everything(
        dir, run + " --out " + (dir / "out") + " --save-partial " + (dir / "corpus/b.json"),
        (dir / "corpus/b.json") + ": refusing to overwrite an input: " + (dir / "corpus/b.json") +
            ", read as input sequence");
    check_refused_leaving_everything(dir,
                                     run + " --out " + (dir / "out") + " --save-partial " + (dir / "corpus/a.json.npy"),
                                     (dir / "corpus/a.json.npy") + ": refusing to overwrite an input");
    // The corpus folder as the run directory: its stats.json is one of the sequences.
    check_refused_leaving_everything(dir, run + " --out " + (dir / "corpus"),
                                     (dir / "corpus/stats.json") + ": refusing to overwrite an input");
    // A JSONL corpus whose line refers to an .npy beside it.
    write_text(dir / "c.jsonl", nlohmann::json{{"embeddings", {{"npy", "emb.npy"}}}}.dump() + "\n");
    check_refused_leaving_everything(dir,
                                     "run -q --force --weights " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl") +
                                         " --out " + (dir / "out") + " --save-partial " + (dir / "emb.npy"),
                                     (dir / "emb.npy") + ": refusing to overwrite an input: " + (dir / "emb.npy") +
                                         ", read as tensor embeddings of " + (dir / "c.jsonl") + ":1");
}

TEST_CASE("compare and merge never replace their inputs, even with --force into the inputs' folder") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 4);
    fs::create_directories(dir / "cmp");
    fs::copy_file(dir / "w.json", dir / "cmp/compare.json");
    check_refused_leaving_everything(dir,
                                     "compare -q " + (dir / "cmp/compare.json") + " " + (dir / "w.json") + " --input " +
                                         (dir / "x.json") + " --out " + (dir / "cmp") + " --force",
                                     (dir / "cmp/compare.json") + ": refusing to overwrite an input: " +
                                         (dir / "cmp/compare.json") + ", read as weights");

    // Two partials of different sequences (merge refuses one sequence counted twice).
    nlohmann::json other = nlohmann::json::parse(read_text(dir / "x.json"));
    for (auto& row : other["embeddings"])
        for (auto& x : row) x = -x.get<double>();
    write_text(dir / "c.jsonl", read_text(dir / "x.json") + "\n");
    write_text(dir / "c2.jsonl", other.dump() + "\n");
    fs::create_directories(dir / "merged");
    const std::pair<std::string, std::string> runs[] = {{dir / "c.jsonl", dir / "merged/stats.json"},
                                                        {dir / "c2.jsonl", dir / "p2.json"}};
    for (const auto& [corpus, partial] : runs)
        REQUIRE(run_attn_viz("run -q --force --weights " + (dir / "w.json") + " --inputs " + corpus + " --out " +
                             (dir / "corpus_out") + " --save-partial " + partial)
                    .exit_code == 0);
    check_refused_leaving_everything(
        dir,
        "merge -q " + (dir / "merged/stats.json") + " " + (dir / "p2.json") + " --out " + (dir / "merged") + " --force",
        (dir / "merged/stats.json") + ": refusing to overwrite an input: " + (dir / "merged/stats.json") +
            ", read as partial result");
}

TEST_CASE("a planted manifest entry never removes a file outside --out or one attn-viz does not write") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 4);
    const std::string run = plain_run(dir);
    REQUIRE(run_attn_viz(run).exit_code == 0);
    fs::create_directories(dir / "victim");
    for (const char* name : {"thesis.tex", "head_00.png", "stats.json"})
        write_text(dir / ("victim/" + std::string(name)), name);
    fs::create_directory_symlink("../victim", dir / "out/assets");
    fs::create_symlink("../victim/stats.json", dir / "out/old.png");
    write_text(dir / "out/notes.txt", "the user's notes");
    std::string manifest = read_text(dir / "out/.attn-viz-run");
    for (const std::string& entry :
         {std::string("assets/thesis.tex"), std::string("assets/head_00.png"), std::string("../victim/stats.json"),
          dir / "victim/head_00.png", std::string("notes.txt"), std::string("old.png")})
        manifest += entry + "\n";
    write_text(dir / "out/.attn-viz-run", manifest);
    const auto victim = snapshot(dir / "victim");
    const CommandResult r = run_attn_viz(run + " --force");
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK(snapshot(dir / "victim") == victim);
    CHECK(read_text(dir / "out/notes.txt") == "the user's notes");
    CHECK(fs::is_symlink(dir / "out/assets"));
    CHECK(fs::is_symlink(dir / "out/old.png"));
    CHECK(manifest_files(dir / "out").count("notes.txt") == 0);
}

TEST_CASE("a folder of --out that is a symbolic link is never written through: exit 2, nothing changed") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 4);
    const std::string run = "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --input " +
                            (dir / "x.json") + " --out " + (dir / "out");
    REQUIRE(run_attn_viz(run).exit_code == 0);
    fs::create_directories(dir / "victim");
    write_text(dir / "victim/stats.json", "the victim's stats");
    write_text(dir / "victim/head_00.png", "the victim's picture");
    fs::remove_all(dir / "out/seq_00");
    fs::create_directory_symlink("../victim", dir / "out/seq_00");
    check_refused_leaving_everything(
        dir, run + " --force",
        (dir / "out/seq_00") + ": is a symbolic link or not a folder: refusing to write through it");
}

TEST_CASE(
    "a run killed with SIGKILL leaves a staging folder that the next run removes; its files never reach the results") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 6);
    const pid_t killed = start_run_blocked_on_fifo(dir);
    kill(killed, SIGKILL);
    CHECK(wait_exit_code(killed) == 128 + SIGKILL);
    const std::set<std::string> left = staging_in(dir.path());
    REQUIRE(left.size() == 1);
    const std::string stale = dir / *left.begin();
    write_text(stale + "/foreign.png", "not from this run");
    write_text(stale + "/stats.json", "not from this run");
    // A symbolic link named like a staging folder of this destination: neither followed nor removed.
    fs::create_directories(dir / "victim");
    write_text(dir / "victim/stats.json", "the victim's stats");
    const std::string planted = "out.attn-viz-partial-" + std::to_string(getpid()) + "-AbCd12";
    fs::create_directory_symlink("victim", dir / planted);
    const auto victim = snapshot(dir / "victim");

    const CommandResult r = run_attn_viz(plain_run(dir));
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK(staging_in(dir.path()) == std::set<std::string>{planted});
    CHECK(snapshot(dir / "victim") == victim);
    CHECK(output_files(dir / "out") == manifest_files(dir / "out"));
    CHECK(!fs::exists(dir / "out/foreign.png"));
    CHECK(read_text(dir / "out/stats.json").find("attn-viz/stats@1") != std::string::npos);
}

TEST_CASE("a live run's staging folder is left alone by another run into the same --out; SIGTERM then removes it") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 6);
    const pid_t blocked = start_run_blocked_on_fifo(dir);
    const std::set<std::string> live = staging_in(dir.path());
    const CommandResult r = run_attn_viz(plain_run(dir));
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK(staging_in(dir.path()) == live);
    kill(blocked, SIGTERM);
    CHECK(wait_exit_code(blocked) == 130);
    CHECK(staging_in(dir.path()).empty());
    CHECK(output_files(dir / "out") == manifest_files(dir / "out"));
}

}  // TEST_SUITE("reliability")
