// Corpus mode: every per-head statistic and every pairwise matrix aggregated over many sequences
// with running moments (count, mean, sum of squared deviations; Welford, merged with Chan et al.),
// so memory does not grow with the number of sequences. Partial results are saved as
// "attn-viz/partial@1" JSON at full double precision and merge exactly (docs/analysis.md), with
// the fingerprints of the weights and of every sequence, so that merging refuses partials of
// other weights and sequences counted twice.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_ablation.hpp"
#include "corpus_attribution.hpp"
#include "corpus_coverage.hpp"
#include "corpus_mean_maps.hpp"
#include "corpus_patching.hpp"
#include "head_analysis.hpp"

namespace attn_viz {

inline constexpr const char* partial_format = "attn-viz/partial@1";

class CorpusAccumulator {
public:
    // Empty, to merge partials into: the weights and thresholds become those of the first.
    CorpusAccumulator() = default;
    // A corpus run of the layer whose fingerprint is `weights_fingerprint` (layer_fingerprint),
    // labelling heads with `thresholds`.
    CorpusAccumulator(uint64_t weights_fingerprint, const LabelThresholds& thresholds);

    // Adds one sequence's analysis, counted under its fingerprint (sequence_fingerprint). The
    // first fixes the layout (layers, heads, causal); later ones must match it (Error bad_input
    // otherwise). The same sequence twice within one run counts twice (the corpus holds it twice).
    void add(const ModelAnalysis& sequence, uint64_t sequence_fingerprint);
    // As add(), for the sequence at `corpus_position` of a corpus run (CorpusDocuments::position):
    // counted under corpus_sequence_key once set_coverage() names the corpus, so that a line the
    // corpus repeats in another shard is not taken for the same sequence counted twice.
    void add_corpus_sequence(const ModelAnalysis& sequence, uint64_t sequence_fingerprint, int64_t corpus_position);

    // Adds everything another accumulator holds; `where` names it in errors. Refuses
    // (Error bad_input, naming `where` and the partial merged before that disagrees) another
    // layout, other weights, other thresholds, or a sequence already counted here. What a
    // partial of an earlier version does not record (no fingerprints or thresholds) is not
    // checked.
    void merge(const CorpusAccumulator& other, const std::string& where);

    // Means, population standard deviations, labels and redundancy of the mean maps.
    ModelAnalysis finish(const LabelThresholds& thresholds) const;

    nlohmann::json partial_json() const;
    // Validates everything (format, sizes against the layout, counts, finite numbers) before use;
    // throws Error(bad_input, "<where>: ...").
    static CorpusAccumulator from_partial_json(const nlohmann::json& json, const std::string& where);

    void save_partial(const std::string& path) const;  // atomically
    static CorpusAccumulator load_partial(const std::string& path);

    // Which shards of which corpora the sequences came from (empty: not known); merge() refuses
    // overlapping coverage (CorpusCoverage::merge). The sequences added by add_corpus_sequence()
    // get their keys from the corpus's fingerprint here: `coverage` must then be of one corpus.
    void set_coverage(CorpusCoverage coverage);
    const CorpusCoverage& coverage() const { return coverage_; }

    // Keeps direct logit attribution too (model --inputs --logit-attribution): `attribution`, empty,
    // of the run's layout and target; its moments are saved, loaded and merged with the rest
    // (merge() refuses a partial with another target, or with attribution on one side only).
    void keep_attribution(CorpusAttribution attribution) { attribution_ = std::move(attribution); }
    CorpusAttribution* attribution() { return attribution_ ? &*attribution_ : nullptr; }
    const CorpusAttribution* attribution() const { return attribution_ ? &*attribution_ : nullptr; }
    // Keeps activation patching too (model --inputs --patch-from-inputs), as attribution.
    void keep_patching(CorpusPatching patching) { patching_ = std::move(patching); }
    CorpusPatching* patching() { return patching_ ? &*patching_ : nullptr; }
    const CorpusPatching* patching() const { return patching_ ? &*patching_ : nullptr; }

