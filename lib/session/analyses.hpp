// The whole-model analyses' typed options and the rows' constructors (analysis_catalog.hpp): a
// front end parses its options into these once, against the opened model, and adds
// make_analysis(options) to the request's AnalysisSet.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "activation_patching.hpp"
#include "analysis_catalog.hpp"
#include "head_ablation.hpp"

namespace attn_viz {

// True head ablation: each head rerun from its layer on without its output. A decoder reports
// the change of next-token loss and KL, an encoder of its final hidden states (and masked-LM loss).
struct AblationOptions {
    std::vector<AblatedHead> heads;  // parse_ablated_heads
    AblationMode mode = AblationMode::zero;
};

// Direct logit attribution of each position's next token, or of `target` at every position.
struct LogitAttributionOptions {
    int64_t target = -1;             // a token id, or -1: each position's next token
    std::string target_description;  // "next token" or "token 300 ' ball'" (attribution_target_description)
};

// Activation patching of one clean input from a corrupted one of as many tokens; over a corpus
// the corrupted partners are read from `corrupted_corpus`, line for line, in the clean corpus's shard.
struct PatchingOptions {
    std::vector<int> corrupted;    // one input: the corrupted ids
    std::string corrupted_corpus;  // a corpus run: the corrupted corpus's path
    CorpusShard shard;             // the clean corpus's shard
    LoadLimits limits;             // for reading the corrupted corpus
    PatchMetric metric;
};

// QK attribution of each of `heads`: its score from the query position (default the last token)
// to the key position (default the key it attends to most from there) in component terms.
struct QkAttributionOptions {
    std::vector<AblatedHead> heads;  // parse_ablated_heads
    std::optional<int64_t> query_position, key_position;
};

struct CompositionOptions {};
struct RolloutOptions {};
struct FlowOptions {};

std::unique_ptr<WholeModelAnalysis> make_analysis(AblationOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(LogitAttributionOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(PatchingOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(CompositionOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(RolloutOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(FlowOptions options);
std::unique_ptr<WholeModelAnalysis> make_analysis(QkAttributionOptions options);

// What logit attribution attributes, in words: "next token" or "token 300 ' x'".
std::string attribution_target_description(int64_t target, const ModelTokenizer& tokenizer);

}  // namespace attn_viz
