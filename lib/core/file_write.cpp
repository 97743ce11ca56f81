#include "file_write.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "error.hpp"

namespace attn_viz {

void write_file_bytes(const std::string& path, std::string_view bytes) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) throw Error(ErrorKind::io, path + ": cannot open for writing: " + std::strerror(errno));
    const size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
    const int write_errno = errno;
    const bool closed = std::fclose(file) == 0;
    if (written != bytes.size() || !closed)
        throw Error(ErrorKind::io, path + ": write failed: " + std::strerror(written != bytes.size() ? write_errno : errno));
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
    const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
    try {
        write_file_bytes(temporary, bytes);
    } catch (const Error&) {
        std::remove(temporary.c_str());
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw Error(ErrorKind::io, path + ": cannot rename into place: " + ec.message());
    }
}

}  // namespace attn_viz
