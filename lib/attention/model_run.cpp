#include "model_run.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

void check_model_tokens(const std::vector<int>& tokens, int64_t vocab_size, int64_t max_tokens,
                        const std::string& where) {
    const int64_t T = static_cast<int64_t>(tokens.size());
    if (T == 0) fail_input(where, "no tokens to run");
    if (T > max_tokens)
        fail_input(where, fmt::format("{} tokens exceed the model's sequence length {}", T, max_tokens));
    for (int64_t t = 0; t < T; ++t) {
        const int id = tokens[static_cast<size_t>(t)];
        if (id < 0 || id >= vocab_size)
            fail_input(where, fmt::format("token {} is id {}, outside the vocabulary (0..{})", t, id, vocab_size - 1));
    }
}

Tensor embedding_rows(const Tensor& embedding, const std::vector<int>& tokens) {
    const int64_t T = static_cast<int64_t>(tokens.size()), D = embedding.dim(1);
    Tensor x = Tensor::uninitialized({T, D});
    for (int64_t t = 0; t < T; ++t)
        std::copy_n(embedding.ptr() + tokens[static_cast<size_t>(t)] * D, D, x.ptr() + t * D);
    return x;
}

}  // namespace attn_viz
