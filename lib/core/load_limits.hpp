// How much hostile input a loader accepts. Every loader takes one (formats/*: npy, safetensors,
// JSON tensors, weights/input/token files, llama2.c checkpoints, layer sources, sequence streams)
// and the run-size estimates are checked against its budget; the command line builds it from its
// options. Nothing about it is process-wide.
#pragma once

#include <cstdint>

#include "memory_budget.hpp"

namespace attn_viz {

struct LoadLimits {
    // A declared shape, a JSON document's parsed form or a run needing more bytes than this is
    // refused (Error bad_input, Remedy::raise_memory_budget) before allocating.
    uint64_t memory_budget = default_memory_budget();
    // Load NaN/Inf weights and embeddings instead of refusing them (poisoned_heads() then tells
    // which heads they reach).
    bool allow_nonfinite = false;
    // Cut a text whose ids are more than a model's context to it (encode_for_context) instead of
    // refusing it (Error bad_input, Remedy::truncate_text).
    bool truncate_texts = false;
};

}  // namespace attn_viz
