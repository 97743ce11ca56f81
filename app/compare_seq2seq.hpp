// attn-viz compare between two encoder-decoder folders (bart, t5) of one shape: both run over the
// same source (--text or --tokens) and the same target, the decoder input as given (--target-text
// or --target-tokens, teacher forced); every head compared within its stack (encoder self,
// decoder self, cross), and the decoders' next-token distributions along the target (KL, both
// teacher-forced losses, top-1 agreement) as compare does for decoders (compare_models.hpp).
#pragma once

#include <string>
#include <vector>

#include "compare_models.hpp"
#include "load_limits.hpp"
#include "output_options.hpp"

namespace attn_viz_cli {

struct StackComparison {
    std::string stack;               // "encoder", "decoder", "cross"
    attn_viz::HeadComparison heads;  // that stack's layers x heads
    std::vector<double> top1;        // [L * H] top-1 agreement of the two maps' queries
};

struct Seq2SeqComparison {
    std::vector<StackComparison> stacks;  // encoder, decoder, cross
    attn_viz::OutputComparison output;    // along the target: row t predicts target token t + 1
};

// Whether `path` is a Hugging Face folder of an encoder-decoder model_type.
bool is_seq2seq_folder(const std::string& path, const attn_viz::LoadLimits& limits);

// Both folders (the same d_model, layers of each stack, heads, head size and vocabulary, else
// Error(bad_input) naming `b`) over the input's source and target ids, encoded by the first
// folder's tokenizer (or input.tokenizer). Error(usage) without a target or with --generate.
Seq2SeqComparison compare_seq2seq_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                         const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits);

// What compare writes and prints for two encoder-decoders, and its exit status: compare.json with
// every head of the three stacks (each with its "stack" and "top1_agreement"), "stacks" (each
// stack's sizes and summary) and "output"; STACK/js_distance.png, map_correlation.png and
// top1_agreement.png; per stack the summary and the ranked table; 1 when --fail-above is given and
// some head's --fail-metric exceeds it.
struct Seq2SeqCompareOutput {
    std::string metric = "js_distance";
    double fail_above = -1;
    OutputOptionValues output;
    std::vector<std::string> inputs;  // files the run read (never overwritten): model A, model B, then the others
};
int report_seq2seq_comparison(const Seq2SeqComparison& comparison, const Seq2SeqCompareOutput& request);

}  // namespace attn_viz_cli
