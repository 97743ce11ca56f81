// Two whole models compared head by head (Hugging Face folders of any supported family, GGUF or
// llama2.c, in any mix): both opened by the session, both run over the same tokens, every layer's
// heads compared and, for decoders, their next-token outputs and greedy continuations (the
// pictures: lib/report/compare_report.hpp; over a corpus: model_compare_corpus.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compare_summary.hpp"
#include "generation.hpp"
#include "head_analysis.hpp"
#include "head_compare.hpp"
#include "load_limits.hpp"
#include "model_session.hpp"
#include "output_comparison.hpp"

namespace attn_viz {

// Error(bad_input) naming `b` unless both models (their weights loaded) have one shape: the same
// dim, layers, heads, KV heads and vocabulary.
void check_same_shape(const ModelSession& a, const ModelSession& b);

// Both models, opened once and of one shape (same dim, layers, heads, KV heads and vocabulary,
// else Error(bad_input) naming `b`), with the first one's tokenizer (`tokenizer`, or its own).
struct ComparedModels {
    ModelSession a, b;

    ComparedModels(const std::string& a, const std::string& b, const std::string& tokenizer, const LoadLimits& limits);
    const ModelTokenizer& tokenizer() const { return a.tokenizer(); }
};

struct ModelComparison {
    HeadComparison heads;
    std::vector<double> top1;                // [L * H] top-1 agreement
    ModelRun run_a, run_b;                   // both forward passes (maps for the difference pictures)
    std::vector<std::string> token_labels;   // [T] the tokens' texts
    std::optional<OutputComparison> output;  // next-token distributions (models with logits)
    std::optional<Generation> generation_a, generation_b;
    std::optional<GenerationComparison> generation;  // with generate > 0
};

// Both models (loaded, of one shape: ComparedModels checks it) over `input` (ids, and a text
// pair's token types; labelled by a's tokenizer): every head compared and, for decoders, the
// next-token outputs; with `generate` > 0 (decoders: the caller checks logits_obstacle) both
// greedy continuations of that many tokens, compared.
ModelComparison compare_on_tokens(const ModelSession& a, const ModelSession& b, const EncodedText& input,
                                  const AnalysisOptions& options, int generate = 0);
inline ModelComparison compare_on_tokens(ComparedModels& models, const EncodedText& input,
                                         const AnalysisOptions& options, int generate = 0) {
    return compare_on_tokens(models.a, models.b, input, options, generate);
}

// compare.json without its provenance: the per-head comparison, the summary (`summary`, of
// `metric`: comparison_metric's values), each head's top-1 agreement, and the outputs' comparison
// (with the continuations').
nlohmann::json model_comparison_json(const ModelComparison& comparison, const std::vector<double>& metric,
                                     const CompareSummary& summary);

// The lines compare prints about the models' outputs: mean and largest KL, both losses, top-1
// agreement of next tokens and, with generations, where the continuations part.
std::string output_comparison_text(const ModelComparison& comparison);
// Its first line, about the next-token distributions alone.
std::string output_comparison_line(const OutputComparison& output);

}  // namespace attn_viz
