// Activation patching over a corpus (model --inputs C.jsonl --patch-from-inputs C2.jsonl): every
// clean sequence runs with its corrupted partner (the same line of the second corpus), every head
// is patched (activation_patching.hpp), and running moments over the pairs are kept of how far
// patching each head moves the metric (delta) and of the KL divergence it causes, with the
// metric's clean and corrupted values. A corpus partial carries them, so shards merge to the
// result of one run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "activation_patching.hpp"
#include "running_moments.hpp"

namespace attn_viz {

enum class PatchingPart { delta, kl, clean, corrupted };

class CorpusPatching {
public:
    CorpusPatching() = default;
    // L layers of H heads, every pair measured by `metric`.
    CorpusPatching(int64_t layers, int64_t heads, PatchMetric metric);

    // One pair's report, every head of this layout patched in it.
    void add(const PatchingReport& report);
    // The fingerprint of the corrupted corpus (CorpusDocuments::corpus_fingerprint), once read.
    void set_corrupted_corpus(uint64_t fingerprint) { corrupted_corpus_ = fingerprint; }
    // Adds another corpus's moments; refuses (Error bad_input naming `where`) another layout,
    // metric or corrupted corpus.
    void merge(const CorpusPatching& other, const std::string& where);

    // delta and kl: of head (layer, head); clean and corrupted: of the run (no layer or head).
    const RunningMoments& moments(PatchingPart part, int64_t layer = 0, int64_t head = 0) const;
    int64_t layers() const { return layers_; }
    int64_t heads() const { return heads_; }
    const PatchMetric& metric() const { return metric_; }
    int64_t pairs() const { return pairs_; }

    // {"metric" (patch_metric_name), "metric_tokens" (a logit difference's two token texts, when
    // known), "num_layers", "num_heads", "pairs", "corrupted_corpus", "moments"} and back, validated
    // (Error bad_input naming `where`) against the partial's layout.
    nlohmann::json partial_json() const;
    static CorpusPatching from_partial_json(const nlohmann::json& json, int64_t layers, int64_t heads,
                                            const std::string& where);

private:
    size_t index(PatchingPart part, int64_t layer, int64_t head) const;

    int64_t layers_ = 0, heads_ = 0, pairs_ = 0;
    PatchMetric metric_;
    std::optional<uint64_t> corrupted_corpus_;
    // [L*H deltas | L*H KL divergences | clean | corrupted]
    std::vector<RunningMoments> moments_;
};

}  // namespace attn_viz
