#include "file_digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include "error.hpp"
#include "file_write.hpp"
#include "unique_fd.hpp"

namespace attn_viz {
namespace {

struct DigestContextFree {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

// A SHA-256 being computed, fed piece by piece; hex() ends it.
class Sha256 {
public:
    Sha256() : context_(EVP_MD_CTX_new()) {
        if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1)
            throw Error(ErrorKind::internal, "SHA-256 is not available from libcrypto");
    }
    void add(const void* bytes, size_t size) { EVP_DigestUpdate(context_.get(), bytes, size); }
    std::string hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        EVP_DigestFinal_ex(context_.get(), digest, &length);
        static const char digits[] = "0123456789abcdef";
        std::string text;
        for (unsigned int i = 0; i < length; ++i) text.append({digits[digest[i] >> 4], digits[digest[i] & 15]});
        return text;
    }

private:
    std::unique_ptr<EVP_MD_CTX, DigestContextFree> context_;
};

std::string sha256_of(std::string_view text) {
    Sha256 digest;
    digest.add(text.data(), text.size());
    return digest.hex();
}

[[noreturn]] void fail_read(const std::string& path) {
    throw Error(ErrorKind::io, fmt::format("{}: cannot read it to hash it: {}", path, std::strerror(errno)));
}

// The digest cache's folder (file_digest.hpp), or nothing when it is off or has no home.
std::optional<std::filesystem::path> cache_folder() {
    const char* off = std::getenv("ATTN_VIZ_NO_CACHE");
    if (off && std::string_view(off) == "1") return std::nullopt;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')
        return std::filesystem::path(xdg) / "attn-viz" / "sha256";  // the spec ignores relative ones
    const char* home = std::getenv("HOME");
    if (home && home[0] == '/') return std::filesystem::path(home) / ".cache" / "attn-viz" / "sha256";
    return std::nullopt;
}

int64_t nanoseconds(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// What identifies one state of a file's content without reading it. A write to the file changes
// its mtime and ctime, and ctime cannot be set back by anyone but the clock, so a file that
// matches every field holds the content it held when hashed.
std::string cache_key(const std::string& path, const struct stat& st) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return fmt::format("{}\nsize {} mtime {} ctime {} inode {} device {}", ec ? path : absolute.string(),
                       static_cast<int64_t>(st.st_size), nanoseconds(st.st_mtim), nanoseconds(st.st_ctim),
                       static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev));
}

constexpr std::string_view entry_header = "attn-viz sha256 cache 1\n";
constexpr size_t hex_digits = 64;

// An entry's bytes: entry_header, the key, "\n", the digest, "\n", then the SHA-256 of everything
// before that newline and "\n" (a damaged entry fails it).
std::string entry_text(const std::string& key, const std::string& digest) {
    const std::string body = fmt::format("{}{}\n{}", entry_header, key, digest);
    return fmt::format("{}\n{}\n", body, sha256_of(body));
}

// The digest an entry holds for `key`, or nothing when the entry is missing, unreadable, for
// another key or damaged.
std::optional<std::string> read_entry(const std::filesystem::path& file, const std::string& key) {
    const UniqueFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return std::nullopt;
    const size_t expected = entry_header.size() + key.size() + 2 * (1 + hex_digits + 1) - 1;
    std::string text(expected + 1, '\0');  // one byte more: a longer file is not this entry
    size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    if (got != expected) return std::nullopt;
    text.resize(got);
    const size_t digest_at = entry_header.size() + key.size() + 1;
    const std::string digest = text.substr(digest_at, hex_digits);
    if (digest.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    if (text != entry_text(key, digest)) return std::nullopt;
    return digest;
}

// Stores the entry, atomically (a reader sees the old entry or the new one, never a part). Only
// for a file last changed 2 s or more ago: a write within the same timestamp tick as the hashing
// (seconds on some filesystems) would leave every key field as it was. Errors only lose the entry.
void write_entry(const std::filesystem::path& folder, const std::filesystem::path& file, const std::string& key,
                 const std::string& digest, const struct stat& st) {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    constexpr int64_t settled = 2'000'000'000;
    if (nanoseconds(now) - std::max(nanoseconds(st.st_mtim), nanoseconds(st.st_ctim)) < settled) return;
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) return;
    try {
        write_file_atomically(file.string(), entry_text(key, digest));
    } catch (const Error&) {}
}

std::string hash_open_file(int fd, const std::string& path) {
    Sha256 digest;
    std::vector<unsigned char> block(1 << 20);
    while (true) {
        const ssize_t n = read(fd, block.data(), block.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail_read(path);
        if (n == 0) break;
        digest.add(block.data(), static_cast<size_t>(n));
    }
    return digest.hex();
}

}  // namespace

std::string file_sha256(const std::string& path) {
    const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) fail_read(path);
    struct stat before {};
    const std::optional<std::filesystem::path> folder = cache_folder();
    if (!folder || fstat(fd.get(), &before) != 0 || !S_ISREG(before.st_mode)) return hash_open_file(fd.get(), path);
    const std::string key = cache_key(path, before);
    const std::filesystem::path entry = *folder / sha256_of(key).substr(0, 32);
    if (std::optional<std::string> cached = read_entry(entry, key)) return *cached;
    const std::string digest = hash_open_file(fd.get(), path);
    struct stat after {};
    // A file that changed while it was read has no digest of one state to keep.
    if (fstat(fd.get(), &after) == 0 && cache_key(path, after) == key) write_entry(*folder, entry, key, digest, after);
    return digest;
}

}  // namespace attn_viz
