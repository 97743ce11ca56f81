// Head ablation over a corpus (model --inputs C --ablate HEADS): every sequence runs the ablation
// of the listed heads (head_ablation.hpp), and running moments over the sequences are kept of
// each measure of each head (ablation_measures(): its loss, the change of the loss, the KL
// divergence) and of the clean loss. A corpus partial carries them, so shards merge to the result
// of one run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "head_ablation.hpp"
#include "running_moments.hpp"

namespace attn_viz {

class CorpusAblation {
public:
    CorpusAblation() = default;
    // `ablated` heads of a model of `layers` x `heads`, removed as `mode` says.
    CorpusAblation(int64_t layers, int64_t heads, AblationMode mode, std::vector<AblatedHead> ablated);

    // One sequence's report of the same heads in the same order (Error internal otherwise).
    void add(const AblationReport& report);
    // Adds another corpus's moments; refuses (Error bad_input naming `where`) another layout,
    // mode or list of heads.
    void merge(const CorpusAblation& other, const std::string& where);

    int64_t layers() const { return layers_; }
    int64_t heads() const { return heads_; }
    AblationMode mode() const { return mode_; }
    const std::vector<AblatedHead>& ablated() const { return ablated_; }
    int64_t sequences() const { return sequences_; }
    // Measure `measure` (an index into ablation_measures()) of ablated head `k` (an index into ablated()).
    const RunningMoments& moments(size_t k, size_t measure) const;
    const RunningMoments& clean_loss() const { return clean_loss_; }

    // {"mode", "num_layers", "num_heads", "heads" (["L0H1", ...]), "measures" (the names),
    // "sequences", "moments" (head-major: each head's measures in order), "clean_loss"} and back,
    // validated (Error bad_input naming `where`) against the partial's layout; a partial whose
    // measures are not this version's is refused.
    nlohmann::json partial_json() const;
    static CorpusAblation from_partial_json(const nlohmann::json& json, int64_t layers, int64_t heads,
                                            const std::string& where);

private:
    int64_t layers_ = 0, heads_ = 0, sequences_ = 0;
    AblationMode mode_ = AblationMode::zero;
    std::vector<AblatedHead> ablated_;
    std::vector<RunningMoments> moments_;  // [K * M]: head k's measure m at k * M + m
    RunningMoments clean_loss_;
};

}  // namespace attn_viz
