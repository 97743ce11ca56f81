// Writing a whole file so that readers never see half of it: write a temporary name in the same
// directory, then rename it into place.
#pragma once

#include <string>

namespace attn_viz {

// Throws Error(io, "<path>: <reason>") if the file cannot be written or renamed.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace attn_viz
