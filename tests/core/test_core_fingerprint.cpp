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

}  // TEST_SUITE("core")
