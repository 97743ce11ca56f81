// Llama-like decoders from GGUF files as llama.cpp's convert_hf_to_gguf.py writes them
// ("general.architecture" llama, qwen3, gemma, gemma2, gemma3, phi3; family_table.hpp says what
// each adds to Llama): hyper-parameters from the metadata, weights (any decodable ggml type)
// converted to the x W convention of ModelWeights, the same ModelWeights the family's Hugging Face
// folder gives. The tokenizer comes from tokenizer.ggml.* (model_tokenizer_file.hpp).
//   every family  token_embd [V, D], output_norm [D], output [V, D] (the classifier; tied to
//                 token_embd when absent); blk.N.attn_norm, ffn_norm [D], attn_output [D, H d_h],
//                 ffn_down [D, F]; attn_q [H d_h, D], attn_k, attn_v [KV d_h, D] with optional
//                 .bias, ffn_gate, ffn_up [F, D] (phi3 instead: attn_qkv [(H + 2 KV) d_h, D] and
//                 ffn_up [2 F, D], gate rows first); optional ffn_gate, ffn_up, ffn_down .bias
//                 (none for phi3's fused ffn_up: refused).
//   qwen3, gemma3 blk.N.attn_q_norm, attn_k_norm [d_h].
//   gemma2/3      blk.N.post_attention_norm, post_ffw_norm [D]; every norm stored as 1 + w.
#pragma once

#include <memory>
#include <string>

#include "gguf.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The model's configuration (gguf_decoder_config in gguf_decoder_config.hpp, which lists the
// keys read and refused).
ModelConfig gguf_llama_config(const GgufFile& file);

// The whole model, every block read and each tensor checked against the configuration's shape;
// Error(bad_input) naming the file and the key or tensor.
ModelWeights read_gguf_llama(const GgufFile& file);

// As read_gguf_llama, but the blocks stay in the (shared, mapped) file: every block's tensors are
// checked now and `blocks` (StreamedDecoderBlocks) dequantizes one block when asked.
ModelWeights read_gguf_llama_streaming(std::shared_ptr<const GgufFile> file);

}  // namespace attn_viz
