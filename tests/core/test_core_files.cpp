// Errors that name the file: element_count's messages, FileWriter's errors (with strerror) and
// check_file_destination.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "file_write.hpp"
#include "support.hpp"

using namespace attn_viz;
using test_support::expect_error;

TEST_SUITE("core") {

TEST_CASE("element_count names the file or tensor whose shape is negative or overflows") {
    CHECK(element_count({2, 3, 4}, "x.npy") == 24);
    CHECK(element_count({}, "x.npy") == 1);
    CHECK(element_count({0, int64_t{1} << 62, 5}, "x.npy") == 0);
    expect_error(ErrorKind::bad_input,
                 [] {
                     element_count({int64_t{1} << 31, int64_t{1} << 31, 4}, "big.npy");
                 },
                 {"big.npy: ", "more than 2^62 elements"});
    expect_error(ErrorKind::bad_input, [] { element_count({3, -1}, "neg.npy"); }, {"neg.npy: ", "negative dimension"});
}

TEST_CASE("file write errors name the user's path and say why") {
    test_support::ScratchDir dir;
    const std::string missing = dir / "no/such/dir/out.json";
    expect_error(ErrorKind::io, [&] { write_file_bytes(missing, "x"); },
                 {missing + ": cannot open for writing: No such file or directory"});
    // The temporary name stays internal: the message names the file the user asked for.
    expect_error(ErrorKind::io, [&] { write_file_atomically(missing, "x"); },
                 {missing + ": cannot open for writing: No such file or directory"});
    expect_error(ErrorKind::io, [] { write_file_bytes("/dev/full", std::string(1 << 16, 'x')); },
                 {"/dev/full: write failed: No space left on device"});
    FileWriter pieces(dir / "pieces.bin");
    pieces.write("ab");
    pieces.write("");
    pieces.write("cd");
    pieces.close();
    CHECK(test_support::read_text(dir / "pieces.bin") == "abcd");
}

TEST_CASE(
    "check_file_destination: refuses a directory or a non-directory ancestor, accepts missing folders, before any "
    "work") {
    test_support::ScratchDir dir;
    test_support::write_text(dir / "file.txt", "x");
    check_file_destination(dir / "new.npy");   // a new file in an existing directory
    check_file_destination(dir / "file.txt");  // an existing file is replaced
    check_file_destination("/dev/null");       // a device is written directly
    const std::string cwd = std::filesystem::current_path().string();
    std::filesystem::current_path(dir.path());
    check_file_destination("relative.npy");  // the current directory
    std::filesystem::current_path(cwd);
    expect_error(ErrorKind::usage, [&] { check_file_destination(dir.path().string()); }, {"is a directory"});
    check_file_destination(dir / "nodir/deeper/a.npy");  // missing folders are created by the writer
    expect_error(ErrorKind::io, [&] { check_file_destination(dir / "file.txt/a.npy"); },
                 {dir / "file.txt/a.npy", "cannot write in " + (dir / "file.txt") + ": Not a directory"});
    expect_error(ErrorKind::io, [&] { check_file_destination(dir / "file.txt/sub/a.npy"); },
                 {"cannot write in " + (dir / "file.txt/sub") + ": Not a directory"});
    if (::geteuid() != 0) {  // root may write anywhere
        std::filesystem::create_directories(dir / "locked");
        std::filesystem::permissions(dir / "locked",
                                     std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
        expect_error(ErrorKind::io, [&] { check_file_destination(dir / "locked/a.npy"); }, {"Permission denied"});
        std::filesystem::permissions(dir / "locked", std::filesystem::perms::owner_all);
    }
    CHECK(!std::filesystem::exists(dir / "new.npy"));  // only checked, nothing created
    CHECK(!std::filesystem::exists(dir / "nodir"));
}

}  // TEST_SUITE("core")
