// Ground truth for the analysis: a layer whose heads are planted by construction (previous-token,
// first-token sink, uniform, self, and two identical next-token heads), with matching input
// embeddings. `attn-viz synth` writes it as a weights@1 file plus an input file (docs/analysis.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer_weights.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct PlantedLayer {
    LayerWeights weights;                      // D = 48, H = 6, d_h = 8, not causal, no biases
    Tensor embeddings;                         // [T, D]
    std::vector<std::string> tokens;           // T words
    std::vector<std::string> planted;          // [H] the label each head must get
    int64_t identical_a = 4, identical_b = 5;  // the two heads with identical weights
};

// The words of the demo sentence ("the cat sat on the mat because the cat was very tired").
std::vector<std::string> planted_demo_tokens();

// tokens: T >= 2 and <= 64 words; equal words get equal content vectors. `seed` draws the content
// vectors and the value/output weights (the attention patterns do not depend on it).
PlantedLayer make_planted_layer(const std::vector<std::string>& tokens, uint64_t seed);

// Writes the weights (attn-viz/weights@1) and the input ({"tokens", "embeddings"}) files, each
// via a temporary name and a rename.
void write_planted_layer(const std::string& weights_path, const std::string& input_path, const PlantedLayer& layer);

}  // namespace attn_viz
