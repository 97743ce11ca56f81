// GPT-2 ("gpt2"), GPT-NeoX ("gptneox", Pythia) and BERT ("bert") models from GGUF files, as llama.cpp's
// convert_hf_to_gguf.py writes them, read into ModelWeights as the Hugging Face folders
// (hf_transformer_checkpoint.hpp) are, so one forward pass runs either.
//   all      <arch>.block_count, .context_length (the longest run), .embedding_length,
//            .feed_forward_length, .attention.head_count (.head_count_kv, if present, equal),
//            .attention.layer_norm_epsilon (default 1e-5, BERT's 1e-12); token_embd [V, D].
//   gpt2, gptneox
//            blk.N.{attn_norm, ffn_norm}.{weight, bias}, blk.N.attn_qkv [3D, D] whose rows are all
//            heads' q, then k, then v (the converter transposes GPT-2's Conv1D and un-interleaves
//            GPT-NeoX's per-head [q, k, v] rows) with its bias [3D], blk.N.attn_output [D, D],
//            blk.N.ffn_up [F, D], blk.N.ffn_down [D, F] (biases optional), output_norm, and
//            output [V, D] (the classifier; tied to token_embd when absent).
//   gpt2     position_embd [context_length, D]; GELU with the tanh approximation (gelu_new).
//   gptneox  rotary positions on the first .rope.dimension_count features of each head
//            (half-split, .rope.freq_base, default 10000), .use_parallel_residual (default
//            true), exact GELU (Hugging Face's "gelu"; GGUF does not record the activation).
//   bert     an encoder (.attention.causal false or absent; true is refused): position_embd
//            [context_length, D], token_types [type count, D] (its row 0 added everywhere),
//            token_embd_norm; blk.N.attn_q, attn_k, attn_v, attn_output [D, D] (biases optional),
//            post-LayerNorm blk.N.attn_output_norm and blk.N.layer_output_norm, blk.N.ffn_up,
//            ffn_down; exact GELU; no classifier (an embedding model's pooling is not read).
#pragma once

#include <string>
#include <vector>

#include "gguf.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The general.architecture values read_gguf_transformer reads: "gpt2", "gptneox", "bert".
const std::vector<std::string>& gguf_transformer_architectures();

// The whole model, every tensor checked against the metadata's shapes before it is decoded (any
// decodable ggml type). Error(bad_input) naming the file and the key or tensor: another
// architecture (listing these), a missing or inconsistent hyper-parameter, a missing or misshapen
// tensor.
ModelWeights read_gguf_transformer(const GgufFile& file);

}  // namespace attn_viz
