// The few fields of a Hugging Face config.json that attention needs (head counts, width, RoPE
// base), read from the file beside a checkpoint under the key names different model families use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "activation.hpp"
#include "layer_weights.hpp"

namespace attn_viz {

struct HfConfig {
    std::string path;                     // the config.json read ("" when none was found)
    std::optional<int64_t> num_heads;     // num_attention_heads | n_head | num_heads | encoder_attention_heads
    std::optional<int64_t> num_kv_heads;  // num_key_value_heads | num_kv_heads | n_head_kv (multi_query: 1)
    std::optional<bool> multi_query;      // GPTBigCode, Falcon: one key/value head
    std::optional<int64_t> d_model;       // hidden_size | n_embd | d_model
    std::optional<int64_t> num_layers;    // num_hidden_layers | n_layer | num_layers
    std::optional<double> rope_base;      // rope_theta | rotary_emb_base | rope_parameters.rope_theta
    // What a whole model needs besides (model folders, hf_llama_checkpoint.hpp):
    std::string model_type;                    // "llama", "mistral", "qwen2", ... ("" when absent)
    std::optional<int64_t> intermediate_size;  // intermediate_size | n_inner | ffn_dim
    std::optional<int64_t> vocab_size;
    std::optional<int64_t> max_positions;  // max_position_embeddings | n_positions | n_ctx
    std::optional<int64_t> head_dim;
    std::optional<double> norm_epsilon;  // rms_norm_eps | layer_norm_eps | layer_norm_epsilon
    std::optional<bool> tie_word_embeddings;
    // T5's scale_decoder_outputs (transformers >= 5 writes it and always ties the classifier to the
    // embeddings; before, an untied T5 v1.1 meant no scaling)
    std::optional<bool> scale_decoder_outputs;
    // rope_scaling's (or transformers v5's rope_parameters') "rope_type" (or "type"); "" when none or "default"
    std::string rope_scaling;
    RopeScaling rope_scaling_parameters;  // read for the types in rope_scaling_types(); kind none otherwise
    // The other families' choices (hf_transformer_checkpoint.hpp):
    std::string activation;                 // hidden_act | activation_function ("" when absent)
    std::optional<double> rotary_fraction;  // rotary_pct | partial_rotary_factor | rope_parameters', in (0, 1]
    std::optional<bool> parallel_residual;  // use_parallel_residual (GPT-NeoX, StableLM)
    std::optional<int64_t> type_vocab_size;
    std::string position_embedding_type;                  // BERT's "absolute", "relative_key", ... ("" when absent)
    std::optional<bool> scale_attn_by_inverse_layer_idx;  // GPT-2's per-layer score scaling
    std::optional<bool> scale_attn_weights;               // GPT-2: false = scores not divided by sqrt(d_h)
    // Keys that change some families' forward pass (which family reads which: docs/formats.md):
    std::optional<int64_t> sliding_window;     // Mistral, Qwen2: keys per query of a sliding-window layer; 0 when null
    std::optional<bool> use_sliding_window;    // Qwen2: whether sliding_window applies at all
    std::optional<int64_t> max_window_layers;  // Qwen2: layers [0, this) see every key (>= 0)
    std::vector<std::string> layer_types;      // "full_attention" | "sliding_attention" per layer; empty when absent
    std::vector<int> no_rope_layers;           // SmolLM3: 1 where a layer turns q/k, 0 where not; empty when absent
    std::optional<int64_t> no_rope_layer_interval;  // SmolLM3: without no_rope_layers, every this-th layer has no RoPE
    // GPT-Neo: "global" | "local" per layer, as transformers' GPTNeoConfig takes them: attention_layers
    // where config.json has it, else attention_types expanded ([[["global", "local"], 12]] when absent).
    std::vector<std::string> attention_layers;
    std::optional<int64_t> window_size;  // GPT-Neo: the keys each query of a local layer sees
    std::optional<bool> attention_bias;  // Llama, Mistral: q/k/v/o biases
    std::optional<bool> mlp_bias;        // Llama: gate/up/down biases
    std::optional<bool> use_bias;        // Starcoder2: every projection's bias (default true)
    std::optional<bool> use_qkv_bias;    // StableLM: q/k/v biases (default false)
    // OPT: every projection's bias (default true); norms before the sublayers (true) or after the
    // residual adds (false); no final norm (_remove_final_layer_norm); the embeddings' width, which
    // project_in / project_out map to hidden_size where it differs; norms without weights and biases.
    std::optional<bool> enable_bias, do_layer_norm_before, remove_final_layer_norm;
    std::optional<int64_t> word_embed_proj_dim;
    std::optional<bool> layer_norm_elementwise_affine;
    std::optional<bool> is_decoder;  // BERT: a causal mask
    // Gemma 2/3 (0 where config.json sets the key to null: none):
    std::string hidden_activation;                  // the feed-forward's activation ("" when absent)
    std::optional<double> attn_logit_softcapping;   // scores -> cap * tanh(scores / cap)
    std::optional<double> final_logit_softcapping;  // logits -> cap * tanh(logits / cap)
    std::optional<double> query_pre_attn_scalar;    // scores scaled by its -1/2 power instead of head_dim's
    std::optional<double> rope_local_base_freq;     // Gemma 3: the RoPE base of sliding-window layers
    bool rope_per_layer_type = false;               // v5's rope_parameters per layer type (sliding base above)
    std::optional<int64_t> sliding_window_pattern;  // Gemma 3: every this-th layer is full attention
    // Granite's multipliers (absent: 1): token embeddings times embedding_multiplier, scores times
    // attention_multiplier (in place of 1 / sqrt(d_h)), each sublayer's output times
    // residual_multiplier before its residual add, logits divided by logits_scaling.
    std::optional<double> embedding_multiplier, attention_multiplier, residual_multiplier, logits_scaling;
    std::optional<double> logit_scale;  // Cohere: logits times this (0 where config.json sets it to null)
    // Encoder-decoder models (BART, T5: hf_seq2seq_checkpoint.hpp):
    std::optional<int64_t> decoder_layers;         // decoder_layers | num_decoder_layers
    std::optional<int64_t> encoder_layers;         // encoder_layers (BART; T5's is num_layers)
    std::optional<int64_t> decoder_heads;          // decoder_attention_heads (BART)
    std::optional<int64_t> encoder_ffn_dim;        // encoder_ffn_dim (BART) | d_ff (T5)
    std::optional<int64_t> decoder_ffn_dim;        // decoder_ffn_dim (BART) | d_ff (T5)
    std::optional<int64_t> key_value_dim;          // d_kv (T5: the head size)
    std::optional<int64_t> relative_buckets;       // relative_attention_num_buckets (T5)
    std::optional<int64_t> relative_max_distance;  // relative_attention_max_distance (T5)
    std::optional<int64_t> decoder_start_token_id;
    std::optional<std::string> feed_forward_proj;  // T5: "relu", "gated-gelu", ... (as given, "" too)
    std::optional<bool> scale_embedding;           // BART: embeddings times sqrt(d_model)
    // BART options attn-viz refuses when true (mBART's pre-norm, extra norms, a logits bias layer).
    std::optional<bool> normalize_before, add_final_layer_norm, add_bias_logits, static_position_embeddings;
    // "key = value" for each key set that changes the forward pass of any family and that no
    // reader implements (logit soft-capping, QK norms, ...; refuse_unimplemented).
    std::vector<std::string> unimplemented;
};

// The activation config.json names (hidden_act | activation_function; `fallback` when neither is
// set); Error(bad_input) naming config.json and the supported names otherwise.
Activation parse_activation(const HfConfig& config, const std::string& fallback);

// The activation `name` (`fallback` when empty) stands for; Error(bad_input) naming config.json
// and the supported names otherwise.
Activation activation_named(const std::string& name, const HfConfig& config, const std::string& fallback);

// Error(bad_input) naming config.json and the first of config.unimplemented, if any, whose key is
// not one of `implemented` (the keys the reading family implements).
void refuse_unimplemented(const HfConfig& config, const std::vector<std::string>& implemented = {});

// The rope_scaling types whose parameters are read (and that the Llama-family loader applies).
const std::vector<std::string>& rope_scaling_types();

// *value, or Error(bad_input) naming config.json and the missing `key`.
int64_t required_value(const std::optional<int64_t>& value, const HfConfig& config, const char* key);

// Parses a config.json; throws Error(bad_input) naming the file on bad JSON, a key of the wrong
// type (e.g. a negative head count), a rope_scaling (or rope_parameters) of a supported type with
// missing or bad parameters, rope_parameters that disagree with rope_theta or rope_scaling beside
// them or that differ per layer type; Error(io) when it cannot be read.
// With `supported_model_types`, a model_type not among them (or none) is refused first, naming it
// and them, before any other key is judged.
HfConfig read_hf_config(const std::string& config_path, const std::vector<std::string>& supported_model_types = {});

// The config.json in the checkpoint's directory, or an empty HfConfig when there is none.
HfConfig find_hf_config_beside(const std::string& checkpoint_path);

}  // namespace attn_viz
