// Fingerprints: XXH3-64 of what is added, and their text form.
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#define XXH_INLINE_ALL  // the reference: xxHash's one-shot XXH3_64bits
#include <xxhash.h>

#include "fingerprint.hpp"
#include "support.hpp"

using namespace attn_viz;

TEST_SUITE("core") {

TEST_CASE("Fingerprint is XXH3-64 of everything added, in order") {
    CHECK(Fingerprint().value() == 0x2D06800538D394C2ull);  // XXH3_64bits of no bytes (xxHash's test vector)
    const attn_viz::Tensor t = test_support::random_tensor({3, 5});
    Fingerprint streamed;
    streamed.add_bytes("head", 4);
    streamed.add_int(-7);
    streamed.add_tensor(t);
    std::string whole = "head";
    const int64_t numbers[] = {-7, 2, 3, 5};  // -7, then the rank and the dimensions
    whole.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
    whole.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
    CHECK(streamed.value() == XXH3_64bits(whole.data(), whole.size()));
    // One changed value, or the same values in another shape, is another fingerprint.
    attn_viz::Tensor changed = t;
    changed.data[7] = std::nextafter(changed.data[7], 2.0f);
    attn_viz::Tensor reshaped = t;
    reshaped.shape = {5, 3};
    Fingerprint a, b, c;
    a.add_tensor(t), b.add_tensor(changed), c.add_tensor(reshaped);
    CHECK(a.value() != b.value());
    CHECK(a.value() != c.value());

    CHECK(fingerprint_text(0x0123456789abcdefull) == "0123456789abcdef");
    CHECK(fingerprint_text(0) == "0000000000000000");
    const uint64_t random = test_support::rng()();
    CHECK(parse_fingerprint_text(fingerprint_text(random)) == random);
    for (const char* bad : {"", "0123456789abcde", "0123456789abcdef0", "0123456789ABCDEF", "0123456789abcdeg"})
        CHECK_MESSAGE(!parse_fingerprint_text(bad), bad);
}

TEST_CASE("Fingerprint::add_transposed adds a matrix as add_tensor adds its transpose; anything else as add_tensor") {
    // One value, fewer columns than a tile, columns past one tile and a ragged one, exact tiles,
    // whole 16 x 16 blocks beside a ragged column tile.
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {17, 5}, {3, 40}, {33, 16}, {48, 37}}) {
        CAPTURE(n);
        CAPTURE(k);
        const attn_viz::Tensor m = test_support::random_tensor({n, k});
        attn_viz::Tensor t({k, n});
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < k; ++c) t.data[c * n + r] = m.data[r * k + c];
        Fingerprint by_transpose, direct;
        by_transpose.add_tensor(t), direct.add_transposed(m);
        CHECK(direct.value() == by_transpose.value());
    }
    for (const attn_viz::Tensor& other :
         {attn_viz::Tensor{}, test_support::random_tensor({7}), test_support::random_tensor({2, 3, 4})}) {
        Fingerprint a, b;
        a.add_tensor(other), b.add_transposed(other);
        CHECK(a.value() == b.value());
    }
}

}  // TEST_SUITE("core")
