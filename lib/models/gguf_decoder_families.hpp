// The Llama-like decoder architectures of GGUF files (gguf_llama.hpp reads them all), as a table:
// what llama.cpp's convert_hf_to_gguf.py writes for each and llama.cpp's loader (llama-model.cpp)
// does with it beyond Llama, so a file reads into the ModelWeights its Hugging Face folder gives
// (hf_decoder_families.hpp). docs/formats.md lists every key and tensor name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf.hpp"
#include "layer_weights.hpp"
#include "model_weights.hpp"

namespace attn_viz {

struct GgufDecoderFamily {
    std::string architecture;  // general.architecture, and the prefix of its metadata keys
    // llama: interleaved pairs (the converter permutes Hugging Face's q/k rows for llama.cpp's
    // normal RoPE); the others run NEOX RoPE in llama.cpp on rows as Hugging Face has them.
    RopeStyle rope = RopeStyle::half_split;
    bool qk_norm = false;  // qwen3, gemma3: blk.N.attn_q_norm / attn_k_norm [head size]
    // gemma2/3: norms stored as 1 + w (the converter adds 1), sandwich norms, sqrt(D) embeddings,
    // GeGLU (tanh), the score scale llama.cpp derives, soft-caps.
    bool gemma = false;
    bool fused = false;  // phi3: attn_qkv [q; k; v] and ffn_up [gate; up]
    // Sliding layers: 0 none; 1 every layer (phi3, when .attention.sliding_window > 0); n all but
    // every n-th (llama.cpp's set_swa_pattern: gemma2 2, gemma3 6).
    int64_t window_pattern = 0;
    int64_t default_window = 0;  // when .attention.sliding_window is absent (gemma2: 4096); 0: none
    double default_attn_softcap = 0.0, default_final_softcap = 0.0;  // gemma2: llama.cpp's 50 and 30
    int64_t wide_scale_layers = 0;  // gemma: the 27B model's block count, whose scores scale by (D / H)^-1/2
    double local_rope_base = 0.0;   // gemma3: the sliding layers' unscaled RoPE base (0: as every layer)
};

// llama, qwen3, gemma2, gemma3, phi3.
const std::vector<GgufDecoderFamily>& gguf_decoder_families();

// What a file's metadata says about its model: the family's row, the configuration and each
// layer's attention settings (no tensors yet).
struct GgufDecoder {
    const GgufDecoderFamily* family = nullptr;
    ModelConfig config;
    LayerWeights attention;      // a full-attention layer's settings
    int64_t sliding_window = 0;  // of the sliding layers (0: none)
};

// The configuration from <arch>.* metadata: block_count, embedding_length, feed_forward_length,
// attention.head_count(_kv), context_length, attention.layer_norm_rms_epsilon, rope.freq_base,
// attention.key_length / value_length (the head size), rope.dimension_count, rope.scaling.type
// (none or linear, with .factor), attention.sliding_window, attn_logit_softcapping and
// final_logit_softcapping, with the vocabulary from token_embd.weight. Error(bad_input) naming
// the file and key: another architecture (listing the supported ones), counts out of range or
// inconsistent, what attn-viz does not run (Phi-3's LongRoPE rope_factors_long/short, llama's
// partial or scaled RoPE and the keys gguf_llama.hpp lists).
GgufDecoder gguf_decoder_config(const GgufFile& file);

// Layer `layer`'s attention settings: the sliding window and (gemma3) local RoPE base on the
// family's sliding layers.
LayerWeights gguf_layer_settings(const GgufDecoder& decoder, int64_t layer);

}  // namespace attn_viz
