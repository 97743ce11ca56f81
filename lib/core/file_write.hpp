// Writing files, with errors that name the file and say why (strerror): the one place the
// library writes bytes.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace attn_viz {

// A file written piece by piece (an .npy header, then its data, without joining them in memory).
// Every failure throws Error(io, "<name>: <what failed>: <strerror(errno)>"), where the name is
// `name_in_errors`, or when that is empty the name given to `path` by name_staged_file(), or
// `path` itself.
class FileWriter {
public:
    explicit FileWriter(const std::string& path, std::string name_in_errors = "");  // creates or truncates
    ~FileWriter();  // closes a file close() was not called for (after an error)
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;

    void write(std::string_view bytes);
    void flush();  // hands what was written so far to the system (a full disk may show only at close)
    void close();  // flushes and closes; a full disk often shows only here

private:
    std::string name_;
    std::FILE* file_ = nullptr;
};

// A file written under a temporary name (a run's staging folder, report/output_dir.hpp) that
// will be moved to `final_path`: FileWriter's errors about `staged_path` name `final_path`, the
// file the user asked for ("out/stats.json: write failed: No space left on device"), unless the
// writer is given a name of its own. forget_staged_file() drops the record.
void name_staged_file(const std::string& staged_path, const std::string& final_path);
void forget_staged_file(const std::string& staged_path);

// Writes `bytes` to `path` (FileWriter's errors).
void write_file_bytes(const std::string& path, std::string_view bytes);

// The same through a temporary name in the same directory renamed into place, so readers never
// see half of the file. (Run directories get this from OutputDir's staging already.) Errors
// name `path`, or the final path name_staged_file() gave it.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Checks, before any work, that a file can be created at `path`: refuses (Error usage) a path
// that is a directory, and (Error io, with the reason) one whose nearest existing ancestor
// folder is not a folder or is not writable (missing folders below it are the writer's to
// create). An existing file is fine (it will be replaced); an
// existing device or FIFO (/dev/stdout) must be writable itself.
void check_file_destination(const std::string& path);

}  // namespace attn_viz
