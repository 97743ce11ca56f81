#include "seq2seq_corpus.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "file_write.hpp"
#include "json_text.hpp"
#include "partial_json.hpp"

namespace attn_viz {

Seq2SeqCorpusAccumulator::Seq2SeqCorpusAccumulator(uint64_t weights_fingerprint, const LabelThresholds& thresholds)
    : stacks_{CorpusAccumulator(weights_fingerprint, thresholds), CorpusAccumulator(weights_fingerprint, thresholds),
              CorpusAccumulator(weights_fingerprint, thresholds)} {}

void Seq2SeqCorpusAccumulator::add_corpus_sequence(const Seq2SeqAnalysis& analysis, uint64_t fingerprint,
                                                   int64_t corpus_position) {
    const std::vector<CrossAlignment>& alignment = analysis.alignment;
    if (analysis.stacks.size() != stacks_.size() || alignment.size() != analysis.stacks.back().second.heads.size())
        throw Error(ErrorKind::internal,
                    fmt::format("Seq2SeqCorpusAccumulator: {} stacks, {} alignments for the cross heads",
                                analysis.stacks.size(), alignment.size()));
    for (size_t k = 0; k < stacks_.size(); ++k)
        stacks_[k].add_corpus_sequence(analysis.stacks[k].second, fingerprint, corpus_position);
    if (alignment_.empty()) alignment_.resize(alignment.size() * cross_alignment_count);
    for (size_t n = 0; n < alignment.size(); ++n)
        for (int s = 0; s < cross_alignment_count; ++s)
            alignment_[n * cross_alignment_count + static_cast<size_t>(s)].add(alignment[n].*
                                                                               cross_alignment_fields()[s].member);
}

void Seq2SeqCorpusAccumulator::set_coverage(const CorpusCoverage& coverage) {
    for (CorpusAccumulator& stack : stacks_) stack.set_coverage(coverage);
}

void Seq2SeqCorpusAccumulator::merge(const Seq2SeqCorpusAccumulator& other, const std::string& where) {
    if (other.alignment_.empty()) return;
    if (!alignment_.empty() && alignment_.size() != other.alignment_.size())
        fail_input(where, fmt::format("has {} cross heads, the partials before it {}",
                                      other.alignment_.size() / cross_alignment_count,
                                      alignment_.size() / cross_alignment_count));
    for (size_t k = 0; k < stacks_.size(); ++k) stacks_[k].merge(other.stacks_[k], where);
    if (alignment_.empty())
        alignment_ = other.alignment_;
    else
        for (size_t i = 0; i < alignment_.size(); ++i) alignment_[i].merge(other.alignment_[i]);
}

Seq2SeqAnalysis Seq2SeqCorpusAccumulator::finish(const LabelThresholds& thresholds) const {
    Seq2SeqAnalysis a;
    for (size_t k = 0; k < stacks_.size(); ++k)
        a.stacks.emplace_back(seq2seq_stack_names[k], stacks_[k].finish(thresholds));
    const size_t heads = alignment_.size() / cross_alignment_count;
    a.alignment.resize(heads);
    a.alignment_std.resize(heads);
    for (size_t n = 0; n < heads; ++n)
        for (int s = 0; s < cross_alignment_count; ++s) {
            const RunningMoments& m = alignment_[n * cross_alignment_count + static_cast<size_t>(s)];
            a.alignment[n].*cross_alignment_fields()[s].member = m.mean_or_nan();
            a.alignment_std[n].*cross_alignment_fields()[s].member = m.population_std();
        }
    return a;
}

nlohmann::json Seq2SeqCorpusAccumulator::partial_json() const {
    nlohmann::json stacks = nlohmann::json::object();
    for (size_t k = 0; k < stacks_.size(); ++k) stacks[seq2seq_stack_names[k]] = stacks_[k].partial_json();
    nlohmann::json statistics = nlohmann::json::array();
    for (const CrossAlignmentField& f : cross_alignment_fields()) statistics.push_back(f.name);
    return {{"format", seq2seq_partial_format},
            {"stacks", std::move(stacks)},
            {"cross_alignment", {{"statistics", std::move(statistics)}, {"heads", moments_json(alignment_)}}}};
}

Seq2SeqCorpusAccumulator Seq2SeqCorpusAccumulator::from_partial_json(const nlohmann::json& j,
                                                                     const std::string& where) {
    if (!j.is_object() || !j.contains("format") || j["format"] != seq2seq_partial_format)
        fail_input(where, fmt::format("not an encoder-decoder partial result (\"format\" must be \"{}\")",
                                      seq2seq_partial_format));
    Seq2SeqCorpusAccumulator acc;
    const nlohmann::json& stacks = member(j, "stacks", where);
    for (size_t k = 0; k < acc.stacks_.size(); ++k)
        acc.stacks_[k] = CorpusAccumulator::from_partial_json(member(stacks, seq2seq_stack_names[k], where), where);
    for (size_t k = 1; k < acc.stacks_.size(); ++k)
        if (acc.stacks_[k].num_sequences() != acc.num_sequences())
            fail_input(where, fmt::format("its {} stack counts {} sequences, its encoder {}", seq2seq_stack_names[k],
                                          acc.stacks_[k].num_sequences(), acc.num_sequences()));
    const nlohmann::json& alignment = member(j, "cross_alignment", where);
    const nlohmann::json& statistics = member(alignment, "statistics", fmt::format("{} cross_alignment", where));
    bool same_statistics = statistics.is_array() && statistics.size() == cross_alignment_count;
    for (int s = 0; same_statistics && s < cross_alignment_count; ++s)
        same_statistics = statistics[s] == cross_alignment_fields()[s].name;
    if (!same_statistics) fail_input(where, "\"cross_alignment\" does not list this version's alignment statistics");
    const nlohmann::json& cross = stacks["cross"];  // its sizes read and checked above
    const auto cross_heads =
        static_cast<size_t>(cross["num_layers"].get<int64_t>() * cross["num_heads"].get<int64_t>());
    acc.alignment_ = read_moments(member(alignment, "heads", where), cross_heads * cross_alignment_count,
                                  acc.num_sequences(), fmt::format("{} cross_alignment heads", where));
    return acc;
}

void Seq2SeqCorpusAccumulator::save_partial(const std::string& path) const {
    if (alignment_.empty()) throw Error(ErrorKind::internal, fmt::format("{}: no sequence was accumulated", path));
    write_file_atomically(path, json_file_text(partial_json()));
}

}  // namespace attn_viz
