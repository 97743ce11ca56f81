// Exit codes and messages of the error paths the cli suite does not cover: the kind-to-status
// mapping, files that cannot be read (missing, a directory where a file belongs), and files that
// cannot be written. (Bad JSON contents: tests/test_cli.cpp; interrupts and disk full:
// test_reliability_outputs.cpp.)
#include <filesystem>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "expect_error.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "npy.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("reliability") {

TEST_CASE("every error kind has its documented exit status") {
    CHECK(exit_code(ErrorKind::usage) == 2);
    CHECK(exit_code(ErrorKind::bad_input) == 3);
    CHECK(exit_code(ErrorKind::io) == 4);
    CHECK(exit_code(ErrorKind::internal) == 5);
    CommandResult help = run_attn_viz("--help");
    CHECK(help.exit_code == 0);
    CHECK(help.output.find("0 success, 1 threshold exceeded (compare --fail-above), 2 usage, 3 bad input,") !=
          std::string::npos);
    CHECK(help.output.find("4 I/O error, 5 internal error, 130 interrupted.") != std::string::npos);
}

TEST_CASE("every loader reports a missing file or a directory as an I/O error naming it") {
    ScratchDir dir;
    fs::create_directories(dir / "folder");
    const std::function<void(const std::string&)> loaders[] = {
        [](const std::string& p) { read_npy(p); },         [](const std::string& p) { read_weights_file(p); },
        [](const std::string& p) { SafetensorsFile{p}; },  [](const std::string& p) { read_llama2c_checkpoint(p); },
        [](const std::string& p) { Llama2cTokenizer{p}; },
    };
    for (const auto& load : loaders) {
        expect_error(ErrorKind::io, [&] { load(dir / "missing.bin"); },
                     {dir / "missing.bin", "cannot open: No such file or directory"});
        expect_error(ErrorKind::io, [&] { load(dir / "folder"); }, {dir / "folder", "not a regular file"});
    }
}

TEST_CASE("writers report an unwritable path as an I/O error naming it") {
    ScratchDir dir;
    const Tensor t = random_tensor({2, 3});
    expect_error(ErrorKind::io, [&] { write_npy(dir / "no/such/dir/t.npy", t); }, {"t.npy", "cannot open for writing"});
    expect_error(ErrorKind::io, [&] { write_npy("/dev/full", t); }, {"/dev/full", "write failed"});
    expect_error(ErrorKind::io,
                 [&] {
                     write_safetensors(dir / "no/such/dir/t.safetensors", {{"t", t}});
                 },
                 {"t.safetensors"});
}

TEST_CASE("run: a directory or a missing file as --weights is a usage error (exit 2) naming it") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    fs::create_directories(dir / "folder");
    for (const std::string& weights : {dir / "folder", dir / "missing.json"}) {
        CommandResult r =
            run_attn_viz("run --weights " + weights + " --input " + (dir / "x.json") + " --out " + (dir / "out"));
        CHECK(r.exit_code == 2);
        CHECK(r.output.find(weights) != std::string::npos);
        CHECK(!fs::exists(dir / "out"));
    }
}

TEST_CASE("run: an .npy reference to a directory is bad input (exit 3) naming the document and the folder") {
    ScratchDir dir;
    write_layer_fixture(dir, 4, 2, 3);
    fs::create_directories(dir / "emb.npy");
    write_text(dir / "xr.json", R"({"embeddings": {"npy": "emb.npy"}})");
    CommandResult r =
        run_attn_viz("run --weights " + (dir / "w.json") + " --input " + (dir / "xr.json") + " --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("xr.json: embeddings refers to an unreadable file: " + (dir / "emb.npy") +
                        ": is a folder, not a regular file") != std::string::npos);
    CHECK(!fs::exists(dir / "out"));
}

}  // TEST_SUITE("reliability")
