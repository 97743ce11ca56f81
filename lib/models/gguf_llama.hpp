// A Llama model ("general.architecture" = "llama") from a GGUF file: hyper-parameters from the
// metadata, weights (any decodable ggml type) converted to the x W convention of ModelWeights (RMSNorm, gated, pre-norm),
// and the SentencePiece ("llama") tokenizer from tokenizer.ggml.*.
#pragma once

#include <memory>
#include <string>

#include "gguf.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The model's configuration from llama.* metadata: block_count, embedding_length,
// feed_forward_length, attention.head_count(_kv) (KV defaults to the head count),
// context_length, attention.layer_norm_rms_epsilon (default 1e-5), rope.freq_base (default
// 10000), with the vocabulary from token_embd.weight. Refuses another
// architecture, counts out of range or inconsistent, partial or scaled RoPE (Error bad_input
// naming the file and key).
ModelConfig gguf_llama_config(const GgufFile& file);

// One block's weights (layer l < block_count), dequantized: blk.l.attn_{norm,q,k,v,output},
// ffn_{norm,gate,up,down}, each checked against the configuration's shape. Q/K rows are in
// GGUF's interleaved-pair RoPE order (llama.cpp's converter permutes Hugging Face's back).
BlockWeights read_gguf_llama_block(const GgufFile& file, const ModelConfig& config, int64_t layer);

// The whole model: token_embd, every block, output_norm and output (the classifier; tied to
// token_embd when the file has no output.weight).
ModelWeights read_gguf_llama(const GgufFile& file);

// As read_gguf_llama, but the blocks stay in the (shared, mapped) file: `layers` is empty and
// `load_block` dequantizes one block when called.
ModelWeights read_gguf_llama_streaming(std::shared_ptr<const GgufFile> file);

}  // namespace attn_viz
