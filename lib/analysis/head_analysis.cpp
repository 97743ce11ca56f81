#include "head_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "attention_choice_mi.hpp"
#include "error.hpp"
#include "head_clustering.hpp"
#include "head_similarity.hpp"
#include "output_dependence.hpp"
#include "weight_similarity.hpp"

namespace attn_viz {

const char* pair_metric_name(PairMetric metric) {
    static const char* const names[pair_metric_count] = {
        "correlation",      "cosine",    "js_distance", "output_cosine", "weight_qk_cosine",
        "weight_ov_cosine", "output_mi", "output_cka",  "choice_mi",     "centred_correlation"};
    return names[static_cast<int>(metric)];
}

namespace {

// Appends every head's statistics (with the sparse-attention error on request) to a, layer by layer.
void add_head_stats(ModelAnalysis& a, const std::vector<const LayerResult*>& layers, const std::vector<int64_t>& tokens,
                    const std::vector<TokenRole>& roles, const AnalysisOptions& options) {
    for (int64_t l = 0; l < a.num_layers; ++l) {
        const LayerResult& layer = *layers[static_cast<size_t>(l)];
        if (layer.attention.rank() != 3 || layer.attention.dim(0) != a.num_heads)
            throw Error(ErrorKind::internal, fmt::format("analyze_model: layer {} has a different head count", l));
        std::vector<HeadStats> stats = compute_head_stats(layer, tokens, options.threads, roles);
        for (int64_t h = 0; h < a.num_heads; ++h) a.head_ids.push_back({l, h});
        if (!options.sparse_error) {
            a.heads.insert(a.heads.end(), stats.begin(), stats.end());
            continue;
        }
        std::vector<SparseHeadError> sparse =
            sparse_attention_errors(layer, options.thresholds.sparse_tolerance, options.threads);
        for (int64_t h = 0; h < a.num_heads; ++h) {
            HeadStats& s = stats[static_cast<size_t>(h)];
            const SparseHeadError& e = sparse[static_cast<size_t>(h)];
            s.keys_needed = e.keys_needed, s.window_needed = e.window_needed;
            s.top1_mass_dropped = e.top_k_mass_dropped.empty() ? NAN : e.top_k_mass_dropped[0];
            s.top1_error = e.top_k_error.empty() ? NAN : e.top_k_error[0];
            s.top1_mass_bound = e.top1_mass_bound, s.top1_error_bound = e.top1_error_bound;
            s.top1_bound_holds = e.top1_bound_holds;
        }
        a.heads.insert(a.heads.end(), stats.begin(), stats.end());
        a.sparse.insert(a.sparse.end(), std::make_move_iterator(sparse.begin()), std::make_move_iterator(sparse.end()));
        if (options.on_sparse_layer) options.on_sparse_layer(l + 1, a.num_layers);
    }
}

// The weight-space matrices (Q-K and O-V cosines): options.weight_similarity when given, else
// computed from the weights; all NaN (undefined) without either.
// weights[l] ran as layers[l]: a run that computed a layer's W_O Gram lends it.
void add_weight_matrices(ModelAnalysis& a, const std::vector<const LayerWeights*>& weights,
                         const std::vector<const LayerResult*>& layers, const AnalysisOptions& options,
                         OnednnBackend& backend) {
    const size_t n_layers = layers.size();
    const int64_t N = static_cast<int64_t>(a.heads.size());
    auto set = [&](HeadMatrix qk, HeadMatrix ov) {
        if (qk.size != N) throw Error(ErrorKind::internal, "analyze_model: weight similarities of another model");
        a.matrices[static_cast<size_t>(PairMetric::weight_qk_cosine)] = std::move(qk);
        a.matrices[static_cast<size_t>(PairMetric::weight_ov_cosine)] = std::move(ov);
    };
    if (options.weight_similarity)
        return set(options.weight_similarity->qk_cosine, options.weight_similarity->ov_cosine);
    if (weights.empty()) return set(HeadMatrix(N), HeadMatrix(N));
    if (weights.size() != n_layers)
        throw Error(ErrorKind::internal,
                    fmt::format("analyze_model: weights for {} layers, results for {}", weights.size(), n_layers));
    for (const LayerWeights* w : weights)
        if (!w || w->num_heads != a.num_heads)
            throw Error(ErrorKind::internal, "analyze_model: missing weights or a different head count");
    const bool across = options.weight_similarity_across_layers;
    WeightSimilarities computed =
        weight_similarities(weights, across, backend, across ? std::vector<const Tensor*>{} : output_grams_of(layers));
    set(std::move(computed.qk_cosine), std::move(computed.ov_cosine));
}

}  // namespace

ModelAnalysis analyze_model(const std::vector<const LayerResult*>& layers,
                            const std::vector<const LayerWeights*>& weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options, const std::vector<TokenRole>& roles) {
    if (layers.empty()) throw Error(ErrorKind::internal, "analyze_model: no layers");
    if (!options.backend) throw Error(ErrorKind::internal, "analyze_model: no backend");
    const Visibility& vis = layers[0]->visibility;
    ModelAnalysis a;
    a.num_layers = static_cast<int64_t>(layers.size());
    a.num_heads = layers[0]->attention.rank() == 3 ? layers[0]->attention.dim(0) : 0;
    a.num_queries = vis.queries;
    a.num_keys = vis.keys;
    a.causal = vis.causal;
    a.total_queries = vis.queries;

    // Step 1: per-head statistics, layer by layer.
    add_head_stats(a, layers, tokens, roles, options);

    // Step 2: pairwise matrices over all heads: of the maps, of the outputs, of the weights.
    MapSimilarities maps = attention_map_similarities(layers, options.threads);
    a.matrices[static_cast<size_t>(PairMetric::correlation)] = std::move(maps.correlation);
    a.matrices[static_cast<size_t>(PairMetric::cosine)] = std::move(maps.cosine);
    a.matrices[static_cast<size_t>(PairMetric::js_distance)] = std::move(maps.js_distance);
    a.matrices[static_cast<size_t>(PairMetric::centred_correlation)] = std::move(maps.centred_correlation);
    a.matrices[static_cast<size_t>(PairMetric::output_cosine)] = output_cosine(layers);
    OnednnBackend& backend = *options.backend;
    add_weight_matrices(a, weights, layers, options, backend);
    // Step 3: dependence: of the head outputs over the tokens, of the attention choices.
    OutputDependence outputs = output_dependence(layers, backend, options.threads);
    a.matrices[static_cast<size_t>(PairMetric::output_mi)] = std::move(outputs.gaussian_mi);
    a.matrices[static_cast<size_t>(PairMetric::output_cka)] = std::move(outputs.linear_cka);
    a.matrices[static_cast<size_t>(PairMetric::choice_mi)] = attention_choice_mi(layers, options.threads);

    // Step 4: labels and redundancy from the numbers.
    derive_labels_and_redundancy(a, options.thresholds);
    return a;
}

ModelAnalysis analyze_layer(const LayerResult& result, const LayerWeights* weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options) {
    std::vector<const LayerWeights*> layer_weights;
    if (weights) layer_weights.push_back(weights);
    return analyze_model({&result}, layer_weights, tokens, options);
}

LabelContext label_context(const ModelAnalysis& a) {
    const auto measured = [](const HeadStats& s) {
        return std::isfinite(s.cls_mass) || std::isfinite(s.sep_mass) || std::isfinite(s.punctuation_mass);
    };
    return {!a.causal && std::any_of(a.heads.begin(), a.heads.end(), measured)};
}

void derive_labels_and_redundancy(ModelAnalysis& a, const LabelThresholds& thresholds) {
    a.thresholds = thresholds;
    a.labels.clear();
    const LabelContext context = label_context(a);
    for (const HeadStats& s : a.heads) a.labels.push_back(label_head(s, thresholds, context));
    const HeadMatrix& js = a.matrix(PairMetric::js_distance);
    a.redundant_groups = cluster_heads(js, thresholds.redundancy_js);
    a.redundant_pairs = closest_pairs(js, static_cast<int64_t>(thresholds.top_pairs));
}

}  // namespace attn_viz
