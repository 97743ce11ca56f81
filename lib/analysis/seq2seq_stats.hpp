// The statistics of an encoder-decoder run (BART, T5) as one stats.json: the three stacks'
// analyses (encoder self-attention, decoder self-attention, cross attention), every head with its
// "stack", the cross heads with their alignment statistics (cross_alignment.hpp); in corpus mode
// (seq2seq_corpus.hpp) the means with their std over sequences under each head's "std".
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cross_alignment.hpp"
#include "head_analysis.hpp"
#include "layer_result.hpp"

namespace attn_viz {

inline constexpr std::array<const char*, 3> seq2seq_stack_names = {"encoder", "decoder", "cross"};

// The three stacks' analyses, in stack order, with their names.
struct Seq2SeqAnalysis {
    std::vector<std::pair<std::string, ModelAnalysis>> stacks;  // ("encoder", ...), ("decoder", ...), ("cross", ...)
    std::vector<CrossAlignment> alignment;                      // the cross heads', layer-major
    std::vector<CrossAlignment> alignment_std;                  // corpus mode: their std over sequences; else empty
};

// cross: the decoder's cross-attention layers (attention [H, T, S] each) -> every head's
// alignment, layer-major.
std::vector<CrossAlignment> stack_alignment(const std::vector<const LayerResult*>& cross);

// {"format", "num_sequences", "heads": every head of the three stacks (stats_json's, with "stack";
// cross heads with "alignment", and in corpus mode "std": {..., "alignment": {...}}), "stacks":
// {name: {"num_layers", "num_heads", "num_queries", "num_keys", "causal", "folder": "name/"}}}.
nlohmann::json seq2seq_stats_json(const Seq2SeqAnalysis& analysis);

}  // namespace attn_viz
