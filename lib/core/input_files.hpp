// The files this process reads: every loader records each file as it opens it (MappedFile does
// so for all of them), so that nothing the run writes can replace or remove one. Files are known
// by identity (device, inode), whatever name a destination reaches them by.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn_viz {

struct InputFile {
    std::string path;  // the name it was opened by
    std::string role;  // what it was read as ("weights", ".npy tensor"); "" when not said
};

// Records the file open as `fd`, opened by the name `path`, as an input. Only regular files are
// kept. A file recorded twice keeps its first path and its first non-empty role.
void record_input_file(int fd, const std::string& path, const std::string& role);

// The same for a file named by `path` (stat(2), following symbolic links); a missing file or a
// folder records nothing.
void record_input_file(const std::string& path, const std::string& role);

// The input that the entry `name` of the open folder `dir_fd` (AT_FDCWD: a path) is, or
// nothing: the entry itself (a hard link of an input) or, when it is a symbolic link, the file it
// leads to. A record whose own path no longer leads to its file (deleted or replaced since it was
// read) does not count, so a reused inode number is never mistaken for an input.
std::optional<InputFile> input_file_at(int dir_fd, const std::string& name);

// Every file recorded so far whose path still leads to it, sorted by path: what the run read
// (its provenance, with file_sha256()).
std::vector<InputFile> recorded_input_files();

}  // namespace attn_viz
