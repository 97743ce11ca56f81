#include "compare_corpus.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "file_write.hpp"
#include "fingerprint.hpp"
#include "head_labels.hpp"
#include "json_text.hpp"
#include "partial_json.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// Each head's block of moments: the map measures, top-1 agreement, whether the label changed,
// then every statistic of A, of B and of the change B - A.
enum HeadMeasure : int64_t {
    map_correlation,
    map_cosine,
    map_js_distance,
    top1_agreement,
    label_changed,
    first_statistic
};
constexpr const char* head_measure_names[] = {"map_correlation", "map_cosine", "map_js_distance", "top1_agreement",
                                              "label_changed"};

constexpr int64_t measures_per_head() { return first_statistic + 3 * head_stat_count; }

size_t at(int64_t head, int64_t measure) { return static_cast<size_t>(head * measures_per_head() + measure); }

// The names of a head's block, in order ("a.entropy", ..., "change.entropy", ...): recorded in
// the partial so that a file of another version is refused rather than misread.
nlohmann::json measure_names() {
    nlohmann::json names = nlohmann::json::array();
    for (const char* name : head_measure_names) names.push_back(name);
    for (const char* side : {"a.", "b.", "change."})
        for (const HeadStatField& f : head_stat_fields()) names.push_back(std::string(side) + f.name);
    return names;
}

// Both runs' analyses (means or spreads) with one value per head and statistic from `value`.
template <typename Value>
HeadComparison comparison_of(int64_t layers, int64_t heads, Value value) {
    HeadComparison c;
    const int64_t N = layers * heads;
    for (ModelAnalysis* side : {&c.first, &c.second}) {
        side->num_layers = layers, side->num_heads = heads;
        for (int64_t n = 0; n < N; ++n) side->head_ids.push_back({n / heads, n % heads});
        side->heads.resize(static_cast<size_t>(N));
    }
    c.change.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
        c.maps.correlation.push_back(value(at(n, map_correlation)));
        c.maps.cosine.push_back(value(at(n, map_cosine)));
        c.maps.js_distance.push_back(value(at(n, map_js_distance)));
        for (int64_t s = 0; s < head_stat_count; ++s) {
            const auto member = head_stat_fields()[static_cast<size_t>(s)].member;
            c.first.heads[static_cast<size_t>(n)].*member = value(at(n, first_statistic + s));
            c.second.heads[static_cast<size_t>(n)].*member = value(at(n, first_statistic + head_stat_count + s));
            c.change[static_cast<size_t>(n)].*member = value(at(n, first_statistic + 2 * head_stat_count + s));
        }
    }
    return c;
}

}  // namespace

CompareCorpusAccumulator::CompareCorpusAccumulator(uint64_t model_a, uint64_t model_b,
                                                   const LabelThresholds& thresholds)
    : model_a_(model_a), model_b_(model_b), thresholds_(thresholds) {}

void CompareCorpusAccumulator::add(const HeadComparison& c, const std::vector<double>& top1,
                                   const OutputComparison* output) {
    const int64_t layers = c.first.num_layers, heads = c.first.num_heads;
    if (num_sequences_ == 0) {
        num_layers_ = layers, num_heads_ = heads, has_output_ = output != nullptr;
        heads_.assign(static_cast<size_t>(layers * heads * measures_per_head()), {});
        output_.assign(has_output_ ? corpus_output_measures.size() : 0, {});
    } else if (layers != num_layers_ || heads != num_heads_ || (output != nullptr) != has_output_) {
        fail_input("compare", fmt::format("a sequence of {} x {} layers x heads does not match the corpus's first",
                                          layers, heads));
    }
    if (top1.size() != c.first.heads.size())
        throw Error(ErrorKind::internal, "compare corpus: top-1 agreement of another head count");
    ++num_sequences_;
    max_queries_ = std::max(max_queries_, c.first.num_queries), max_keys_ = std::max(max_keys_, c.first.num_keys);
    for (size_t n = 0; n < c.first.heads.size(); ++n) {
        const int64_t h = static_cast<int64_t>(n);
        heads_[at(h, map_correlation)].add(c.maps.correlation[n]);
        heads_[at(h, map_cosine)].add(c.maps.cosine[n]);
        heads_[at(h, map_js_distance)].add(c.maps.js_distance[n]);
        heads_[at(h, top1_agreement)].add(top1[n]);
        heads_[at(h, label_changed)].add(c.first.labels[n] != c.second.labels[n] ? 1.0 : 0.0);
        for (int64_t s = 0; s < head_stat_count; ++s) {
            const auto member = head_stat_fields()[static_cast<size_t>(s)].member;
            heads_[at(h, first_statistic + s)].add(c.first.heads[n].*member);
            heads_[at(h, first_statistic + head_stat_count + s)].add(c.second.heads[n].*member);
            heads_[at(h, first_statistic + 2 * head_stat_count + s)].add(c.change[n].*member);
        }
    }
    if (!output) return;
    const double values[] = {output->mean_kl, output->kl[static_cast<size_t>(output->max_kl_position)], output->loss_a,
                             output->loss_b, output->top1_agreement};
    for (size_t k = 0; k < output_.size(); ++k) output_[k].add(values[k]);
}

