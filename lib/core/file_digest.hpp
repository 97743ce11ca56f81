// SHA-256 of a whole file (OpenSSL's libcrypto), for the provenance a run records of every file
// it read: anyone can check a file against it with `sha256sum`.
//
// Digests are kept in a cache so that an unchanged input is not read again by the next run: one
// small file per digest in $XDG_CACHE_HOME/attn-viz/sha256/ (else ~/.cache/attn-viz/sha256/),
// named by a hash of its key: the file's absolute path, size, mtime and ctime in nanoseconds,
// inode and device. An entry is used only when every field matches and its own checksum holds
// (entry: "attn-viz sha256 cache 1\n", the key, "\n", the digest, "\n", then the SHA-256 of all
// before that newline, and "\n"). It is written atomically (temporary file, rename), and only for
// a file last changed 2 s or more before it was hashed, so a write in the same timestamp tick
// cannot go unseen. Any error reading or writing the cache falls back to hashing the file.
// ATTN_VIZ_NO_CACHE=1 turns the cache off.
#pragma once

#include <string>

namespace attn_viz {

// 64 lower-case hex digits of the file's SHA-256, read in 1 MB blocks (any size, constant
// memory) unless the cache holds it. Throws Error(io) naming the path when it cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace attn_viz
