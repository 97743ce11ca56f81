// Hugging Face encoder-decoder folders: BART (model_type bart) and T5 (t5: v1.0's ReLU
// feed-forward and tied classifier, v1.1's gated GELU and separate lm_head), config.json and
// model.safetensors (or its shards) into Seq2SeqWeights, every shape checked against config.json
// before a tensor is converted. Names with or without BartForConditionalGeneration's "model."
// prefix; final_logits_bias where the checkpoint has it. Refused by name: BART's
// normalize_before, add_final_layer_norm, add_bias_logits and static_position_embeddings
// (mBART's and older forms), encoder and decoder head counts that differ, T5 feed_forward_proj
// forms transformers does not define.
#pragma once

#include <string>
#include <vector>

#include "hf_config.hpp"
#include "load_limits.hpp"
#include "seq2seq_weights.hpp"

namespace attn_viz {

// The model types read_hf_seq2seq_folder reads: "bart", "t5".
const std::vector<std::string>& hf_seq2seq_model_types();

// Whether config.json's model_type is one of them.
bool is_seq2seq_model_type(const std::string& model_type);

// Error(usage) for the encoder-decoder folder `path` (of `model_type`) where a decoder or an
// encoder is wanted.
[[noreturn]] void refuse_encoder_decoder(const std::string& path, const std::string& model_type);

// Error(bad_input) naming config.json for another model type, a missing or bad hyper-parameter or
// an option attn-viz does not implement; naming the checkpoint and the tensor for a missing or
// misshapen tensor; Error(io) when a file cannot be read.
Seq2SeqWeights read_hf_seq2seq_folder(const std::string& folder, const HfConfig& config, const LoadLimits& limits = {});

}  // namespace attn_viz
