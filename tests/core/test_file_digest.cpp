// SHA-256 of files and the list of recorded inputs: what a run's provenance is made of.
#include <algorithm>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "error.hpp"
#include "file_digest.hpp"
#include "input_files.hpp"
#include "mapped_file.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("core") {

TEST_CASE("file_sha256 gives the standard digests and agrees with sha256sum on random files of several sizes") {
    ScratchDir dir;
    write_text(dir / "empty", "");
    CHECK(file_sha256(dir / "empty") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    write_text(dir / "abc", "abc");
    CHECK(file_sha256(dir / "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // Across the 1 MB read block: one byte short of it, exactly it, and past it.
    for (const size_t size : {size_t{1}, size_t{(1 << 20) - 1}, size_t{1 << 20}, size_t{(1 << 20) * 2 + 77}}) {
        CAPTURE(size);
        std::string bytes(size, '\0');
        for (char& c : bytes) c = static_cast<char>(rng()());
        write_text(dir / "random", bytes);
        const CommandResult expected = run_command("sha256sum '" + (dir / "random") + "'");
        REQUIRE(expected.exit_code == 0);
        CHECK(file_sha256(dir / "random") == expected.output.substr(0, 64));
    }
    CHECK_THROWS_AS(file_sha256(dir / "missing"), Error);
    CHECK_THROWS_AS(file_sha256(dir.path().string()), Error);  // a folder cannot be read
}

TEST_CASE("recorded_input_files lists each file read once, by its first name, sorted, and forgets replaced ones") {
    ScratchDir dir;
    write_text(dir / "b.npy", "b");
    write_text(dir / "a.json", "a");
    write_text(dir / "gone.npy", "g");
    fs::create_symlink(dir / "b.npy", dir / "link.npy");
    {
        const MappedFile b(dir / "b.npy", ".npy tensor"), a(dir / "a.json", "weights"),
            g(dir / "gone.npy", ".npy tensor");
    }
    { const MappedFile again(dir / "link.npy", "other role"); }
    fs::remove(dir / "gone.npy");
    std::vector<InputFile> mine;
    for (const InputFile& f : recorded_input_files())
        if (f.path.rfind(dir.path().string(), 0) == 0) mine.push_back(f);
    REQUIRE(mine.size() == 2);
    CHECK(mine[0].path == dir / "a.json");
    CHECK(mine[0].role == "weights");
    CHECK(mine[1].path == dir / "b.npy");
    CHECK(mine[1].role == ".npy tensor");
}

}  // TEST_SUITE("core")