void CompareCorpusAccumulator::merge(const CompareCorpusAccumulator& other, const std::string& where) {
    if (other.num_sequences_ == 0) return;
    if (num_sequences_ == 0) {
        *this = other;
        source_ = where;
        return;
    }
    if (other.num_layers_ != num_layers_ || other.num_heads_ != num_heads_ || other.has_output_ != has_output_)
        fail_input(where, fmt::format("compares {} x {} layers x heads, {} {} x {}", other.num_layers_,
                                      other.num_heads_, source_, num_layers_, num_heads_));
    if (other.model_a_ != model_a_ || other.model_b_ != model_b_)
        fail_input(where, fmt::format("compares another model pair (fingerprints {}, {}) than {} ({}, {}): partials "
                                      "of different model pairs cannot be merged",
                                      fingerprint_text(other.model_a_), fingerprint_text(other.model_b_), source_,
                                      fingerprint_text(model_a_), fingerprint_text(model_b_)));
    for (const auto& [name, member] : threshold_fields())
        if (other.thresholds_.*member != thresholds_.*member)
            fail_input(where, fmt::format("labels heads with another {} than {}: merge runs labelled with the same "
                                          "thresholds",
                                          name, source_));
    CorpusCoverage coverage = coverage_;
    coverage.merge(other.coverage_);  // refuses a shard twice or a corpus that changed
    coverage_ = std::move(coverage);
    for (size_t k = 0; k < heads_.size(); ++k) heads_[k].merge(other.heads_[k]);
    for (size_t k = 0; k < output_.size(); ++k) output_[k].merge(other.output_[k]);
    num_sequences_ += other.num_sequences_;
    max_queries_ = std::max(max_queries_, other.max_queries_), max_keys_ = std::max(max_keys_, other.max_keys_);
}

CorpusComparison CompareCorpusAccumulator::finish(const LabelThresholds& thresholds) const {
    CorpusComparison r;
    r.num_sequences = num_sequences_;
    r.mean = comparison_of(num_layers_, num_heads_, [&](size_t k) { return heads_[k].mean_or_nan(); });
    r.spread = comparison_of(num_layers_, num_heads_, [&](size_t k) { return heads_[k].population_std(); });
    for (ModelAnalysis* side : {&r.mean.first, &r.mean.second}) {
        side->num_queries = max_queries_, side->num_keys = max_keys_, side->num_sequences = num_sequences_;
        side->thresholds = thresholds;
        const LabelContext context = label_context(*side);
        for (const HeadStats& s : side->heads) side->labels.push_back(label_head(s, thresholds, context));
    }
    r.spread.first.labels = r.mean.first.labels, r.spread.second.labels = r.mean.second.labels;
    for (int64_t n = 0; n < num_layers_ * num_heads_; ++n) {
        r.top1.push_back(heads_[at(n, top1_agreement)]);
        r.label_changed.push_back(heads_[at(n, label_changed)]);
    }
    r.output = output_;
    return r;
}

nlohmann::json CompareCorpusAccumulator::partial_json() const {
    return {{"format", compare_partial_format},
            {"num_layers", num_layers_},
            {"num_heads", num_heads_},
            {"num_sequences", num_sequences_},
            {"max_queries", max_queries_},
            {"max_keys", max_keys_},
            {"measures", measure_names()},
            {"heads", moments_json(heads_)},
            {"output", has_output_ ? moments_json(output_) : nlohmann::json()},
            {"thresholds", thresholds_json(thresholds_)},
            {"fingerprints",
             {{"hash", fingerprint_hash},
              {"model_a", fingerprint_text(model_a_)},
              {"model_b", fingerprint_text(model_b_)}}},
            {"corpora", corpora_json(coverage_)}};
}

