// The one place an input file is opened for reading. open(2) of a named pipe waits for a writer
// and a folder or device opens as if it were a file, so every input is opened without blocking
// and refused, naming what it is, unless it is a regular file: a hostile path fails at once.
#pragma once

#include <string>

#include <sys/types.h>

#include "unique_fd.hpp"

namespace attn_viz {

// Opens `path` for reading (blocking reads) and records it as an input read as `role`
// (input_files.hpp). Throws Error(io) "<path>: cannot open: <reason>" when it cannot be opened,
// and Error(io) "<path>: is a named pipe (FIFO), not a regular file" (a folder, a character or block
// device, a socket) when it is not a regular file.
UniqueFd open_input_file(const std::string& path, const std::string& role);

// What a file that is not a regular file is, for "<path>: is <this>, not a regular file": "a folder",
// "a named pipe (FIFO)", "a character device", "a block device", "a socket" (`mode`: stat's st_mode).
const char* file_type_name(mode_t mode);

}  // namespace attn_viz
