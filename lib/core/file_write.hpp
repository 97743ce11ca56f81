// Writing whole files, with errors that name the file: the one place the library writes bytes.
#pragma once

#include <string>
#include <string_view>

namespace attn_viz {

// Writes `bytes` to `path`. Throws Error(io, "<path>: <reason>") if it cannot be opened or written
// (disk full included).
void write_file_bytes(const std::string& path, std::string_view bytes);

// The same through a temporary name in the same directory renamed into place, so readers never
// see half of the file. (Run directories get this from OutputDir's staging already.)
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace attn_viz
