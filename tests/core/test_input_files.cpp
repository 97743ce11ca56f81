// The registry of the files a run reads: what counts as the same file, and what is remembered.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "input_files.hpp"
#include "mapped_file.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("core") {

TEST_CASE("a mapped file is an input under every name that reaches it, and no other file is") {
    ScratchDir dir;
    write_text(dir / "w.npy", "weights");
    write_text(dir / "other.npy", "weights");  // same bytes, another file
    fs::create_hard_link(dir / "w.npy", dir / "hard.npy");
    fs::create_symlink(dir / "w.npy", dir / "soft.npy");
    fs::create_symlink(dir / "missing.npy", dir / "dangling.npy");
    CHECK(!input_file_at(AT_FDCWD, dir / "w.npy"));
    { const MappedFile file(dir / "w.npy", ".npy tensor"); }
    for (const char* name : {"w.npy", "hard.npy", "soft.npy"}) {
        CAPTURE(name);
        const std::optional<InputFile> found = input_file_at(AT_FDCWD, dir / name);
        REQUIRE(found);
        CHECK(found->path == dir / "w.npy");
        CHECK(found->role == ".npy tensor");
    }
    for (const char* name : {"other.npy", "dangling.npy", "missing.npy"}) CHECK(!input_file_at(AT_FDCWD, dir / name));
    // Relative to an open folder, as OutputDir looks at a run directory's entries.
    const int folder = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(folder >= 0);
    CHECK(input_file_at(folder, "hard.npy"));
    CHECK(!input_file_at(folder, "other.npy"));
    close(folder);
}

TEST_CASE("a file keeps its first path and its first role; folders are not recorded") {
    ScratchDir dir;
    write_text(dir / "a.json", "{}");
    fs::create_hard_link(dir / "a.json", dir / "b.json");
    record_input_file(dir / "a.json", "");
    CHECK(input_file_at(AT_FDCWD, dir / "a.json")->role.empty());
    { const MappedFile file(dir / "b.json", "weights"); }
    record_input_file(dir / "a.json", "input sequence");
    const std::optional<InputFile> found = input_file_at(AT_FDCWD, dir / "b.json");
    REQUIRE(found);
    CHECK(found->path == dir / "a.json");
    CHECK(found->role == "weights");
    fs::create_directories(dir / "corpus");
    record_input_file(dir / "corpus", "corpus");
    CHECK(!input_file_at(AT_FDCWD, dir / "corpus"));
    record_input_file(dir / "no_such_file", "weights");
    CHECK(!input_file_at(AT_FDCWD, dir / "no_such_file"));
}

TEST_CASE("a record whose path no longer leads to its file does not count (a reused inode is not an input)") {
    ScratchDir dir;
    write_text(dir / "read.json", "{}");
    fs::create_hard_link(dir / "read.json", dir / "kept.json");
    record_input_file(dir / "read.json", "weights");
    CHECK(input_file_at(AT_FDCWD, dir / "kept.json"));
    fs::remove(dir / "read.json");
    CHECK(!input_file_at(AT_FDCWD, dir / "kept.json"));
    write_text(dir / "read.json", "another file under the old name");
    CHECK(!input_file_at(AT_FDCWD, dir / "kept.json"));
    // Recorded again under a name that leads to it, the file counts again, under that name.
    record_input_file(dir / "kept.json", "input sequence");
    const std::optional<InputFile> found = input_file_at(AT_FDCWD, dir / "kept.json");
    REQUIRE(found);
    CHECK(found->path == dir / "kept.json");
    CHECK(found->role == "input sequence");
}

}  // TEST_SUITE("core")
