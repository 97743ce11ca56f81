// Corpus mode: every per-head statistic and every pairwise matrix aggregated over many sequences
// with running moments (count, mean, sum of squared deviations; Welford, merged with Chan et al.),
// so memory does not grow with the number of sequences. Partial results are saved as
// "attn-viz/partial@1" JSON at full double precision and merge exactly (docs/analysis.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"

namespace attn_viz {

inline constexpr const char* partial_format = "attn-viz/partial@1";

// Mean and spread of the defined (non-NaN) values added.
struct RunningMoments {
    int64_t count = 0;
    double mean = 0;
    double m2 = 0;  // sum of squared deviations from the mean

    void add(double x);                         // NaN is skipped
    void merge(const RunningMoments& other);    // as if other's values had been added here
    double mean_or_nan() const;                 // NaN when count == 0
    double population_std() const;              // sqrt(m2 / count); NaN when count == 0
};

class CorpusAccumulator {
public:
    // Adds one sequence's analysis. The first fixes the layout (layers, heads, causal); later ones
    // must match it (Error bad_input otherwise).
    void add(const ModelAnalysis& sequence);

    // Adds everything another accumulator holds; `where` names it in errors.
    void merge(const CorpusAccumulator& other, const std::string& where = "partial");

    // Means, population standard deviations, labels and redundancy of the mean maps.
    ModelAnalysis finish(const LabelThresholds& thresholds) const;

    nlohmann::json partial_json() const;
    // Validates everything (format, sizes against the layout, counts, finite numbers) before use;
    // throws Error(bad_input, "<where>: ...").
    static CorpusAccumulator from_partial_json(const nlohmann::json& json, const std::string& where);

    void save_partial(const std::string& path) const;  // atomically
    static CorpusAccumulator load_partial(const std::string& path);

    int64_t num_sequences() const { return num_sequences_; }
    // Bytes of state held: depends on layers x heads only, never on the number of sequences.
    size_t state_bytes() const;

private:
    int64_t num_layers_ = 0, num_heads_ = 0;
    bool causal_ = false;
    int64_t num_sequences_ = 0, total_queries_ = 0, max_queries_ = 0, max_keys_ = 0;
    std::vector<RunningMoments> heads_;  // [N * head_stat_count], head-major
    std::array<std::vector<RunningMoments>, pair_metric_count> matrices_;  // [N * N] each

    void check_layout(int64_t layers, int64_t heads, bool causal, const std::string& where) const;
};

}  // namespace attn_viz
