#include "corpus_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "corpus_fingerprint.hpp"
#include "error.hpp"
#include "fingerprint.hpp"

namespace attn_viz {
namespace {

std::string threshold_text(double value) { return fmt::format("{:g}", value); }

}  // namespace

CorpusAccumulator::CorpusAccumulator(uint64_t weights_fingerprint, const LabelThresholds& thresholds)
    : weights_fingerprint_(weights_fingerprint), thresholds_(thresholds) {}

void CorpusAccumulator::check_layout(int64_t layers, int64_t heads, bool causal, const std::string& where,
                                     const std::string& so_far) const {
    if (layers != num_layers_ || heads != num_heads_ || causal != causal_)
        fail_input(where, fmt::format("{} layers x {} heads{} do not match {}: {} x {}{}", layers, heads,
                                      causal ? " (causal)" : " (not causal)", so_far, num_layers_, num_heads_,
                                      causal_ ? " (causal)" : " (not causal)"));
}

const std::vector<CorpusAccumulator::CountedSequence>& CorpusAccumulator::sorted_sequences() const {
    if (!unkeyed_.empty())
        throw Error(ErrorKind::internal,
                    fmt::format("CorpusAccumulator: the corpus of {} sequences is not known yet (set_coverage)",
                                unkeyed_.size()));
    if (!std::is_sorted(sequences_.begin(), sequences_.end())) std::sort(sequences_.begin(), sequences_.end());
    return sequences_;
}

CorpusCoverage CorpusAccumulator::check_mergeable(const CorpusAccumulator& other, const std::string& where) const {
    check_layout(other.num_layers_, other.num_heads_, other.causal_, where, sources_.front());
    if (weights_fingerprint_ && other.weights_fingerprint_ && *weights_fingerprint_ != *other.weights_fingerprint_)
        fail_input(where, fmt::format("was computed with other weights (fingerprint {}) than {} ({}): partials of "
                                      "different layers cannot be merged",
                                      fingerprint_text(*other.weights_fingerprint_), sources_[weights_source_],
                                      fingerprint_text(*weights_fingerprint_)));
    if (thresholds_ && other.thresholds_)
        for (const auto& [name, member] : threshold_fields())
            if ((*thresholds_).*member != (*other.thresholds_).*member)
                fail_input(where,
                           fmt::format("labels heads with {}={}, {} with {}={}: partials of runs with "
                                       "different thresholds cannot be merged",
                                       name, threshold_text((*other.thresholds_).*member), sources_[thresholds_source_],
                                       name, threshold_text((*thresholds_).*member)));
    // Each analysis a partial may carry: on both sides or on neither.
    for (const auto& [mine, theirs, what] :
         {std::tuple{attribution_.has_value(), other.attribution_.has_value(), "direct logit attribution"},
          std::tuple{patching_.has_value(), other.patching_.has_value(), "activation patching"},
          std::tuple{ablation_.has_value(), other.ablation_.has_value(), "head ablation"}})
        if (mine != theirs)
            fail_input(where, fmt::format("{}{}, {}{}: partials with and without {} cannot be merged",
                                          theirs ? "holds " : "lacks ", what, sources_.front(),
                                          mine ? " holds it" : " lacks it", what));
    CorpusCoverage coverage = coverage_;
    coverage.merge(other.coverage_);
    // Both fingerprint lists sorted: walk them together.
    const std::vector<CountedSequence>& mine = sorted_sequences();
    const std::vector<CountedSequence>& theirs = other.sorted_sequences();
    int64_t repeated = 0;
    const CountedSequence* first_repeated = nullptr;
    for (size_t i = 0, j = 0; i < mine.size() && j < theirs.size();) {
        if (mine[i].fingerprint < theirs[j].fingerprint)
            ++i;
        else if (theirs[j].fingerprint < mine[i].fingerprint)
            ++j;
        else {
            if (!first_repeated) first_repeated = &mine[i];
            ++repeated, ++j;
        }
    }
    if (first_repeated)
        fail_input(where, fmt::format("{} of its {} sequences are already counted from {} (fingerprint {}): the same "
                                      "partial, or a shard of a corpus, twice would count them twice",
                                      repeated, other.num_sequences_, sources_[first_repeated->source],
                                      fingerprint_text(first_repeated->fingerprint)));
    return coverage;
}

void CorpusAccumulator::add(const ModelAnalysis& a, uint64_t sequence_fingerprint) {
    add_statistics(a);
    sequences_.push_back({sequence_fingerprint, 0});
}

void CorpusAccumulator::add_corpus_sequence(const ModelAnalysis& a, uint64_t sequence_fingerprint,
                                            int64_t corpus_position) {
    add_statistics(a);
    unkeyed_.push_back({sequence_fingerprint, corpus_position});
}

void CorpusAccumulator::set_coverage(CorpusCoverage coverage) {
    if (!unkeyed_.empty()) {
        if (coverage.corpora().size() != 1)
            throw Error(ErrorKind::internal,
                        "CorpusAccumulator::set_coverage: the sequences of a corpus run need their one corpus");
        const uint64_t corpus = coverage.corpora().front().fingerprint;
        for (const PositionedSequence& s : unkeyed_)
            sequences_.push_back({corpus_sequence_key(corpus, s.position, s.fingerprint), 0});
        unkeyed_.clear();
    }
    coverage_ = std::move(coverage);
}

void CorpusAccumulator::add_statistics(const ModelAnalysis& a) {
    const int64_t N = a.num_layers * a.num_heads;
    if (num_sequences_ == 0 && heads_.empty()) {
        num_layers_ = a.num_layers, num_heads_ = a.num_heads, causal_ = a.causal;
        heads_.assign(static_cast<size_t>(N * head_stat_count), {});
        for (auto& m : matrices_) m.assign(static_cast<size_t>(N * N), {});
    }
    check_layout(a.num_layers, a.num_heads, a.causal, fmt::format("sequence {}", num_sequences_ + 1),
                 "the corpus so far");
    if (static_cast<int64_t>(a.heads.size()) != N)
        throw Error(ErrorKind::internal,
                    fmt::format("CorpusAccumulator::add: analysis holds {} heads", a.heads.size()));
    for (int64_t n = 0; n < N; ++n)
        for (int s = 0; s < head_stat_count; ++s)
            heads_[static_cast<size_t>(n * head_stat_count + s)].add(a.heads[static_cast<size_t>(n)].*
                                                                     head_stat_fields()[s].member);
    for (int m = 0; m < pair_metric_count; ++m)
        for (int64_t k = 0; k < N * N; ++k)
            matrices_[m][static_cast<size_t>(k)].add(a.matrices[m].values[static_cast<size_t>(k)]);
    ++num_sequences_;
    total_queries_ += a.num_queries;
    max_queries_ = std::max(max_queries_, a.num_queries);
    max_keys_ = std::max(max_keys_, a.num_keys);
}

void CorpusAccumulator::merge(const CorpusAccumulator& other, const std::string& where) {
    if (other.heads_.empty()) return;
    if (heads_.empty()) {
        *this = other;
        sources_ = {where};
        for (CountedSequence& s : sequences_) s.source = 0;
        weights_source_ = thresholds_source_ = 0;
        return;
    }
    CorpusCoverage coverage = check_mergeable(other, where);
    const auto source = static_cast<uint32_t>(sources_.size());
    sources_.push_back(where);
    if (!weights_fingerprint_ && other.weights_fingerprint_)
        weights_fingerprint_ = other.weights_fingerprint_, weights_source_ = source;
    if (!thresholds_ && other.thresholds_) thresholds_ = other.thresholds_, thresholds_source_ = source;
    const size_t before = sequences_.size();
    for (const CountedSequence& s : other.sorted_sequences()) sequences_.push_back({s.fingerprint, source});
    std::inplace_merge(sequences_.begin(), sequences_.begin() + static_cast<std::ptrdiff_t>(before), sequences_.end());
    for (size_t k = 0; k < heads_.size(); ++k) heads_[k].merge(other.heads_[k]);
    if (attribution_) attribution_->merge(*other.attribution_, where);
    if (patching_) patching_->merge(*other.patching_, where);
    if (ablation_) ablation_->merge(*other.ablation_, where);
    if (mean_maps_ && other.mean_maps_)
        mean_maps_->merge(*other.mean_maps_, where);
    else
        mean_maps_.reset();
    for (int m = 0; m < pair_metric_count; ++m)
        for (size_t k = 0; k < matrices_[m].size(); ++k) matrices_[m][k].merge(other.matrices_[m][k]);
    num_sequences_ += other.num_sequences_;
    total_queries_ += other.total_queries_;
    max_queries_ = std::max(max_queries_, other.max_queries_);
    max_keys_ = std::max(max_keys_, other.max_keys_);
    coverage_ = std::move(coverage);
}

ModelAnalysis CorpusAccumulator::finish(const LabelThresholds& thresholds) const {
    ModelAnalysis a;
    a.num_layers = num_layers_, a.num_heads = num_heads_, a.causal = causal_;
    a.num_queries = max_queries_, a.num_keys = max_keys_;
    a.num_sequences = num_sequences_, a.total_queries = total_queries_;
    const int64_t N = num_layers_ * num_heads_;
    a.heads.resize(static_cast<size_t>(N));
    a.heads_std.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
        a.head_ids.push_back({n / std::max<int64_t>(num_heads_, 1), n % std::max<int64_t>(num_heads_, 1)});
        for (int s = 0; s < head_stat_count; ++s) {
            const RunningMoments& r = heads_[static_cast<size_t>(n * head_stat_count + s)];
            a.heads[static_cast<size_t>(n)].*head_stat_fields()[s].member = r.mean_or_nan();
            a.heads_std[static_cast<size_t>(n)].*head_stat_fields()[s].member = r.population_std();
        }
    }
    for (int m = 0; m < pair_metric_count; ++m) {
        a.matrices[m] = HeadMatrix(N);
        a.matrices_std[m] = HeadMatrix(N);
        for (int64_t k = 0; k < N * N; ++k) {
            a.matrices[m].values[static_cast<size_t>(k)] = matrices_[m][static_cast<size_t>(k)].mean_or_nan();
            a.matrices_std[m].values[static_cast<size_t>(k)] = matrices_[m][static_cast<size_t>(k)].population_std();
        }
    }
    derive_labels_and_redundancy(a, thresholds);
    return a;
}

size_t CorpusAccumulator::state_bytes() const {
    size_t bytes = sizeof(*this) + heads_.capacity() * sizeof(RunningMoments);
    for (const auto& m : matrices_) bytes += m.capacity() * sizeof(RunningMoments);
    return bytes;
}

}  // namespace attn_viz
