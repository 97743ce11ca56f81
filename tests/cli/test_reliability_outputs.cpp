// Interrupted and failed runs leave the previous results (or nothing), never a half-written
// file or a staging directory; a run never overwrites its inputs.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <thread>

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "cli_fixtures.hpp"
#include "synthetic_gguf.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// A full file system at `path`: a tmpfs of one 4 KB page, filled by one file, unmounted when this
// goes. mounted() is false where mounting is not permitted (without CAP_SYS_ADMIN).
class FullTmpfs {
public:
    explicit FullTmpfs(const std::string& path) : path_(path) {
        fs::create_directories(path);
        mounted_ = mount("tmpfs", path.c_str(), "tmpfs", 0, "size=4k") == 0;
        if (mounted_) write_text(path + "/filler", std::string(4096, 'x'));
    }
    ~FullTmpfs() {
        if (mounted_) umount2(path_.c_str(), MNT_DETACH);
    }
    FullTmpfs(const FullTmpfs&) = delete;
    FullTmpfs& operator=(const FullTmpfs&) = delete;
    bool mounted() const { return mounted_; }

private:
    std::string path_;
    bool mounted_ = false;
};

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("SIGINT/SIGTERM while the staging directory exists: exit 130, staging removed, previous results unchanged") {
    for (int signal_number : {SIGINT, SIGTERM}) {
        ScratchDir dir;
        write_layer_fixture(dir, 8, 2, 6);
        const std::vector<std::string> base = {"run",     "-q",           "--force", "--weights", dir / "w.json",
                                               "--input", dir / "x.json", "--out",   dir / "out"};
        REQUIRE(run_attn_viz(layer_fixture_run(dir) + " -q --dump-attention " + (dir / "a.npy")).exit_code == 0);
        const auto before = snapshot(dir / "out");
        const std::string dump_before = read_text(dir / "a.npy");
        // The dump goes to a FIFO nobody reads: the run blocks in open() after staging stats.json,
        // so the signal lands mid-run, with the staging directory present, every time.
        REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
        std::vector<std::string> args = base;
        for (const std::string& a :
             {std::string("--dump-attention"), dir / "a.npy", std::string("--dump-output"), dir / "fifo"})
            args.push_back(a);
        const pid_t pid = spawn_attn_viz(args);
        REQUIRE(wait_until([&] { return !staging_in(dir.path()).empty(); }));
        kill(pid, signal_number);
        CHECK(wait_exit_code(pid) == 130);
        const std::set<std::string> names = names_in(dir.path());
        std::string listed;
        for (const std::string& name : names) listed += " " + name;
        INFO("left in the folder:", listed);
        CHECK(names == std::set<std::string>{"w.json", "x.json", "out", "a.npy", "fifo"});
        CHECK(snapshot(dir / "out") == before);
        CHECK(read_text(dir / "a.npy") == dump_before);
    }
}

TEST_CASE("SIGINT in the middle of a large layer (D=256, T=1500): exit 130, nothing half-written") {
    ScratchDir dir;
    write_layer_fixture(dir, 256, 4, 1500);
    fs::create_directories(dir / "out");
    // A previous run's results, small and quick to make, that the interrupted run would replace.
    ScratchDir small;
    write_layer_fixture(small, 8, 2, 3);
    REQUIRE(run_attn_viz("run -q --weights " + (small / "w.json") + " --input " + (small / "x.json") + " --out " +
                         (dir / "out"))
                .exit_code == 0);
    const auto before = snapshot(dir / "out");
    const pid_t pid = spawn_attn_viz({"run", "-q", "--force", "--weights", dir / "w.json", "--input", dir / "x.json",
                                      "--out", dir / "out", "--dump-attention", dir / "a.npy"});
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kill(pid, SIGINT);
    CHECK(wait_exit_code(pid) == 130);
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "out"});
    CHECK(snapshot(dir / "out") == before);
}

