// Command-line options that say how to read a layer from a checkpoint, shared by the commands
// that load one (run, compare).
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "layer_source.hpp"

namespace attn_viz_cli {

struct LayerOptionValues {
    std::string rope;
    bool causal = false, no_causal = false;
};

// Adds --layout, --layer, --num-heads, --num-kv-heads, --rope, --rope-base, --causal,
// --no-causal, --prefix and --config to `cmd`, filling `source` (and `values` until resolve()).
void add_layer_options(CLI::App* cmd, attn_viz::LayerSource& source, LayerOptionValues& values);

// Applies the flags that need interpretation (rope style, causal overrides) to `source`.
void resolve_layer_options(attn_viz::LayerSource& source, const LayerOptionValues& values);

}  // namespace attn_viz_cli
