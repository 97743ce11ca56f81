// The weights of an encoder-decoder transformer (BART, T5) in attn-viz's convention (every matrix
// x W): an encoder stack of self-attention blocks, a decoder stack whose blocks add cross-attention
// (queries from the decoder, keys and values from the encoder's output) between their causal
// self-attention and their feed-forward, one token embedding shared by both and the classifier.
// Blocks are BlockWeights run by the same norm, feed-forward and residual rules as
// ModelWeights' (model_weights.hpp):
//   BART: layer_norm, plain GELU feed-forward, post_norm, learned positions (offset 2 removed),
//         layernorm_embedding on each stack's embeddings, embeddings x sqrt(D) when scale_embedding.
//   T5:   rms (no mean, no bias), plain ReLU (v1.0) or gated GELU (v1.1) feed-forward, pre_norm, no
//         bias anywhere, scores not scaled by 1/sqrt(d_h), a relative position bias per stack
//         (layer 0's table, shared by every layer of the stack), a final norm per stack.
#pragma once

#include <cstdint>
#include <vector>

#include "layer_weights.hpp"
#include "model_weights.hpp"
#include "tensor.hpp"

namespace attn_viz {

// T5's relative position bias of one stack: score (i, j) of head h gains table[bucket(j - i), h]
// (relative_position_bias.hpp), bidirectional buckets in the encoder, causal ones in the decoder.
struct RelativePositionTable {
    Tensor table;                // [buckets, H], or empty: no relative positions (BART)
    int64_t max_distance = 128;  // relative_attention_max_distance
};

// What a stack adds around its blocks.
struct StackWeights {
    Tensor positions;            // [max_tokens, D] learned positions, row t for position t; or empty
    NormWeights embedding_norm;  // on the embeddings (BART's layernorm_embedding), or empty
    NormWeights final_norm;      // after the last block (T5's final_layer_norm), or empty
    RelativePositionTable relative_positions;
};

struct DecoderBlockWeights {
    BlockWeights block;                // causal self-attention, its norm, the feed-forward and its norm
    LayerWeights cross_attention;      // queries [D, H*d_h] from the decoder; keys, values from the encoder
    NormWeights cross_attention_norm;  // pre_norm: before cross-attention; post_norm: after it and the residual add
};

struct Seq2SeqConfig {
    // Both stacks' blocks: sizes, norm, feed-forward, activation, residual layout, embedding
    // scale; n_layers is the encoder's, max_tokens bounds the source and the target alike.
    ModelConfig blocks;
    int64_t n_decoder_layers = 0;
    int decoder_start_token_id = 0;  // the first decoder input of --generate
    float classifier_scale = 1.0f;   // decoder output times this before the classifier (T5 tied: D^-1/2)
};

struct Seq2SeqWeights {
    Seq2SeqConfig config;
    Tensor token_embedding;  // [V, D], shared by the encoder and the decoder
    StackWeights encoder_stack, decoder_stack;
    std::vector<BlockWeights> encoder;
    std::vector<DecoderBlockWeights> decoder;
    Tensor classifier;       // [V, D], a row per token (linear_out_in)
    Tensor classifier_bias;  // [V] (BART's final_logits_bias), or empty
};

}  // namespace attn_viz
