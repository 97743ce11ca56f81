// Writing files, with errors that name the file and say why (strerror): the one place the
// library writes bytes.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace attn_viz {

// A file written piece by piece (an .npy header, then its data, without joining them in memory).
// Every failure throws Error(io, "<name>: <what failed>: <strerror(errno)>"), where the name is
// `name_in_errors`, or `path` when that is empty.
class FileWriter {
public:
    explicit FileWriter(const std::string& path, std::string name_in_errors = "");  // creates or truncates
    ~FileWriter();                          // closes a file close() was not called for (after an error)
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;

    void write(std::string_view bytes);
    void flush();  // hands what was written so far to the system (a full disk may show only at close)
    void close();  // flushes and closes; a full disk often shows only here

private:
    std::string name_;
    std::FILE* file_ = nullptr;
};

// Writes `bytes` to `path` (FileWriter's errors).
void write_file_bytes(const std::string& path, std::string_view bytes);

// The same through a temporary name in the same directory renamed into place, so readers never
// see half of the file. (Run directories get this from OutputDir's staging already.) Errors
// name `path`.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Checks, before any work, that a file can be created at `path`: refuses (Error usage) a path
// that is a directory, and (Error io, with the reason) one whose nearest existing ancestor
// folder is not a folder or is not writable (missing folders below it are the writer's to
// create). An existing file is fine (it will be replaced); an
// existing device or FIFO (/dev/stdout) must be writable itself.
void check_file_destination(const std::string& path);

}  // namespace attn_viz
