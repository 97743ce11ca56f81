// Fingerprints: 64-bit XXH3 hashes (xxHash 0.8, XXH3_64bits, seed 0) of what a result was
// computed from, so that results of different inputs are not mixed and the same input is not
// counted twice (docs/analysis.md, "Fingerprints").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tensor.hpp"

namespace attn_viz {

// XXH3_64bits of the concatenation of everything added (streaming: nothing is copied).
class Fingerprint {
public:
    Fingerprint();
    ~Fingerprint();
    Fingerprint(const Fingerprint&) = delete;
    Fingerprint& operator=(const Fingerprint&) = delete;

    void add_bytes(const void* data, size_t size);
    void add_int(int64_t value);       // its 8 bytes, little-endian
    void add_tensor(const Tensor& t);  // the rank, each dimension (add_int), then the float32 values' bytes
    // A matrix m: [n, k] as add_tensor adds its transpose [k, n] (anything else as add_tensor): the
    // feed-forward and classifier weights, kept [k, n] when fingerprints were defined.
    void add_transposed(const Tensor& m);
    uint64_t value() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// 16 lower-case hex digits, as fingerprints are written in files.
std::string fingerprint_text(uint64_t fingerprint);
// The inverse; nothing for anything that is not exactly 16 hex digits.
std::optional<uint64_t> parse_fingerprint_text(std::string_view text);

}  // namespace attn_viz
