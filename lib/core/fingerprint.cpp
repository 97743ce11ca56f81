#include "fingerprint.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#define XXH_INLINE_ALL  // header-only: no run-time library, and sanitizer builds instrument it too
#include <xxhash.h>

#include "transpose.hpp"

namespace attn_viz {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fingerprints hash the bytes of little-endian numbers");

struct Fingerprint::State {
    XXH3_state_t xxh3;
};

Fingerprint::Fingerprint() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->xxh3); }

Fingerprint::~Fingerprint() = default;

void Fingerprint::add_bytes(const void* data, size_t size) {
    if (size > 0) XXH3_64bits_update(&state_->xxh3, data, size);
}

void Fingerprint::add_int(int64_t value) { add_bytes(&value, sizeof value); }

void Fingerprint::add_transposed(const Tensor& m) {
    if (m.rank() != 2) return add_tensor(m);
    const int64_t n = m.dim(0), k = m.dim(1);
    for (int64_t d : {int64_t{2}, k, n}) add_int(d);
    // Rows of the transpose (columns of m) a stripe of 64 at a time.
    constexpr int64_t stripe = 64;
    std::vector<float> rows(static_cast<size_t>(stripe * n));
    for (int64_t c0 = 0; c0 < k; c0 += stripe) {
        const int64_t width = std::min(stripe, k - c0);
        transpose_into(m.ptr() + c0, n, width, k, rows.data(), n);
        add_bytes(rows.data(), static_cast<size_t>(width * n) * sizeof(float));
    }
}

void Fingerprint::add_tensor(const Tensor& t) {
    add_int(static_cast<int64_t>(t.shape.size()));
    for (int64_t d : t.shape) add_int(d);
    add_bytes(t.data.data(), t.data.size() * sizeof(float));
}

uint64_t Fingerprint::value() const { return XXH3_64bits_digest(&state_->xxh3); }

std::string fingerprint_text(uint64_t fingerprint) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string text(16, '0');
    for (int i = 15; i >= 0; --i, fingerprint >>= 4) text[static_cast<size_t>(i)] = hex[fingerprint & 0xF];
    return text;
}

std::optional<uint64_t> parse_fingerprint_text(std::string_view text) {
    if (text.size() != 16) return std::nullopt;
    uint64_t value = 0;
    for (char c : text) {
        int digit = -1;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        if (digit < 0) return std::nullopt;
        value = value << 4 | static_cast<uint64_t>(digit);
    }
    return value;
}

}  // namespace attn_viz
