// Direct logit attribution over a corpus (model --inputs --logit-attribution): every component's
// direct contribution to the logit of each position's target (logit_attribution.hpp), as running
// moments over all attributed positions of all sequences. A corpus partial carries them
// (corpus_stats.hpp), so shards merge to the result of one run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "logit_attribution.hpp"
#include "running_moments.hpp"

namespace attn_viz {

// The components of one attributed position, as moments are kept of them.
enum class AttributionPart { head, layer_heads, attention_bias, mlp, embedding, norm_bias, logit };

class CorpusAttribution {
public:
    CorpusAttribution() = default;
    // L layers of H heads; target: what every position attributes ("next token" or "token 300 'x'").
    CorpusAttribution(int64_t layers, int64_t heads, std::string target);

    // Adds positions [0, positions) of `a` (a run of this layout; positions <= a.tokens).
    void add(const LogitAttribution& a, int64_t positions);
    // Adds another corpus's moments; refuses (Error bad_input naming `where`) another layout or target.
    void merge(const CorpusAttribution& other, const std::string& where);

    // The moments of one part: `layer` and `head` where the part has them (head: both; the
    // layer parts: layer; the others: neither).
    const RunningMoments& moments(AttributionPart part, int64_t layer = 0, int64_t head = 0) const;
    int64_t layers() const { return layers_; }
    int64_t heads() const { return heads_; }
    const std::string& target() const { return target_; }
    int64_t positions() const { return moments(AttributionPart::logit).count; }
    size_t num_moments() const { return moments_.size(); }

    // {"target", "num_layers", "num_heads", "moments": moments_json} and back, validated
    // (Error bad_input naming `where`) against the partial's layout.
    nlohmann::json partial_json() const;
    static CorpusAttribution from_partial_json(const nlohmann::json& json, int64_t layers, int64_t heads,
                                               const std::string& where);

private:
    size_t index(AttributionPart part, int64_t layer, int64_t head) const;

    int64_t layers_ = 0, heads_ = 0;
    std::string target_;
    // [L*H heads | L layer sums of heads | L attention biases | L feed-forwards | embedding, norm bias, logit]
    std::vector<RunningMoments> moments_;
};

}  // namespace attn_viz