CompareCorpusAccumulator CompareCorpusAccumulator::from_partial_json(const nlohmann::json& j,
                                                                     const std::string& where) {
    if (!j.is_object() || !j.contains("format") || j["format"] != compare_partial_format)
        fail_input(where,
                   fmt::format("not a compare partial result (\"format\" must be \"{}\")", compare_partial_format));
    CompareCorpusAccumulator acc;
    acc.source_ = where;
    acc.num_layers_ = whole_number(j, "num_layers", 1, max_partial_heads, where);
    acc.num_heads_ = whole_number(j, "num_heads", 1, max_partial_heads, where);
    const int64_t N = acc.num_layers_ * acc.num_heads_;
    if (N > max_partial_heads) fail_input(where, fmt::format("more than {} heads in all", max_partial_heads));
    acc.num_sequences_ = whole_number(j, "num_sequences", 1, max_partial_sequences, where);
    acc.max_queries_ = whole_number(j, "max_queries", 1, max_partial_sequences, where);
    acc.max_keys_ = whole_number(j, "max_keys", 1, max_partial_sequences, where);
    if (member(j, "measures", where) != measure_names())
        fail_input(where, "\"measures\" does not list this version's per-head compare measures");
    acc.heads_ = read_moments(member(j, "heads", where), static_cast<size_t>(N * measures_per_head()),
                              acc.num_sequences_, fmt::format("{} heads", where));
    const nlohmann::json& output = member(j, "output", where);
    acc.has_output_ = !output.is_null();
    if (acc.has_output_)
        acc.output_ =
            read_moments(output, corpus_output_measures.size(), acc.num_sequences_, fmt::format("{} output", where));
    acc.thresholds_ = read_thresholds(member(j, "thresholds", where), where);
    const nlohmann::json& fingerprints = member(j, "fingerprints", where);
    if (member(fingerprints, "hash", where) != fingerprint_hash)
        fail_input(where, fmt::format("\"fingerprints\" must use the hash \"{}\"", fingerprint_hash));
    acc.model_a_ = fingerprint_value(member(fingerprints, "model_a", where), "\"model_a\"", where);
    acc.model_b_ = fingerprint_value(member(fingerprints, "model_b", where), "\"model_b\"", where);
    acc.coverage_ = read_coverage(member(j, "corpora", where), acc.num_sequences_, where);
    if (acc.coverage_.sequences_covered() != acc.num_sequences_)
        fail_input(where, fmt::format("its \"corpora\" cover {} sequences, not its {}",
                                      acc.coverage_.sequences_covered(), acc.num_sequences_));
    return acc;
}

void CompareCorpusAccumulator::save_partial(const std::string& path) const {
    if (num_sequences_ == 0) throw Error(ErrorKind::internal, fmt::format("{}: no sequence was compared", path));
    write_file_atomically(path, json_file_text(partial_json()));
}

nlohmann::json corpus_comparison_json(const CorpusComparison& c) {
    nlohmann::json doc = comparison_json(c.mean);
    const nlohmann::json spread = comparison_json(c.spread);
    for (size_t n = 0; n < c.top1.size(); ++n) {
        nlohmann::json& head = doc["heads"][n];
        for (const char* key : {"map_correlation", "map_cosine", "map_js_distance", "a", "b", "change"})
            head[fmt::format("{}_std", key)] = spread["heads"][n][key];
        head["top1_agreement"] = json_number(c.top1[n].mean_or_nan());
        head["top1_agreement_std"] = json_number(c.top1[n].population_std());
        head["label_changed"] = json_number(c.label_changed[n].mean_or_nan());
        head["label_changed_std"] = json_number(c.label_changed[n].population_std());
    }
    doc["sequences"] = c.num_sequences;
    if (c.output.empty()) return doc;
    nlohmann::json output = {{"sequences", c.num_sequences}};
    for (size_t k = 0; k < c.output.size(); ++k) {
        output[corpus_output_measures[k]] = json_number(c.output[k].mean_or_nan());
        output[fmt::format("{}_std", corpus_output_measures[k])] = json_number(c.output[k].population_std());
    }
    doc["output"] = std::move(output);
    return doc;
}

std::vector<double> mean_top1(const CorpusComparison& c) {
    std::vector<double> top1;
    for (const RunningMoments& r : c.top1) top1.push_back(r.mean_or_nan());
    return top1;
}

}  // namespace attn_viz
