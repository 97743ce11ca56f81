// Activation patching per head: run a clean and a corrupted input of the same length, then for
// each head replace its clean output by its output on the corrupted input (at every position) and
// rerun the model from that head's layer on, measuring how far a metric of the clean run moves
// toward the corrupted run's: the next-token loss on the clean text, or the difference of two
// tokens' logits at the last position.
#pragma once

#include <string>
#include <vector>

#include "head_ablation.hpp"

namespace attn_viz {

class ModelTokenizer;

struct PatchMetric {
    enum class Kind { loss, logit_diff };
    Kind kind = Kind::loss;
    int correct = -1, wrong = -1;  // logit_diff: logit(correct) - logit(wrong) at the last position
    // logit_diff: the two tokens' texts as the tokenizer labels them (titles, stats.json); empty
    // when not known (a partial written before they were kept). Not part of the metric's identity.
    std::string correct_label, wrong_label;

    bool operator==(const PatchMetric& o) const { return kind == o.kind && correct == o.correct && wrong == o.wrong; }
};

// "loss" or "logit-diff:A,B", A and B tokens below `vocab_size` named by id or, given a
// `tokenizer`, by their quoted text (token_reference_id: logit-diff:" ball"," dog"), whose labels
// are then kept; Error(usage, "patch metric '...': ...") otherwise.
PatchMetric parse_patch_metric(const std::string& text, int64_t vocab_size, const ModelTokenizer* tokenizer = nullptr);
// "loss" or "logit-diff:A,B" with A and B the ids, whichever way they were named.
std::string patch_metric_name(const PatchMetric& metric);

// logits: [T, V] of a run of `tokens` (the clean ids) -> the metric: the mean next-token loss of
// `tokens` (NaN when T = 1), or logits[T-1][correct] - logits[T-1][wrong].
double patch_metric_value(const PatchMetric& metric, const Tensor& logits, const std::vector<int>& tokens);

struct HeadPatchEffect {
    AblatedHead id;
    double value = 0;  // the metric with the head patched
    double delta = 0;  // value - the clean value
    double fraction =
        0;  // delta / (corrupted - clean): the share of the corruption's effect the head alone carries (NaN if 0)
    double kl = 0;  // mean_t KL(p_clean,t || p_patched,t), nats
};

struct PatchingReport {
    PatchMetric metric;
    double clean = 0, corrupted = 0;  // the metric of the clean run, and of the corrupted run (scored on the clean ids)
    std::vector<HeadPatchEffect> heads;
};

// clean, corrupted: runs (model.run) of two token sequences of the same length T (Error(internal)
// otherwise). For each of `heads`, its output in the clean run replaced by its corrupted output
// (logits_with_head_replaced: one partial forward per head). on_head (optional): told after each.
PatchingReport patch_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean, const ModelRun& corrupted,
                           const std::vector<AblatedHead>& heads, const PatchMetric& metric,
                           const StepCallback& on_head = {});

}  // namespace attn_viz
