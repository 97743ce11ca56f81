// attn-viz compare between two whole models (Hugging Face folders of any supported family, GGUF or
// llama2.c, in any mix: whole_model.hpp): both run over the same tokens, every layer's heads
// compared; plus the layers x heads picture of the JS distance. Kept apart from cmd_compare.cpp,
// which compares single layers.
#pragma once

#include <optional>
#include <string>

#include "head_analysis.hpp"
#include "head_compare.hpp"
#include "load_limits.hpp"

namespace attn_viz_cli {

struct ModelCompareInput {
    std::string tokenizer;  // llama2.c tokenizer.bin or tokenizer.json; "" = the first model's own (GGUF, folder)
    std::string text;       // encoded as the first model's tokenizer does
    std::optional<std::string> token_ids;  // "1,403,407" instead of text (given empty: refused as no ids)
};

struct ModelComparison {
    attn_viz::HeadComparison heads;
    std::vector<double> top1;  // [L * H] top-1 agreement
};

// Whether `path` is a model compare runs whole: a folder (Hugging Face), GGUF (by magic) or a
// llama2.c ".bin".
bool is_whole_model_path(const std::string& path);

// Both models (same dim, layers, heads, KV heads and vocabulary, else Error(bad_input) naming
// `b`) over the input's tokens.
ModelComparison compare_whole_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                     const attn_viz::AnalysisOptions& options, int threads, const attn_viz::LoadLimits& limits);

// DIR/js_distance.png: layers (rows) x heads (columns), colored by each head's JS distance.
void write_distance_picture(const std::string& path, const attn_viz::HeadComparison& comparison);

}  // namespace attn_viz_cli
