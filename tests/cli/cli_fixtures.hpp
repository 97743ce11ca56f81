// Small valid weights/input files for command-line tests, written with fresh random numbers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "reference_attention.hpp"
#include "support.hpp"
#include "weights_file.hpp"

namespace test_support {

// Writes DIR/w.json (a random D x D layer with H heads) and DIR/x.json (T tokens).
inline void write_layer_fixture(const ScratchDir& dir, int64_t D, int64_t H, int64_t T, bool causal = false) {
    attn_viz::write_weights_file(dir / "w.json", random_layer(D, H, H, causal, true));
    attn_viz::Tensor x = random_tensor({T, D});
    nlohmann::json rows = nlohmann::json::array();
    nlohmann::json tokens = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) {
        rows.push_back(std::vector<float>(x.data.begin() + t * D, x.data.begin() + (t + 1) * D));
        tokens.push_back(std::string("w").append(std::to_string(t)));
    }
    write_text(dir / "x.json", nlohmann::json{{"tokens", tokens}, {"embeddings", rows}}.dump());
}

}  // namespace test_support