// Starts `model --model MODEL ... --rollout --force --out OUT --dump-attention FIFO` in the background
// through the shell, which records its pid, output and exit status in `work`. The FIFO (in `work`)
// has no reader, so the run blocks in open() with OUT's staging folder present, however fast the
// machine: the interrupt (SIGINT) always lands mid-run. Returns what the run printed; its exit
// status must be 130.
std::string interrupted_model_run(const std::string& model, const std::string& out, const fs::path& work) {
    std::string tokens = "1";
    std::uniform_int_distribution<int> id(3, 299);
    for (int t = 1; t < 16; ++t) tokens += "," + std::to_string(id(rng()));
    fs::create_directories(work);
    const std::string pid_file = (work / "pid").string(), log = (work / "log").string(),
                      status = (work / "status").string(), fifo = (work / "fifo").string();
    fs::remove(status);
    fs::remove(pid_file);
    fs::remove(fifo);
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    REQUIRE(run_command("('" + attn_viz_binary() + "' model --model '" + model + "' --tokens " + tokens +
                        " --rollout --force --out '" + out + "' --dump-attention '" + fifo + "' > '" + log +
                        "' 2>&1 & echo $! > '" + pid_file + "'; wait $!; echo $? > '" + status +
                        "') > /dev/null 2>&1 &")
                .exit_code == 0);
    REQUIRE(wait_until([&] { return fs::exists(pid_file) && fs::file_size(pid_file) > 0; }));
    const pid_t pid = std::stoi(read_text(pid_file));
    const fs::path parent = fs::path(out).parent_path();
    const bool staged = wait_until([&] { return !staging_in(parent).empty(); });
    kill(pid, staged ? SIGINT : SIGKILL);
    CHECK(staged);
    REQUIRE(wait_until([&] { return fs::exists(status) && fs::file_size(status) > 0; }));
    CHECK(read_text(status) == "130\n");
    return read_text(log);
}

TEST_CASE("Ctrl-C during a long model run prints one line saying what is kept, exits 130, and leaves DIR untouched") {
    ScratchDir dir;
    const std::string model = dir / "m.gguf";
    make_synthetic_gguf(model, "F32", {32, 12, 2, 2, 32, 300}, static_cast<unsigned>(rng()() % 1000));
    // A previous run's results in out/, which the interrupted run would have replaced.
    REQUIRE(
        run_attn_viz("model -q --model " + model + " --tokens 1,5,9 --stats-only --out " + (dir / "out")).exit_code ==
        0);
    const auto before = snapshot(dir / "out");
    ScratchDir work;  // the shell's pid, output and status files, outside the watched folder
    CHECK(interrupted_model_run(model, dir / "out", work.path()) ==
          "attn-viz: interrupted: nothing written, the previous results in " + (dir / "out") + " are kept\n");
    CHECK(snapshot(dir / "out") == before);
    CHECK(names_in(dir.path()) == std::set<std::string>{"m.gguf", "out"});
    // A first run into a folder that does not exist yet: nothing to keep, and no folder appears.
    CHECK(interrupted_model_run(model, dir / "fresh", work.path()) ==
          "attn-viz: interrupted: nothing written to " + (dir / "fresh") + "\n");
    CHECK(names_in(dir.path()) == std::set<std::string>{"m.gguf", "out"});
}

TEST_CASE(
    "a file size limit (disk full) mid-write: exit 4 with a message, staging removed, previous results unchanged") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 20);
    const std::string args = layer_fixture_run(dir) + " -q --force --dump-attention " + (dir / "a.npy");
    REQUIRE(run_attn_viz(args).exit_code == 0);
    const auto before = snapshot(dir / "out");
    const std::string dump_before = read_text(dir / "a.npy");
    // ulimit -f 2: at most 1 KB per file (dash counts 512-byte blocks); the [2, 20, 20] dump (3.2 KB)
    // cannot be written.
    // attn-viz ignores SIGXFSZ, so write() fails with EFBIG and the run ends through its I/O error.
    CommandResult r = run_command("ulimit -f 2; '" + attn_viz_binary() + "' " + args);
    CHECK(r.exit_code == 4);
    // The first file over the limit is named as the user knows it (out/stats.json), not by its
    // path in the staging folder beside out/.
    CHECK(r.output.find("attn-viz: error: " + (dir / "out/stats.json") + ": write failed: File too large") !=
          std::string::npos);
    CHECK(r.output.find("attn-viz-partial") == std::string::npos);
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "out", "a.npy"});
    CHECK(snapshot(dir / "out") == before);
    CHECK(read_text(dir / "a.npy") == dump_before);
}

TEST_CASE("a dump to /dev/full fails with exit 4 and leaves no run directory") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 5);
    CommandResult r = run_attn_viz(layer_fixture_run(dir) + " -q --dump-output /dev/full");
    CHECK(r.exit_code == 4);
    CHECK(r.output.find("attn-viz: error: /dev/full: write failed") != std::string::npos);
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json"});
    CHECK(fs::is_character_file("/dev/full"));
}

