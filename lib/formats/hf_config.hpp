// The few fields of a Hugging Face config.json that attention needs (head counts, width, RoPE
// base), read from the file beside a checkpoint under the key names different model families use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attn_viz {

struct HfConfig {
    std::string path;                     // the config.json read ("" when none was found)
    std::optional<int64_t> num_heads;     // num_attention_heads | n_head | num_heads | encoder_attention_heads
    std::optional<int64_t> num_kv_heads;  // num_key_value_heads | num_kv_heads | n_head_kv (multi_query: 1)
    std::optional<int64_t> d_model;       // hidden_size | n_embd | d_model
    std::optional<int64_t> num_layers;    // num_hidden_layers | n_layer | num_layers
    std::optional<double> rope_base;      // rope_theta | rotary_emb_base
    // What a whole model needs besides (model folders, hf_llama_checkpoint.hpp):
    std::string model_type;                    // "llama", "mistral", "qwen2", ... ("" when absent)
    std::optional<int64_t> intermediate_size;  // intermediate_size | n_inner | ffn_dim
    std::optional<int64_t> vocab_size;
    std::optional<int64_t> max_positions;      // max_position_embeddings | n_positions | n_ctx
    std::optional<int64_t> head_dim;
    std::optional<double> norm_epsilon;        // rms_norm_eps | layer_norm_eps | layer_norm_epsilon
    std::optional<bool> tie_word_embeddings;
    std::string rope_scaling;                  // rope_scaling's "rope_type" (or "type"); "" when none
};

// Parses a config.json; throws Error(bad_input) naming the file on bad JSON or a key of the
// wrong type (e.g. a negative head count), Error(io) when it cannot be read.
HfConfig read_hf_config(const std::string& config_path);

// The config.json in the checkpoint's directory, or an empty HfConfig when there is none.
HfConfig find_hf_config_beside(const std::string& checkpoint_path);

}  // namespace attn_viz