    // Keeps head ablation too (model --inputs --ablate), as attribution (merge() refuses other
    // heads or another mode).
    void keep_ablation(CorpusAblation ablation) { ablation_ = std::move(ablation); }
    CorpusAblation* ablation() { return ablation_ ? &*ablation_ : nullptr; }
    const CorpusAblation* ablation() const { return ablation_ ? &*ablation_ : nullptr; }
    // Keeps the mean maps too (corpus mode's pictures): `maps`, empty; the caller adds each
    // sequence's layers to mean_maps(). Saved, loaded and merged with the rest; a merge with a
    // partial that lacks them (--stats-only, an earlier version) keeps none.
    void keep_mean_maps(CorpusMeanMaps maps) { mean_maps_ = std::move(maps); }
    CorpusMeanMaps* mean_maps() { return mean_maps_ ? &*mean_maps_ : nullptr; }
    const CorpusMeanMaps* mean_maps() const { return mean_maps_ ? &*mean_maps_ : nullptr; }

    int64_t num_sequences() const { return num_sequences_; }
    // How many of them have a fingerprint: fewer than num_sequences() when partials of an
    // earlier version were merged in.
    int64_t num_fingerprinted() const { return static_cast<int64_t>(sequences_.size() + unkeyed_.size()); }
    // The thresholds the runs labelled heads with (defaults when no partial recorded them).
    LabelThresholds thresholds() const { return thresholds_.value_or(LabelThresholds{}); }
    // Bytes of the statistics' state: depends on layers x heads only, never on the number of
    // sequences (the fingerprints add 16 bytes per sequence besides).
    size_t state_bytes() const;

private:
    // One sequence's fingerprint and the index in sources_ of the partial it came from.
    struct CountedSequence {
        uint64_t fingerprint = 0;
        uint32_t source = 0;
        bool operator<(const CountedSequence& other) const { return fingerprint < other.fingerprint; }
    };

    int64_t num_layers_ = 0, num_heads_ = 0;
    bool causal_ = false;
    int64_t num_sequences_ = 0, total_queries_ = 0, max_queries_ = 0, max_keys_ = 0;
    std::vector<RunningMoments> heads_;                                    // [N * head_stat_count], head-major
    std::array<std::vector<RunningMoments>, pair_metric_count> matrices_;  // [N * N] each
    std::optional<uint64_t> weights_fingerprint_;                          // none: partials of an earlier version only
    std::optional<LabelThresholds> thresholds_;                            // likewise
    mutable std::vector<CountedSequence> sequences_;  // in any order; sorted_sequences() sorts them
    // add_corpus_sequence()'s sequences until set_coverage() keys them into sequences_.
    struct PositionedSequence {
        uint64_t fingerprint = 0;
        int64_t position = 0;
    };
    std::vector<PositionedSequence> unkeyed_;
    std::vector<std::string> sources_ = {"this run"};      // names of what was merged, for messages
    uint32_t weights_source_ = 0, thresholds_source_ = 0;  // which of sources_ set them
    CorpusCoverage coverage_;
    std::optional<CorpusAttribution> attribution_;  // model --logit-attribution's moments, when kept
    std::optional<CorpusPatching> patching_;        // model --patch-from-inputs's moments, when kept
    std::optional<CorpusAblation> ablation_;        // model --ablate's moments, when kept
    std::optional<CorpusMeanMaps> mean_maps_;       // the pictures' sums, when kept

    // Throws Error(internal) while sequences of a corpus run wait for set_coverage().
    const std::vector<CountedSequence>& sorted_sequences() const;
    void add_statistics(const ModelAnalysis& sequence);  // everything add() does but the fingerprint
    void check_layout(int64_t layers, int64_t heads, bool causal, const std::string& where,
                      const std::string& so_far) const;
    // Refuses (Error bad_input) what merge() refuses; returns the coverage of both.
    CorpusCoverage check_mergeable(const CorpusAccumulator& other, const std::string& where) const;
};

}  // namespace attn_viz
