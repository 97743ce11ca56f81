// Corpus mode for encoder-decoder models (BART, T5): each stack's heads (encoder, decoder, cross)
// aggregated over (source, target) pairs by a CorpusAccumulator of its own, and the cross heads'
// alignment statistics (cross_alignment.hpp) by running moments, in memory independent of the
// number of pairs. Partials ("attn-viz/seq2seq-partial@1") hold the three stacks' partials
// (attn-viz/partial@1, each with the model's fingerprint, the pairs' keys and the coverage) and the
// alignment's moments; merging refuses what CorpusAccumulator::merge refuses (docs/analysis.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_stats.hpp"
#include "running_moments.hpp"
#include "seq2seq_stats.hpp"

namespace attn_viz {

inline constexpr const char* seq2seq_partial_format = "attn-viz/seq2seq-partial@1";

class Seq2SeqCorpusAccumulator {
public:
    // Empty, to merge partials into.
    Seq2SeqCorpusAccumulator() = default;
    // A corpus run of the model whose fingerprint is `weights_fingerprint` (seq2seq_fingerprint),
    // labelling heads with `thresholds`.
    Seq2SeqCorpusAccumulator(uint64_t weights_fingerprint, const LabelThresholds& thresholds);

    // Adds one pair's analysis (its stacks in seq2seq_stack_names' order and its cross heads'
    // alignment, layer-major), counted under `fingerprint` (token_pair_fingerprint) at
    // `corpus_position` (CorpusAccumulator::add_corpus_sequence).
    void add_corpus_sequence(const Seq2SeqAnalysis& analysis, uint64_t fingerprint, int64_t corpus_position);
    // CorpusAccumulator::set_coverage, for the three stacks.
    void set_coverage(const CorpusCoverage& coverage);
    const CorpusCoverage& coverage() const { return stacks_.front().coverage(); }

    // Adds another accumulator's pairs; refuses (Error bad_input naming `where`) what
    // CorpusAccumulator::merge refuses, and another number of cross heads.
    void merge(const Seq2SeqCorpusAccumulator& other, const std::string& where);

    // Each stack's means and stds (CorpusAccumulator::finish) and the alignment's.
    Seq2SeqAnalysis finish(const LabelThresholds& thresholds) const;

    int64_t num_sequences() const { return stacks_.front().num_sequences(); }
    LabelThresholds thresholds() const { return stacks_.front().thresholds(); }

    nlohmann::json partial_json() const;
    // Validates everything (format, each stack's partial, the alignment's moments against the
    // cross stack's heads and sequences) before use; throws Error(bad_input, "<where>: ...").
    static Seq2SeqCorpusAccumulator from_partial_json(const nlohmann::json& json, const std::string& where);
    void save_partial(const std::string& path) const;  // atomically

private:
    std::array<CorpusAccumulator, 3> stacks_;
    std::vector<RunningMoments> alignment_;  // [cross heads * cross_alignment_count], head-major
};

}  // namespace attn_viz