TEST_CASE("standard output to /dev/full: tokenize, model --json and run exit 4 with one line naming it") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 5);
    std::vector<std::string> commands = {layer_fixture_run(dir) + " --force"};  // each runs twice
    const std::string stories = stories260k_dir();
    if (!stories.empty()) {
        const std::string model =
            " --checkpoint " + stories + "/stories260K.bin --tokenizer " + stories + "/tok512.bin";
        commands.push_back("tokenize --model " + stories + "/stories260K.bin --tokenizer " + stories +
                           "/tok512.bin --text 'Once upon a time'");
        commands.push_back("model --json --stats-only --force" + model + " --text 'Once upon a time' --out " +
                           (dir / "model"));
    }
    for (const std::string& command : commands) {
        CAPTURE(command);
        const CommandResult r = run_command("('" + attn_viz_binary() + "' " + command + " > /dev/full)");
        CHECK(r.exit_code == 4);
        // One line; the reason (No space left on device) when the last write is the one that failed.
        CHECK(r.output.rfind("attn-viz: error: standard output: write failed", 0) == 0);
        CHECK(r.output.find('\n') == r.output.size() - 1);
        // The same command to a file that can hold it succeeds.
        CHECK(run_command("'" + attn_viz_binary() + "' " + command + " > " + (dir / "printed.txt")).exit_code == 0);
        CHECK(!read_text(dir / "printed.txt").empty());
    }
}

TEST_CASE("--out below a regular file is an I/O error (exit 4); a dump path that is a directory is refused (exit 2)") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string inputs = "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json");
    CommandResult r = run_attn_viz(inputs + " --out " + (dir / "x.json") + "/results");
    CHECK(r.exit_code == 4);
    CHECK(r.output.find("cannot create") != std::string::npos);
    fs::create_directories(dir / "folder");
    r = run_attn_viz(inputs + " --out " + (dir / "out") + " --dump-attention " + (dir / "folder"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("folder: is a directory") != std::string::npos);
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "folder"});
}

TEST_CASE("dump and --save-partial destinations are checked before any work, naming the path and the reason") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "corpus.jsonl", read_text(dir / "x.json") + "\n");
    write_text(dir / "file.txt", "x");
    const std::string run = "run -q --weights " + (dir / "w.json") + " --out " + (dir / "out");
    const std::string one = run + " --input " + (dir / "x.json"), corpus = run + " --inputs " + (dir / "corpus.jsonl");
    struct Case {
        std::string args;
        int exit_code;
        std::string message;
    };
    const Case cases[] = {
        // A dump inside an --out that does not exist yet: it only appears when the run succeeds.
        {one + " --dump-attention " + (dir / "out/attn.npy"), 2,
         dir / "out/attn.npy" + ": is inside the output directory " + (dir / "out") +
             ", which is only created when the run succeeds"},
        {one + " --dump-attention " + (dir / "file.txt/a.npy"), 4,
         dir / "file.txt/a.npy" + ": cannot write in " + (dir / "file.txt") + ": Not a directory"},
        {corpus + " --save-partial " + (dir / "file.txt/sub/p.json"), 4,
         dir / "file.txt/sub/p.json" + ": cannot write in " + (dir / "file.txt/sub") + ": Not a directory"},
        {"merge " + (dir / "x.json") + " --out " + (dir / "out") + " --save-partial " + (dir / "file.txt/p.json"), 4,
         dir / "file.txt/p.json" + ": cannot write in"},
    };
    for (const Case& c : cases) {
        const CommandResult r = run_attn_viz(c.args);
        INFO(c.args, "\n", r.output);
        CHECK(r.exit_code == c.exit_code);
        CHECK(r.output.rfind("attn-viz: error: " + c.message, 0) == 0);
        CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "corpus.jsonl", "file.txt"});
    }
    // With --out in place, a dump inside it is fine.
    fs::create_directories(dir / "out");
    CHECK(run_attn_viz(one + " --dump-attention " + (dir / "out/attn.npy")).exit_code == 0);
    CHECK(fs::is_regular_file(dir / "out/attn.npy"));
}

