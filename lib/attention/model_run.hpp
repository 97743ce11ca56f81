// What a whole-model forward pass produces (WholeModel): every layer's attention
// for drawing and analysis, the final hidden states and, for decoders, the next-token logits.
#pragma once

#include <string>
#include <vector>

#include "layer_result.hpp"

namespace attn_viz {

struct ModelRun {
    std::vector<int> tokens;          // the T input ids
    std::vector<int> token_types;     // their T token types (a text pair's segments), or empty: all 0
    std::vector<LayerResult> layers;  // per block: attention [H, T, T], margins, context, output, ...
    std::vector<Tensor> residual;     // per block, [T, D]: the residual stream entering it
    Tensor final_residual;            // [T, D] the residual stream after the last block, before the final norm
    Tensor hidden_states;             // [T, D] after the last block (and the final norm, when the model has one)
    Tensor logits;                    // [T, V]: row t predicts token t + 1; empty for an encoder (BERT)
};

// Checks a run's input: 1 <= T <= max_tokens ids, each in [0, vocab_size); Error(bad_input)
// "<where>: token 1 is id 600, outside the vocabulary (0..511)" otherwise (`where` names the ids
// as the caller was given them: "--tokens", "the target").
void check_model_tokens(const std::vector<int>& tokens, int64_t vocab_size, int64_t max_tokens,
                        const std::string& where = "tokens");

// The rows of `embedding` ([V, D]) for `tokens` (checked ids): [T, D].
Tensor embedding_rows(const Tensor& embedding, const std::vector<int>& tokens);

}  // namespace attn_viz
