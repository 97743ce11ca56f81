#include "corpus_patching.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "error.hpp"
#include "fingerprint.hpp"
#include "partial_json.hpp"

namespace attn_viz {

CorpusPatching::CorpusPatching(int64_t layers, int64_t heads, PatchMetric metric)
    : layers_(layers), heads_(heads), metric_(metric), moments_(static_cast<size_t>(2 * layers * heads + 2)) {}

size_t CorpusPatching::index(PatchingPart part, int64_t layer, int64_t head) const {
    const int64_t N = layers_ * heads_;
    switch (part) {
        case PatchingPart::delta:
            return static_cast<size_t>(layer * heads_ + head);
        case PatchingPart::kl:
            return static_cast<size_t>(N + layer * heads_ + head);
        case PatchingPart::clean:
            return static_cast<size_t>(2 * N);
        case PatchingPart::corrupted:
            break;
    }
    return static_cast<size_t>(2 * N + 1);
}

const RunningMoments& CorpusPatching::moments(PatchingPart part, int64_t layer, int64_t head) const {
    return moments_[index(part, layer, head)];
}

void CorpusPatching::add(const PatchingReport& report) {
    if (static_cast<int64_t>(report.heads.size()) != layers_ * heads_ || report.metric != metric_)
        throw Error(ErrorKind::internal, "CorpusPatching::add: a report of another layout or metric");
    for (const HeadPatchEffect& e : report.heads) {
        moments_[index(PatchingPart::delta, e.id.layer, e.id.head)].add(e.delta);
        moments_[index(PatchingPart::kl, e.id.layer, e.id.head)].add(e.kl);
    }
    moments_[index(PatchingPart::clean, 0, 0)].add(report.clean);
    moments_[index(PatchingPart::corrupted, 0, 0)].add(report.corrupted);
    ++pairs_;
}

void CorpusPatching::merge(const CorpusPatching& other, const std::string& where) {
    if (other.layers_ != layers_ || other.heads_ != heads_)
        fail_input(where, "its activation patching has another layout");
    if (other.metric_ != metric_)
        fail_input(where, fmt::format("patches with the metric {}, the corpus so far with {}: partials measuring "
                                      "different metrics cannot be merged",
                                      patch_metric_name(other.metric_), patch_metric_name(metric_)));
    if (corrupted_corpus_ && other.corrupted_corpus_ && *corrupted_corpus_ != *other.corrupted_corpus_)
        fail_input(where,
                   fmt::format("was patched from another corrupted corpus (fingerprint {}, the corpus so far {})",
                               fingerprint_text(*other.corrupted_corpus_), fingerprint_text(*corrupted_corpus_)));
    if (!corrupted_corpus_) corrupted_corpus_ = other.corrupted_corpus_;
    if (metric_.correct_label.empty()) metric_ = other.metric_;  // its tokens' texts, if it knows them
    for (size_t k = 0; k < moments_.size(); ++k) moments_[k].merge(other.moments_[k]);
    pairs_ += other.pairs_;
}

nlohmann::json CorpusPatching::partial_json() const {
    nlohmann::json j = {{"metric", patch_metric_name(metric_)},
                        {"num_layers", layers_},
                        {"num_heads", heads_},
                        {"pairs", pairs_},
                        {"moments", moments_json(moments_)}};
    if (corrupted_corpus_) j["corrupted_corpus"] = fingerprint_text(*corrupted_corpus_);
    if (!metric_.correct_label.empty()) j["metric_tokens"] = {metric_.correct_label, metric_.wrong_label};
    return j;
}

CorpusPatching CorpusPatching::from_partial_json(const nlohmann::json& j, int64_t layers, int64_t heads,
                                                 const std::string& where) {
    const std::string in = fmt::format("{} activation_patching", where);
    check_block_layout(j, layers, heads, in);
    const nlohmann::json& metric = member(j, "metric", in);
    if (!metric.is_string()) fail_input(in, "\"metric\" must be a string");
    PatchMetric parsed;
    try {
        // The ids were checked against the model's vocabulary by the run that wrote the partial.
        parsed = parse_patch_metric(metric.get<std::string>(), INT32_MAX);
    } catch (const Error& e) {
        fail_input(in, e.what());
    }
    if (j.contains("metric_tokens")) {
        const nlohmann::json& labels = j["metric_tokens"];
        if (parsed.kind != PatchMetric::Kind::logit_diff || !labels.is_array() || labels.size() != 2 ||
            !labels[0].is_string() || !labels[1].is_string())
            fail_input(in, "\"metric_tokens\" must be the two texts of a logit-diff metric's tokens");
        parsed.correct_label = labels[0], parsed.wrong_label = labels[1];
    }
    CorpusPatching p(layers, heads, parsed);
    p.pairs_ = whole_number(j, "pairs", 0, max_partial_sequences, in);
    if (j.contains("corrupted_corpus"))
        p.corrupted_corpus_ = fingerprint_value(j["corrupted_corpus"], "\"corrupted_corpus\"", in);
    p.moments_ = read_moments(member(j, "moments", in), p.moments_.size(), max_partial_sequences, in);
    return p;
}

}  // namespace attn_viz
