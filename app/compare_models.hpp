// attn-viz compare between two whole models (model_compare.hpp): the input as compare's options
// give it, encoded and checked with their names, then both models over it, or over a corpus
// (--inputs). Kept apart from cmd_compare.cpp, which compares single layers too.
#pragma once

#include <optional>
#include <string>

#include "corpus_options.hpp"
#include "load_limits.hpp"
#include "model_compare.hpp"
#include "model_compare_corpus.hpp"

namespace attn_viz_cli {

struct ModelCompareInput {
    std::string tokenizer;  // llama2.c tokenizer.bin or tokenizer.json; "" = the first model's own (GGUF, folder)
    std::string text;       // encoded as the first model's tokenizer does
    std::optional<std::string> token_ids;  // "1,403,407" instead of text (given empty: refused as no ids)
    int generate = 0;                      // > 0: both models' greedy continuations of this many tokens, compared
    std::string target_text;               // encoder-decoders: the decoder input both run over (compare_seq2seq.hpp)
    std::optional<std::string> target_token_ids;  // or its ids
};

// Both models (ComparedModels) over the input's tokens (--text or --tokens, named in errors), as
// compare_on_tokens, with --generate's continuations (an encoder refuses it, Error(usage)).
attn_viz::ModelComparison compare_whole_models(const std::string& a, const std::string& b,
                                               const ModelCompareInput& input, const attn_viz::AnalysisOptions& options,
                                               const attn_viz::LoadLimits& limits);

// Both models over the corpus of --inputs (or its shard), its progress on stderr unless `quiet`;
// `note` gets "N sequences from FILE ...".
attn_viz::CompareCorpusAccumulator compare_models_over_corpus(
    const std::string& a, const std::string& b, const std::string& tokenizer, const CorpusOptionValues& corpus,
    const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits, bool quiet, std::string& note);

}  // namespace attn_viz_cli
