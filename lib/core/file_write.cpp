#include "file_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <sys/stat.h>

#include "error.hpp"

namespace attn_viz {

namespace {

struct StagedNames {
    std::mutex mutex;
    std::map<std::string, std::string> final_path;  // by staged path
};

StagedNames& staged_names() {
    static StagedNames names;
    return names;
}

// The name the user knows `path` by: its final path when it is a staged file, else itself.
std::string user_name(const std::string& path) {
    StagedNames& names = staged_names();
    const std::lock_guard lock(names.mutex);
    const auto it = names.final_path.find(path);
    return it == names.final_path.end() ? path : it->second;
}

[[noreturn]] void fail_io(const std::string& path, const std::string& what, int error_number) {
    throw Error(ErrorKind::io, fmt::format("{}: {}: {}", path, what, std::strerror(error_number)));
}

}  // namespace

void name_staged_file(const std::string& staged_path, const std::string& final_path) {
    StagedNames& names = staged_names();
    const std::lock_guard lock(names.mutex);
    names.final_path[staged_path] = final_path;
}

void forget_staged_file(const std::string& staged_path) {
    StagedNames& names = staged_names();
    const std::lock_guard lock(names.mutex);
    names.final_path.erase(staged_path);
}

FileWriter::FileWriter(const std::string& path, std::string name_in_errors)
    : name_(name_in_errors.empty() ? user_name(path) : std::move(name_in_errors)) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) fail_io(name_, "cannot open for writing", errno);
}

FileWriter::~FileWriter() {
    if (file_) std::fclose(file_);
}

void FileWriter::write(std::string_view bytes) {
    if (bytes.empty()) return;
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) fail_io(name_, "write failed", errno);
}

void FileWriter::flush() {
    if (std::fflush(file_) != 0) fail_io(name_, "write failed", errno);
}

void FileWriter::close() {
    const bool flushed = std::fflush(file_) == 0;
    const int flush_errno = errno;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) fail_io(name_, "write failed", flushed ? errno : flush_errno);
}

void write_file_bytes(const std::string& path, std::string_view bytes) {
    FileWriter file(path);
    file.write(bytes);
    file.close();
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
    const std::string temporary = fmt::format("{}.tmp-{}", path, ::getpid());
    const std::string shown = user_name(path);  // a staged file's final path
    try {
        FileWriter file(temporary, shown);
        file.write(bytes);
        file.close();
    } catch (const Error&) {
        std::remove(temporary.c_str());
        throw;
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::remove(temporary.c_str());
        throw Error(ErrorKind::io, fmt::format("{}: cannot rename into place: {}", shown, ec.message()));
    }
}

void check_file_destination(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw Error(ErrorKind::usage, fmt::format("{}: is a directory, expected a file name", path));
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {  // a device or FIFO, written directly
        if (::access(path.c_str(), W_OK) != 0) fail_io(path, "cannot write", errno);
        return;
    }
    // Missing folders are created when the file is written (as --out's are): the nearest one
    // that exists must be a folder we can write in.
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    while (!parent.empty() && ::stat(parent.c_str(), &st) != 0 && errno == ENOENT && parent != parent.parent_path())
        parent = parent.parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    const std::string cannot_write = fmt::format("cannot write in {}", dir);
    if (::stat(dir.c_str(), &st) != 0) fail_io(path, cannot_write, errno);
    if (!S_ISDIR(st.st_mode)) fail_io(path, cannot_write, ENOTDIR);
    if (::access(dir.c_str(), W_OK | X_OK) != 0) fail_io(path, cannot_write, errno);
}

}  // namespace attn_viz
