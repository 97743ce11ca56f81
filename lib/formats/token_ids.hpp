// Token ids made without a tokenizer: from labels (for duplicate-token statistics of a layer
// input) and random repeated sequences (the induction test input).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn_viz {

// Token ids for the duplicate-token and induction scores from token strings: equal strings get
// equal ids (first occurrence order).
std::vector<int64_t> token_ids_from_labels(const std::vector<std::string>& tokens);

// The input for an induction test (`attn-viz model --induction N`): N token ids drawn uniformly
// from [vocab_begin, vocab_end) with a seeded generator, then the same N again (2N ids).
std::vector<int64_t> repeated_random_tokens(int64_t n, int64_t vocab_begin, int64_t vocab_end, uint64_t seed);

}  // namespace attn_viz
