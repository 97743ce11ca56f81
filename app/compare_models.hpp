// attn-viz compare between two whole models (Hugging Face folders of any supported family, GGUF or
// llama2.c, in any mix: whole_model.hpp): both run over the same tokens, every layer's heads
// compared (their pictures: lib/report/compare_report.hpp). Kept apart from cmd_compare.cpp, which compares
// single layers.
#pragma once

#include <optional>
#include <string>

#include "generation.hpp"
#include "head_analysis.hpp"
#include "head_compare.hpp"
#include "load_limits.hpp"
#include "model_tokenizer.hpp"
#include "onednn_backend.hpp"
#include "output_comparison.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

struct ModelCompareInput {
    std::string tokenizer;  // llama2.c tokenizer.bin or tokenizer.json; "" = the first model's own (GGUF, folder)
    std::string text;       // encoded as the first model's tokenizer does
    std::optional<std::string> token_ids;  // "1,403,407" instead of text (given empty: refused as no ids)
    int generate = 0;                      // > 0: both models' greedy continuations of this many tokens, compared
    std::string target_text;               // encoder-decoders: the decoder input both run over (compare_seq2seq.hpp)
    std::optional<std::string> target_token_ids;  // or its ids
};

struct ModelComparison {
    attn_viz::HeadComparison heads;
    std::vector<double> top1;                          // [L * H] top-1 agreement
    attn_viz::ModelRun run_a, run_b;                   // both forward passes (maps for --diff-pictures)
    std::vector<std::string> token_labels;             // [T] the tokens' texts
    std::optional<attn_viz::OutputComparison> output;  // next-token distributions (models with logits)
    std::optional<attn_viz::Generation> generation_a, generation_b;
    std::optional<attn_viz::GenerationComparison> generation;  // with generate > 0
};

// Both models, opened once (same dim, layers, heads, KV heads and vocabulary, else
// Error(bad_input) naming `b`), with the tokenizer (`tokenizer`, or the first model's own).
struct ComparedModels {
    attn_viz::OnednnBackend& backend;
    std::unique_ptr<attn_viz::WholeModel> a, b;
    std::unique_ptr<attn_viz::ModelTokenizer> tokenizer;

    ComparedModels(const std::string& a, const std::string& b, const std::string& tokenizer,
                   attn_viz::OnednnBackend& backend, const attn_viz::LoadLimits& limits);
};

// Both models over `input` (ids, and a text pair's token types): every head compared and, for
// decoders, the next-token outputs.
ModelComparison compare_on_tokens(ComparedModels& models, const attn_viz::EncodedText& input,
                                  const attn_viz::AnalysisOptions& options);

// Both models (as ComparedModels) over the input's tokens, as compare_on_tokens, and with
// input.generate the greedy continuations (an encoder refuses it, Error(usage)).
ModelComparison compare_whole_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                     const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits);

// The lines compare prints about the models' outputs: mean and largest KL, both losses, top-1
// agreement of next tokens and, with generations, where the continuations part.
std::string output_comparison_text(const ModelComparison& comparison);
// Its first line, about the next-token distributions alone.
std::string output_comparison_line(const attn_viz::OutputComparison& output);

}  // namespace attn_viz_cli
