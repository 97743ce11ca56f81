// What `attn-viz model` takes: the checkpoint and tokenizer, the input (a text, token ids, the
// induction test or a corpus), an encoder-decoder's target, the heads drawn, the whole-model
// analyses, and what `run` takes alike (ReportRunOptions). The decoder run (cmd_model.cpp) and the
// encoder-decoder runs (model_seq2seq.hpp, model_seq2seq_corpus.hpp) read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model_analyses.hpp"
#include "run_steps.hpp"

namespace attn_viz_cli {

struct ModelOptions : ReportRunOptions {
    std::string checkpoint, tokenizer, text;
    std::optional<std::string> text_pair;         // --text-pair: a BERT-style pair's second text
    std::optional<std::string> token_ids;         // --tokens, given ('' too: refused as no ids)
    std::string target_text;                      // --target-text: an encoder-decoder's decoder input
    std::optional<std::string> target_token_ids;  // --target-tokens
    std::string layers, heads;                    // --layers, --heads: the heads to draw (head_selection_options.hpp)
    int64_t induction = 0;
    uint64_t seed = 0;
    int generate = 0;
    bool truncate = false;  // --truncate: a text over the model's context is cut to it, not refused
    ModelAnalysisOptions analyses;
    bool stream_layers = false;
};

}  // namespace attn_viz_cli
