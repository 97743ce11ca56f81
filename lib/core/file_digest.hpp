// SHA-256 of a whole file (OpenSSL's libcrypto), for the provenance a run records of every file
// it read: anyone can check a file against it with `sha256sum`.
#pragma once

#include <string>

namespace attn_viz {

// 64 lower-case hex digits of the file's SHA-256, read in 1 MB blocks (any size, constant
// memory). Throws Error(io) naming the path when it cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace attn_viz
