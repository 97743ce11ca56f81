#include "input_open.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "error.hpp"
#include "input_files.hpp"

namespace attn_viz {

const char* file_type_name(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

UniqueFd open_input_file(const std::string& path, const std::string& role) {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; O_NOCTTY: a
    // terminal device never becomes the controlling terminal.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd) throw Error(ErrorKind::io, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw Error(ErrorKind::io, fmt::format("{}: cannot read its type: {}", path, std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
        throw Error(ErrorKind::io, fmt::format("{}: is {}, not a regular file", path, file_type_name(st.st_mode)));
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
        throw Error(ErrorKind::io, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    record_input_file(fd.get(), path, role);
    return fd;
}

}  // namespace attn_viz
