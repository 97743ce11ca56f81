// The role of a token that Clark et al. 2019 ("What does BERT look at?") measure attention to:
// the token a tokenizer puts before a text ([CLS], <s>), a separator it puts after one ([SEP],
// </s>), punctuation (a token whose text is all Unicode punctuation), or any other token. The
// tokenizer knows them (model_tokenizer.hpp: token_roles); head_stats.hpp averages the mass on them.
#pragma once

#include <cstdint>

namespace attn_viz {

enum class TokenRole : uint8_t { other, start, separator, punctuation };

}  // namespace attn_viz
