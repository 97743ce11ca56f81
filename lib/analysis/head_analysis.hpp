// The whole per-head analysis of one run: statistics, labels, pairwise similarity matrices,
// redundant groups and pairs, over all layers' heads. Writers: stats_report.hpp; corpus
// aggregation: corpus_stats.hpp. Formulas: docs/metrics.md.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "head_labels.hpp"
#include "head_matrix.hpp"
#include "head_stats.hpp"
#include "layer_result.hpp"
#include "layer_weights.hpp"
#include "sparse_attention_error.hpp"
#include "weight_similarity.hpp"

namespace attn_viz {

// The pairwise matrices, in the order stats.json and pairs.csv list them.
enum class PairMetric {
    correlation,
    cosine,
    js_distance,
    output_cosine,
    weight_qk_cosine,
    weight_ov_cosine,
    output_mi,
    output_cka,
    choice_mi,            // output_dependence.hpp, attention_choice_mi.hpp
    centred_correlation,  // head_similarity.hpp: the maps minus uniform attention (added last: columns stay)
};
inline constexpr int pair_metric_count = 10;
const char* pair_metric_name(PairMetric metric);

struct AnalysisOptions {
    // The caller's backend, on which the weight and output similarities' products run (required:
    // its primitives are reused from one analysis to the next).
    OnednnBackend* backend = nullptr;
    LabelThresholds thresholds;
    int threads = 1;                               // threads for the statistics (parallel_for)
    bool weight_similarity_across_layers = false;  // weight-only similarity of heads in different layers
    // The sparse-attention error per head (sparse_attention_error.hpp): about two more A V products
    // per layer, so off by default; without it its statistics are NaN and `sparse` stays empty.
    bool sparse_error = false;
    // Told after each layer's sparse-attention error, (layers done, layers): progress of the slow part.
    std::function<void(int64_t done, int64_t total)> on_sparse_layer;
    // The weight-only similarities of the run's weights, computed once per run by the caller
    // (weight_similarities(), corpus_weights()); used even when analyze_model gets no weights.
    // When null and weights are given, analyze_model computes them.
    const WeightSimilarities* weight_similarity = nullptr;
};

struct HeadId {
    int64_t layer = 0;
    int64_t head = 0;
};

struct ModelAnalysis {
    int64_t num_layers = 0;
    int64_t num_heads = 0;    // per layer
    int64_t num_queries = 0;  // T (corpus: the largest T seen)
    int64_t num_keys = 0;     // S (corpus: the largest S seen)
    bool causal = false;
    int64_t num_sequences = 1;  // > 1 after corpus aggregation
    int64_t total_queries = 0;  // sum of T over the sequences

    std::vector<HeadId> head_ids;         // N = L * H, layer-major; index = position in stats.json "heads"
    std::vector<HeadStats> heads;         // [N] (corpus: mean over sequences where defined)
    std::vector<HeadStats> heads_std;     // [N] population std over sequences; empty for one sequence
    std::vector<std::string> labels;      // [N]
    std::vector<SparseHeadError> sparse;  // [N] sparse-attention error per pattern size; empty in corpus reports
    std::array<HeadMatrix, pair_metric_count> matrices;        // [N, N] each, NaN = undefined
    std::array<HeadMatrix, pair_metric_count> matrices_std;    // corpus only; empty otherwise
    std::vector<std::vector<int64_t>> redundant_groups;        // head indices
    std::vector<std::pair<int64_t, int64_t>> redundant_pairs;  // (a, b), most redundant first
    LabelThresholds thresholds;

    const HeadMatrix& matrix(PairMetric metric) const { return matrices[static_cast<size_t>(metric)]; }
};

// layers: one LayerResult per layer, same visibility, same head count H (attention [H, T, S]).
// weights: one per layer (for the weight similarities), or empty: the weight matrices are
// options.weight_similarity's, or NaN without it.
// tokens: [T] token ids for the duplicate-token/induction scores, or empty.
// roles: [T] the tokens' roles (token_roles) for the special-token masses, or empty.
ModelAnalysis analyze_model(const std::vector<const LayerResult*>& layers,
                            const std::vector<const LayerWeights*>& weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options, const std::vector<TokenRole>& roles = {});

// One layer: analyze_model({&result}, weights ? {weights} : {}, tokens, options).
ModelAnalysis analyze_layer(const LayerResult& result, const LayerWeights* weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options);

// The rules the labels of `analysis` follow: an encoder's when its attention is not causal and its
// heads' special-token masses are measured (the roles were known: bidirectional self-attention
// of a text through its tokenizer), read from the statistics so a corpus and its partials agree.
LabelContext label_context(const ModelAnalysis& analysis);

// Recomputes labels, redundant groups (average linkage on js_distance cut at
// thresholds.redundancy_js) and redundant pairs (top thresholds.top_pairs by js_distance) from
// heads, matrices and `thresholds`.
void derive_labels_and_redundancy(ModelAnalysis& analysis, const LabelThresholds& thresholds);

}  // namespace attn_viz