TEST_CASE("a read-only or full --out, --save-partial or merge --out is named as given, never by its staging folder") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "c.jsonl", read_text(dir / "x.json") + "\n");
    const std::string corpus = "run -q --weights " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl");
    const std::string merge = "merge -q " + (dir / "p.json");
    REQUIRE(run_attn_viz(corpus + " --out " + (dir / "out") + " --save-partial " + (dir / "p.json")).exit_code == 0);
    const auto refused = [&](const std::string& args, const std::string& message) {
        const CommandResult r = run_attn_viz(args);
        INFO(args, "\n", r.output);
        CHECK(r.exit_code == 4);
        CHECK(r.output.rfind("attn-viz: error: " + message, 0) == 0);
        CHECK(r.output.find('\n') == r.output.size() - 1);
        CHECK(r.output.find("attn-viz-partial") == std::string::npos);
    };
    // Read-only: the tests run as root, whom a folder's missing write bits do not stop; /proc takes
    // no new entry from anyone (root's mkdir fails there with ENOENT, another user's with EACCES).
    refused("run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out /proc/attn-viz-out",
            "/proc/attn-viz-out: cannot write in /proc: ");
    refused(corpus + " --out " + (dir / "o1") + " --save-partial /proc/attn-viz-p.json",
            "/proc/attn-viz-p.json: cannot write in /proc: ");
    refused(merge + " --out /proc/attn-viz-merged", "/proc/attn-viz-merged: cannot write in /proc: ");
    refused(merge + " --out " + (dir / "m1") + " --save-partial /proc/attn-viz-p.json",
            "/proc/attn-viz-p.json: cannot write in /proc: ");
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "c.jsonl", "out", "p.json"});
    // Full: a filled tmpfs. The partial and compare.json are written through a temporary name
    // inside the staging folder, which named them before.
    const FullTmpfs full(dir / "full");
    if (!full.mounted()) {
        std::cerr << "skipped: cannot mount a tmpfs here; the full file system cases not run\n";
        return;
    }
    const std::string no_space = ": write failed: No space left on device";
    refused(corpus + " --out " + (dir / "o2") + " --save-partial " + (dir / "full/p.json"),
            dir / "full/p.json" + no_space);
    refused(merge + " --out " + (dir / "full/merged"), dir / "full/merged/stats.json" + no_space);
    refused(merge + " --out " + (dir / "m2") + " --save-partial " + (dir / "full/p.json"),
            dir / "full/p.json" + no_space);
    refused("compare -q " + (dir / "w.json") + " " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out " +
                (dir / "full/compared"),
            dir / "full/compared/compare.json" + no_space);
    CHECK(names_in(dir / "full") == std::set<std::string>{"filler"});
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "x.json", "c.jsonl", "out", "p.json", "full"});
}

TEST_CASE("dump and --save-partial destinations get their missing folders, as --out does, only when the run succeeds") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "corpus.jsonl", read_text(dir / "x.json") + "\n" + read_text(dir / "x.json") + "\n");
    const std::string run = "run -q --weights " + (dir / "w.json");
    // A run that fails (an input it cannot read) creates nothing, not even the folders.
    CommandResult r = run_attn_viz(run + " --input " + (dir / "absent.json") + " --out " + (dir / "a/out") +
                                   " --dump-attention " + (dir / "dumps/deep/attn.npy"));
    CHECK(r.exit_code != 0);
    CHECK(!fs::exists(dir / "dumps"));
    CHECK(!fs::exists(dir / "a"));
    r = run_attn_viz(run + " --input " + (dir / "x.json") + " --out " + (dir / "a/out") + " --dump-attention " +
                     (dir / "dumps/deep/attn.npy") + " --dump-output " + (dir / "dumps/y.npy"));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_regular_file(dir / "dumps/deep/attn.npy"));
    CHECK(fs::is_regular_file(dir / "dumps/y.npy"));
    CHECK(fs::is_regular_file(dir / "a/out/stats.json"));
    r = run_attn_viz(run + " --inputs " + (dir / "corpus.jsonl") + " --out " + (dir / "c") + " --save-partial " +
                     (dir / "partials/0/p.json"));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_regular_file(dir / "partials/0/p.json"));
    r = run_attn_viz("merge " + (dir / "partials/0/p.json") + " --out " + (dir / "m") + " --save-partial " +
                     (dir / "merged/p.json"));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::is_regular_file(dir / "merged/p.json"));
}

TEST_CASE("--force into the inputs' own folder never replaces an input, even one named like an output") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    fs::rename(dir / "x.json", dir / "stats.json");
    const std::string before = read_text(dir / "stats.json");
    const std::string args =
        "run -q --weights " + (dir / "w.json") + " --input " + (dir / "stats.json") + " --out " + dir.path().string();
    CommandResult r = run_attn_viz(args);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--force") != std::string::npos);
    r = run_attn_viz(args + " --force");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("stats.json: refusing to overwrite an input: " + (dir / "stats.json") +
                        ", read as input sequence") != std::string::npos);
    CHECK(read_text(dir / "stats.json") == before);
    CHECK(names_in(dir.path()) == std::set<std::string>{"w.json", "stats.json"});
}

}  // TEST_SUITE("reliability")
