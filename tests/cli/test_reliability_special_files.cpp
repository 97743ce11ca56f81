// Inputs that are not regular files: a named pipe (FIFO) given as a model, a shard to merge, a
// folder's tokenizer.json or a corpus, or found as a .json entry of a corpus folder, fails at once,
// naming the file and what it is, instead of waiting forever for a writer. Every command runs
// under timeout(1), so a regression fails (exit 124) rather than hanging the suite.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "cli_fixtures.hpp"
#include "expect_error.hpp"
#include "input_open.hpp"
#include "mapped_file.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// `attn-viz ARGUMENTS`, killed after 60 seconds (exit 124) if it has not ended.
CommandResult run_with_timeout(const std::string& arguments) {
    return run_command(std::string("timeout 60 '") + attn_viz_binary() + "' " + arguments);
}

void make_fifo(const std::string& path) { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }

// A Unix-domain socket bound at `path` (the socket file stays when the descriptor is closed).
void make_socket(const std::string& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    std::strcpy(address.sun_path, path.c_str());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    CHECK(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    ::close(fd);
}

// The command fails as an I/O error (exit 4) naming `fifo` as a named pipe, and writes nothing.
void check_fifo_refused(const CommandResult& r, const std::string& fifo, const std::string& out) {
    INFO(r.output);
    CHECK(r.exit_code == 4);
    CHECK(r.output.find("attn-viz: error: " + fifo + ": is a named pipe (FIFO), not a regular file") !=
          std::string::npos);
    CHECK(!fs::exists(out));
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("open_input_file refuses a FIFO, a folder and a device by what they are, without blocking") {
    ScratchDir dir;
    make_fifo(dir / "pipe");
    fs::create_directories(dir / "folder");
    expect_error(ErrorKind::io, [&] { open_input_file(dir / "pipe", "weights"); },
                 {dir / "pipe", "is a named pipe (FIFO), not a regular file"});
    expect_error(ErrorKind::io, [&] { MappedFile(dir / "pipe", "weights"); }, {dir / "pipe", "named pipe (FIFO)"});
    expect_error(ErrorKind::io, [&] { open_input_file(dir / "folder", "weights"); },
                 {dir / "folder", "is a folder, not a regular file"});
    expect_error(ErrorKind::io, [&] { open_input_file("/dev/null", "weights"); },
                 {"/dev/null", "is a character device, not a regular file"});
    expect_error(ErrorKind::io, [&] { open_input_file(dir / "missing", "weights"); },
                 {dir / "missing", "cannot open: No such file"});
    write_text(dir / "file.bin", "abc");
    const MappedFile file(dir / "file.bin", "weights");  // a regular file still opens (and reads with blocking I/O)
    CHECK(file.text() == "abc");
}

TEST_CASE("a FIFO as a model, a tokenizer.json in a folder, a corpus or a shard to merge fails at once naming it") {
    ScratchDir dir;
    make_fifo(dir / "model.gguf");
    check_fifo_refused(
        run_with_timeout("model --checkpoint " + (dir / "model.gguf") + " --text hi --out " + (dir / "out")),
        dir / "model.gguf", dir / "out");
    check_fifo_refused(run_with_timeout("tokenize --model " + (dir / "model.gguf") + " --text hi"), dir / "model.gguf",
                       dir / "out");

    fs::create_directories(dir / "tok");
    make_fifo(dir / "tok/tokenizer.json");
    check_fifo_refused(run_with_timeout("tokenize --tokenizer " + (dir / "tok") + " --text hi"),
                       dir / "tok/tokenizer.json", dir / "out");

    make_fifo(dir / "shard.json");
    check_fifo_refused(run_with_timeout("merge " + (dir / "shard.json") + " --out " + (dir / "out")),
                       dir / "shard.json", dir / "out");

    make_fifo(dir / "texts.jsonl");
    write_layer_fixture(dir, 8, 2, 3);
    check_fifo_refused(run_with_timeout("run --weights " + (dir / "w.json") + " --inputs " + (dir / "texts.jsonl") +
                                        " --out " + (dir / "out")),
                       dir / "texts.jsonl", dir / "out");
    const std::string stories = stories260k_dir();
    if (stories.empty()) return;
    check_fifo_refused(run_with_timeout("model --checkpoint " + stories + "/stories260K.bin --tokenizer " + stories +
                                        "/tok512.bin --inputs " + (dir / "texts.jsonl") + " --out " + (dir / "out")),
                       dir / "texts.jsonl", dir / "out");
    check_fifo_refused(run_with_timeout("tokenize --model " + stories + "/stories260K.bin --tokenizer " + stories +
                                        "/tok512.bin --inputs " + (dir / "texts.jsonl")),
                       dir / "texts.jsonl", dir / "out");
}

TEST_CASE("a corpus folder's .json entry that is not a regular file is refused naming it; other entries are not read") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    fs::create_directories(dir / "corpus");
    write_text(dir / "corpus/a.json", random_sequence_line(3, 8));
    write_text(dir / "corpus/b.json", random_sequence_line(4, 8));
    const std::string run = "run --weights " + (dir / "w.json") + " --inputs " + (dir / "corpus") + " --out ";
    // Entries whose names are not *.json are not part of the corpus, whatever they are: never
    // followed, opened or waited on.
    fs::create_directories(dir / "corpus/npy");
    make_fifo(dir / "corpus/pipe");
    make_socket(dir / "corpus/socket");
    fs::create_symlink("missing", dir / "corpus/stale");
    fs::create_symlink("loop", dir / "corpus/loop");
    const CommandResult ok = run_with_timeout(run + (dir / "ok"));
    INFO(ok.output);
    CHECK(ok.exit_code == 0);
    CHECK(ok.output.find("2 sequences from " + (dir / "corpus")) != std::string::npos);

    // Each .json entry must be a file the corpus can read: the run stops before anything is
    // computed or written, naming the entry and what it is (I/O, exit 4), and never waits on a FIFO.
    const std::vector<std::pair<std::function<void(const std::string&)>, std::string>> entries = {
        {make_fifo, "is a named pipe (FIFO), not a regular file"},
        {make_socket, "is a socket, not a regular file"},
        {[](const std::string& path) { fs::create_directories(path); }, "is a folder, not a regular file"},
        {[](const std::string& path) { fs::create_symlink("missing.json", path); },
         "is a symbolic link to missing.json, which does not exist"},
        {[](const std::string& path) { fs::create_symlink("c.json", path); },
         "is a symbolic link that cannot be followed: Too many levels of symbolic links"},
        {[&](const std::string& path) { fs::create_symlink(dir / "corpus/npy", path); },
         "is a folder, not a regular file"},
    };
    for (const auto& [make, what] : entries) {
        const std::string entry = dir / "corpus/c.json";
        make(entry);
        const CommandResult r = run_with_timeout(run + (dir / "out"));
        INFO(r.output);
        CHECK(r.exit_code == 4);
        CHECK(r.output == "attn-viz: error: " + entry + ": " + what + "\n");
        CHECK(!fs::exists(dir / "out"));
        fs::remove(entry);
    }
}

}  // TEST_SUITE("reliability")
