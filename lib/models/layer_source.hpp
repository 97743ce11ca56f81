// Where a run's layer and sequences come from: picks the loader by file type, so the commands
// need not know every format.
#pragma once

#include <string>

#include "input_file.hpp"
#include "layer_weights.hpp"
#include "layouts.hpp"
#include "load_limits.hpp"

namespace attn_viz {

struct LayerSource {
    std::string path;    // .json (attn-viz/weights@1) or .safetensors
    std::string layout;  // safetensors only: torch-mha, bert, gpt2, llama
    int layer = 0;       // safetensors only
    LayoutOptions options;
};

// Reads the layer within `limits`; for attn-viz/weights@1 files, `options.causal` (if set)
// overrides the file. A layout is required for a .safetensors file and refused for any other
// (Error usage).
LayerWeights load_layer_weights(const LayerSource& source, const LoadLimits& limits = {});

struct SequenceSource {
    std::string path;         // input JSON, or embeddings as .npy / .safetensors [T, D]
    std::string tokens_path;  // token labels (JSON list or one per line), for .npy/.safetensors
    std::string tensor_name;  // the safetensors tensor holding the embeddings ("" = its only one)
};

// Reads one sequence whose embeddings must be [T, d_model], within `limits`. A tokens file and a
// tensor name apply only to .npy/.safetensors embeddings (Error usage otherwise).
SequenceInput load_sequence(const SequenceSource& source, int64_t d_model, const LoadLimits& limits = {});

}  // namespace attn_viz
