#include "atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "error.hpp"

namespace attn_viz {

void write_file_atomically(const std::string& path, const std::string& contents) {
    const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
    FILE* file = std::fopen(temporary.c_str(), "wb");
    if (!file) throw Error(ErrorKind::io, path + ": cannot write: " + std::strerror(errno));
    const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
    const int saved_errno = errno;
    if (std::fclose(file) != 0 || !written) {
        std::remove(temporary.c_str());
        throw Error(ErrorKind::io, path + ": write failed: " + std::strerror(written ? errno : saved_errno));
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw Error(ErrorKind::io, path + ": cannot rename into place: " + ec.message());
    }
}

}  // namespace attn_viz
