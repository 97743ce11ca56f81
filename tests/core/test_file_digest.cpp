// SHA-256 of files (and the cache of their digests) and the list of recorded inputs: what a run's
// provenance is made of.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"
#include "file_digest.hpp"
#include "input_files.hpp"
#include "mapped_file.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Sets (or with nullopt unsets) an environment variable for the object's life, then restores it.
class ScopedEnv {
public:
    ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            setenv(name, value->c_str(), 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

std::vector<fs::path> cache_entries(const fs::path& folder) {
    std::vector<fs::path> entries;
    if (fs::is_directory(folder))
        for (const fs::directory_entry& entry : fs::directory_iterator(folder)) entries.push_back(entry.path());
    return entries;
}

// sha256sum's digest of a file, independent of file_sha256 and its cache.
std::string sha256sum(const std::string& path) {
    const CommandResult result = run_command("sha256sum '" + path + "'");
    REQUIRE(result.exit_code == 0);
    return result.output.substr(0, 64);
}

}  // namespace

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

TEST_CASE("file_sha256's cache: reused for an unchanged file, missed after any change, ignored when damaged or off") {
    ScratchDir dir;
    const ScopedEnv cache_home("XDG_CACHE_HOME", dir.path().string() + "/cache"), on("ATTN_VIZ_NO_CACHE", std::nullopt);
    const fs::path folder = dir.path() / "cache" / "attn-viz" / "sha256";
    const std::string file = dir / "weights.bin", fresh = dir / "fresh.bin";
    write_text(file, "the weights of a model");
    // Entries are kept only for files last changed 2 s or more before they were hashed.
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    write_text(fresh, "just written");
    CHECK(file_sha256(fresh) == sha256sum(fresh));
    CHECK(cache_entries(folder).empty());

    const std::string digest = sha256sum(file);
    CHECK(file_sha256(file) == digest);
    const std::vector<fs::path> entries = cache_entries(folder);
    REQUIRE(entries.size() == 1);
    CHECK(file_sha256(file) == digest);  // hashed twice: the same digest
    CHECK(cache_entries(folder).size() == 1);

    // The entry is what the second call returns: one holding another digest, with its checksum
    // made right (the format in file_digest.hpp), is believed while the file matches its key.
    const std::string entry = read_text(entries[0].string());
    const size_t digest_at = entry.find("\n" + digest + "\n");
    REQUIRE(digest_at != std::string::npos);
    const std::string forged(64, 'a'), body = entry.substr(0, digest_at + 1) + forged;
    write_text(dir / "body", body);
    write_text(entries[0].string(), body + "\n" + sha256sum(dir / "body") + "\n");
    CHECK(file_sha256(file) == forged);
    {
        const ScopedEnv off("ATTN_VIZ_NO_CACHE", "1");
        CHECK(file_sha256(file) == digest);
    }

    // Damaged entries are ignored: a digest digit changed without its checksum, cut short, empty.
    std::string damaged = entry;
    damaged[digest_at + 1] = digest[0] == '0' ? '1' : '0';
    for (const std::string& text : {damaged, entry.substr(0, entry.size() - 5), std::string()}) {
        write_text(entries[0].string(), text);
        CHECK(file_sha256(file) == digest);
    }

    // A changed file misses: another size, then the same size with other bytes and an mtime set
    // back into the past.
    write_text(entries[0].string(), body + "\n" + sha256sum(dir / "body") + "\n");  // the forged entry again
    write_text(file, "the weights of a model, tuned");
    CHECK(file_sha256(file) == sha256sum(file));
    write_text(file, "the weights of a model, TUNED");
    fs::last_write_time(file, fs::last_write_time(file) - std::chrono::hours(1));
    const std::string same_size = sha256sum(file);
    CHECK(same_size != digest);
    CHECK(file_sha256(file) == same_size);

    // A cache folder that cannot be made costs only the cache.
    write_text(dir / "not_a_folder", "");
    const ScopedEnv blocked("XDG_CACHE_HOME", dir / "not_a_folder");
    CHECK(file_sha256(file) == same_size);
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
