#include "token_ids.hpp"

#include <map>
#include <random>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

std::vector<int64_t> token_ids_from_labels(const std::vector<std::string>& tokens) {
    std::map<std::string, int64_t> ids;
    std::vector<int64_t> out;
    for (const std::string& t : tokens) out.push_back(ids.emplace(t, static_cast<int64_t>(ids.size())).first->second);
    return out;
}

std::vector<int64_t> repeated_random_tokens(int64_t n, int64_t vocab_begin, int64_t vocab_end, uint64_t seed) {
    if (n < 1 || vocab_end <= vocab_begin)
        throw Error(ErrorKind::usage, fmt::format("an induction sequence needs a length >= 1 and a non-empty "
                                                  "vocabulary range, got length {}, range [{}, {})",
                                                  n, vocab_begin, vocab_end));
    std::mt19937_64 generator(seed);
    const uint64_t range = static_cast<uint64_t>(vocab_end - vocab_begin);
    std::vector<int64_t> tokens(static_cast<size_t>(2 * n));
    for (int64_t i = 0; i < n; ++i) {
        // Rejection sampling keeps the draw uniform and independent of the standard library's
        // distribution implementation, so a seed gives the same tokens everywhere.
        const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
        uint64_t x;
        do x = generator();
        while (x >= limit);
        tokens[static_cast<size_t>(i)] = tokens[static_cast<size_t>(i + n)] =
            vocab_begin + static_cast<int64_t>(x % range);
    }
    return tokens;
}

}  // namespace attn_viz
