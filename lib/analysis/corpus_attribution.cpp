#include "corpus_attribution.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "partial_json.hpp"

namespace attn_viz {

CorpusAttribution::CorpusAttribution(int64_t layers, int64_t heads, std::string target)
    : layers_(layers),
      heads_(heads),
      target_(std::move(target)),
      moments_(static_cast<size_t>(layers * heads + 3 * layers + 3)) {}

size_t CorpusAttribution::index(AttributionPart part, int64_t layer, int64_t head) const {
    const int64_t N = layers_ * heads_;
    switch (part) {
        case AttributionPart::head:
            return static_cast<size_t>(layer * heads_ + head);
        case AttributionPart::layer_heads:
            return static_cast<size_t>(N + layer);
        case AttributionPart::attention_bias:
            return static_cast<size_t>(N + layers_ + layer);
        case AttributionPart::mlp:
            return static_cast<size_t>(N + 2 * layers_ + layer);
        case AttributionPart::embedding:
            return static_cast<size_t>(N + 3 * layers_);
        case AttributionPart::norm_bias:
            return static_cast<size_t>(N + 3 * layers_ + 1);
        case AttributionPart::logit:
            break;
    }
    return static_cast<size_t>(N + 3 * layers_ + 2);
}

const RunningMoments& CorpusAttribution::moments(AttributionPart part, int64_t layer, int64_t head) const {
    return moments_[index(part, layer, head)];
}

void CorpusAttribution::add(const LogitAttribution& a, int64_t positions) {
    if (a.layers != layers_ || a.heads != heads_ || positions > a.tokens)
        throw Error(ErrorKind::internal, "CorpusAttribution::add: an attribution of another layout");
    const int64_t T = a.tokens;
    for (int64_t t = 0; t < positions; ++t) {
        for (int64_t l = 0; l < layers_; ++l) {
            double sum = 0;
            for (int64_t h = 0; h < heads_; ++h) {
                moments_[index(AttributionPart::head, l, h)].add(a.head_at(l, h, t));
                sum += a.head_at(l, h, t);
            }
            moments_[index(AttributionPart::layer_heads, l, 0)].add(sum);
            moments_[index(AttributionPart::attention_bias, l, 0)].add(
                a.attention_bias[static_cast<size_t>(l * T + t)]);
            moments_[index(AttributionPart::mlp, l, 0)].add(a.mlp[static_cast<size_t>(l * T + t)]);
        }
        moments_[index(AttributionPart::embedding, 0, 0)].add(a.embedding[static_cast<size_t>(t)]);
        moments_[index(AttributionPart::norm_bias, 0, 0)].add(a.norm_bias[static_cast<size_t>(t)]);
        moments_[index(AttributionPart::logit, 0, 0)].add(a.logits[static_cast<size_t>(t)]);
    }
}

void CorpusAttribution::merge(const CorpusAttribution& other, const std::string& where) {
    if (other.layers_ != layers_ || other.heads_ != heads_)
        fail_input(where, "its logit attribution has another layout");
    if (other.target_ != target_)
        fail_input(where, fmt::format("attributes the logit of the {}, the corpus so far that of the {}: partials "
                                      "attributing different targets cannot be merged",
                                      other.target_, target_));
    for (size_t k = 0; k < moments_.size(); ++k) moments_[k].merge(other.moments_[k]);
}

nlohmann::json CorpusAttribution::partial_json() const {
    return {{"target", target_}, {"num_layers", layers_}, {"num_heads", heads_}, {"moments", moments_json(moments_)}};
}

CorpusAttribution CorpusAttribution::from_partial_json(const nlohmann::json& j, int64_t layers, int64_t heads,
                                                       const std::string& where) {
    const std::string in = fmt::format("{} logit_attribution", where);
    check_block_layout(j, layers, heads, in);
    const nlohmann::json& target = member(j, "target", in);
    if (!target.is_string()) fail_input(in, "\"target\" must be a string");
    CorpusAttribution a(layers, heads, target.get<std::string>());
    a.moments_ = read_moments(member(j, "moments", in), a.moments_.size(), max_partial_sequences, in);
    return a;
}

}  // namespace attn_viz
