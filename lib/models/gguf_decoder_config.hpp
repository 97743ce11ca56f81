// A Llama-like decoder's configuration from a GGUF file's metadata (gguf_llama.hpp reads the
// weights): its family's row by general.architecture (family_table.hpp: what llama.cpp's
// convert_hf_to_gguf.py writes and its loader, llama-model.cpp, does beyond Llama), so a file
// reads into the ModelWeights its Hugging Face folder gives. docs/formats.md lists every key.
#pragma once

#include "decoder_blocks.hpp"
#include "gguf.hpp"

namespace attn_viz {

// The configuration and each layer's attention settings from <arch>.* metadata: block_count,
// embedding_length, feed_forward_length, attention.head_count(_kv), context_length,
// attention.layer_norm_rms_epsilon, rope.freq_base, attention.key_length / value_length (the
// head size), rope.dimension_count, rope.scaling.type (none or linear, with .factor),
// attention.sliding_window, attn_logit_softcapping and final_logit_softcapping, with the
// vocabulary from token_embd.weight (no tensors yet). Error(bad_input) naming the file and key:
// another architecture (listing the supported ones), counts out of range or inconsistent, what
// attn-viz does not run (Phi-3's LongRoPE rope_factors_long/short, llama's partial or scaled RoPE
// and the keys gguf_llama.hpp lists).
DecoderLayout gguf_decoder_config(const GgufFile& file);

}  // namespace attn_viz
