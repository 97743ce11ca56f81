#include "file_digest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "error.hpp"
#include "unique_fd.hpp"

namespace attn_viz {
namespace {

struct DigestContextFree {
    void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

[[noreturn]] void fail_read(const std::string& path) {
    throw Error(ErrorKind::io, fmt::format("{}: cannot read it to hash it: {}", path, std::strerror(errno)));
}

}  // namespace

std::string file_sha256(const std::string& path) {
    const UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) fail_read(path);
    const std::unique_ptr<EVP_MD_CTX, DigestContextFree> context(EVP_MD_CTX_new());
    if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1)
        throw Error(ErrorKind::internal, "SHA-256 is not available from libcrypto");
    std::vector<unsigned char> block(1 << 20);
    while (true) {
        const ssize_t n = read(fd.get(), block.data(), block.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail_read(path);
        if (n == 0) break;
        EVP_DigestUpdate(context.get(), block.data(), static_cast<size_t>(n));
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(context.get(), digest, &length);
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) text.append({hex[digest[i] >> 4], hex[digest[i] & 15]});
    return text;
}

}  // namespace attn_viz
