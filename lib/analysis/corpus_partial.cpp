// CorpusAccumulator's partial-result files ("attn-viz/partial@1"): writing, and reading with
// validation of every field against the declared layout before anything is allocated from it.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "corpus_stats.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "fingerprint.hpp"
#include "json_text.hpp"
#include "partial_json.hpp"

namespace attn_viz {

namespace {

// What partials of earlier versions hold: the first statistics and matrices of ours. Those added
// since are read as never recorded (count 0).
constexpr int first_release_statistics = 14, first_release_matrices = 6;

}  // namespace

nlohmann::json CorpusAccumulator::partial_json() const {
    nlohmann::json j = {{"format", partial_format},        {"num_layers", num_layers_},
                        {"num_heads", num_heads_},         {"causal", causal_},
                        {"num_sequences", num_sequences_}, {"total_queries", total_queries_},
                        {"max_queries", max_queries_},     {"max_keys", max_keys_}};
    nlohmann::json statistics = nlohmann::json::array();
    for (const HeadStatField& f : head_stat_fields()) statistics.push_back(f.name);
    j["statistics"] = std::move(statistics);  // the order of each head's block in "heads"
    j["heads"] = moments_json(heads_);
    nlohmann::json matrices = nlohmann::json::object();
    for (int m = 0; m < pair_metric_count; ++m)
        matrices[pair_metric_name(static_cast<PairMetric>(m))] = moments_json(matrices_[m]);
    j["matrices"] = std::move(matrices);
    if (thresholds_) {
        j["thresholds"] = thresholds_json(*thresholds_);
    }
    if (weights_fingerprint_) {
        nlohmann::json sequences = nlohmann::json::array();
        for (const CountedSequence& s : sorted_sequences()) sequences.push_back(fingerprint_text(s.fingerprint));
        j["fingerprints"] = {{"hash", fingerprint_hash},
                             {"weights", fingerprint_text(*weights_fingerprint_)},
                             {"sequences", std::move(sequences)}};
    }
    if (!coverage_.empty()) j["corpora"] = corpora_json(coverage_);
    if (attribution_) j["logit_attribution"] = attribution_->partial_json();
    if (patching_) j["activation_patching"] = patching_->partial_json();
    if (ablation_) j["ablation"] = ablation_->partial_json();
    if (mean_maps_) j["mean_maps"] = mean_maps_->partial_json();
    return j;
}

CorpusAccumulator CorpusAccumulator::from_partial_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || !j.contains("format") || j["format"] != partial_format)
        fail_input(where, fmt::format("not a partial result (\"format\" must be \"{}\")", partial_format));
    CorpusAccumulator acc;
    acc.sources_ = {where};
    acc.num_layers_ = whole_number(j, "num_layers", 1, max_partial_heads, where);
    acc.num_heads_ = whole_number(j, "num_heads", 1, max_partial_heads, where);
    const int64_t N = acc.num_layers_ * acc.num_heads_;
    if (N > max_partial_heads) fail_input(where, fmt::format("more than {} heads in all", max_partial_heads));
    const nlohmann::json& causal = member(j, "causal", where);
    if (!causal.is_boolean()) fail_input(where, "\"causal\" must be true or false");
    acc.causal_ = causal.get<bool>();
    acc.num_sequences_ = whole_number(j, "num_sequences", 1, max_partial_sequences, where);
    acc.total_queries_ = whole_number(j, "total_queries", 0, max_partial_sequences, where);
    acc.max_queries_ = whole_number(j, "max_queries", 0, max_partial_sequences, where);
    acc.max_keys_ = whole_number(j, "max_keys", 0, max_partial_sequences, where);
    // The statistics' names must be ours, in our order, or the first ones of them (an earlier
    // version's partial); a file from another version is refused.
    const nlohmann::json& statistics = member(j, "statistics", where);
    const int64_t listed = statistics.is_array() ? static_cast<int64_t>(statistics.size()) : 0;
    bool same_statistics = listed >= first_release_statistics && listed <= head_stat_count;
    for (int64_t s = 0; same_statistics && s < listed; ++s)
        same_statistics = statistics[s] == head_stat_fields()[s].name;
    if (!same_statistics) fail_input(where, "\"statistics\" does not list this version's per-head statistics");
    const std::vector<RunningMoments> listed_moments = read_moments(
        member(j, "heads", where), static_cast<size_t>(N * listed), acc.num_sequences_, fmt::format("{} heads", where));
    acc.heads_.assign(static_cast<size_t>(N * head_stat_count), {});
    for (int64_t n = 0; n < N; ++n)
        std::copy_n(listed_moments.begin() + n * listed, listed, acc.heads_.begin() + n * head_stat_count);
    const nlohmann::json& matrices = member(j, "matrices", where);
    for (int m = 0; m < pair_metric_count; ++m) {
        const char* name = pair_metric_name(static_cast<PairMetric>(m));
        if (m >= first_release_matrices && matrices.is_object() && !matrices.contains(name)) {
            acc.matrices_[m].assign(static_cast<size_t>(N * N), {});  // an earlier version's partial
            continue;
        }
        acc.matrices_[m] = read_moments(member(matrices, name, where), static_cast<size_t>(N * N), acc.num_sequences_,
                                        fmt::format("{} {}", where, name));
    }
    // Added after the first release of the format: absent from the partials of earlier versions.
    if (j.contains("thresholds")) acc.thresholds_ = read_thresholds(j["thresholds"], where);
    if (j.contains("fingerprints")) {
        const nlohmann::json& fingerprints = j["fingerprints"];
        if (member(fingerprints, "hash", where) != fingerprint_hash)
            fail_input(where, fmt::format("\"fingerprints\" must use the hash \"{}\"", fingerprint_hash));
        acc.weights_fingerprint_ = fingerprint_value(member(fingerprints, "weights", where), "\"weights\"", where);
        const nlohmann::json& sequences = member(fingerprints, "sequences", where);
        if (!sequences.is_array() || static_cast<int64_t>(sequences.size()) > acc.num_sequences_)
            fail_input(where, "\"sequences\" must be a list of at most num_sequences fingerprints");
        acc.sequences_.reserve(sequences.size());
        for (size_t k = 0; k < sequences.size(); ++k)
            acc.sequences_.push_back({fingerprint_value(sequences[k], fmt::format("sequence {}", k), where), 0});
    }
    if (j.contains("corpora")) acc.coverage_ = read_coverage(j["corpora"], acc.num_sequences_, where);
    if (j.contains("logit_attribution"))
        acc.attribution_ =
            CorpusAttribution::from_partial_json(j["logit_attribution"], acc.num_layers_, acc.num_heads_, where);
    if (j.contains("activation_patching"))
        acc.patching_ =
            CorpusPatching::from_partial_json(j["activation_patching"], acc.num_layers_, acc.num_heads_, where);
    if (j.contains("ablation"))
        acc.ablation_ = CorpusAblation::from_partial_json(j["ablation"], acc.num_layers_, acc.num_heads_, where);
    if (j.contains("mean_maps"))
        acc.mean_maps_ = CorpusMeanMaps::from_partial_json(j["mean_maps"], acc.num_layers_, acc.num_heads_, acc.causal_,
                                                           acc.num_sequences_, where);
    return acc;
}

void CorpusAccumulator::save_partial(const std::string& path) const {
    if (heads_.empty()) throw Error(ErrorKind::internal, fmt::format("{}: no sequence was accumulated", path));
    write_file_atomically(path, json_file_text(partial_json()));
}

CorpusAccumulator CorpusAccumulator::load_partial(const std::string& path) {
    return from_partial_json(read_partial_file(path), path);
}

}  // namespace attn_viz
