// Where a run's layer and sequences come from: picks the loader by file type, so the commands
// need not know every format.
#pragma once

#include <string>

#include "input_file.hpp"
#include "layer_weights.hpp"
#include "layouts.hpp"

namespace attn_viz {

struct LayerSource {
    std::string path;    // .json (attn-viz/weights@1) or .safetensors
    std::string layout;  // safetensors only: torch-mha, bert, gpt2, llama
    int layer = 0;       // safetensors only
    LayoutOptions options;
};

// Reads the layer; for attn-viz/weights@1 files, `options.causal` (if set) overrides the file.
LayerWeights load_layer_weights(const LayerSource& source);

struct SequenceSource {
    std::string path;         // input JSON, or embeddings as .npy / .safetensors [T, D]
    std::string tokens_path;  // token labels (JSON list or one per line), for .npy/.safetensors
    std::string tensor_name;  // the safetensors tensor holding the embeddings ("" = its only one)
};

// Reads one sequence whose embeddings must be [T, d_model].
SequenceInput load_sequence(const SequenceSource& source, int64_t d_model);

}  // namespace attn_viz
