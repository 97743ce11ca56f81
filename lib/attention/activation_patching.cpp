#include "activation_patching.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "error.hpp"
#include "token_reference.hpp"

namespace attn_viz {

PatchMetric parse_patch_metric(const std::string& text, int64_t vocab_size, const ModelTokenizer* tokenizer) {
    if (text == "loss") return {};
    const std::string prefix = "logit-diff:";
    const auto refuse = [&](const std::string& why) {
        throw Error(ErrorKind::usage, fmt::format("patch metric '{}': {}", text, why));
    };
    if (text.rfind(prefix, 0) != 0) refuse("expected loss or logit-diff:A,B (two token ids or quoted texts)");
    const std::vector<std::string> tokens = split_token_references(text.substr(prefix.size()));
    if (tokens.size() != 2) refuse("expected two tokens after logit-diff:, ids or quoted texts");
    PatchMetric metric{PatchMetric::Kind::logit_diff};
    try {
        metric.correct = token_reference_id(tokens[0], tokenizer, vocab_size);
        metric.wrong = token_reference_id(tokens[1], tokenizer, vocab_size);
    } catch (const Error& e) {
        refuse(e.what());
    }
    if (tokenizer) {
        const std::vector<std::string> labels = tokenizer->labels({metric.correct, metric.wrong});
        metric.correct_label = labels[0], metric.wrong_label = labels[1];
    }
    return metric;
}

std::string patch_metric_name(const PatchMetric& metric) {
    if (metric.kind == PatchMetric::Kind::loss) return "loss";
    return fmt::format("logit-diff:{},{}", metric.correct, metric.wrong);
}

double patch_metric_value(const PatchMetric& metric, const Tensor& logits, const std::vector<int>& tokens) {
    if (metric.kind == PatchMetric::Kind::loss) return next_token_loss(logits, tokens);
    const float* last = logits.ptr() + (logits.dim(0) - 1) * logits.dim(1);
    return double(last[metric.correct]) - last[metric.wrong];
}

PatchingReport patch_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean, const ModelRun& corrupted,
                           const std::vector<AblatedHead>& heads, const PatchMetric& metric,
                           const StepCallback& on_head) {
    if (clean.tokens.size() != corrupted.tokens.size())
        throw Error(ErrorKind::internal, "patch_heads: the clean and corrupted runs differ in length");
    PatchingReport report;
    report.metric = metric;
    report.clean = patch_metric_value(metric, clean.logits, clean.tokens);
    report.corrupted = patch_metric_value(metric, corrupted.logits, clean.tokens);
    const double effect = report.corrupted - report.clean;
    for (const AblatedHead& id : heads) {
        const int64_t d_head = model.attention_weights()[static_cast<size_t>(id.layer)]->d_head;
        const Tensor patched_in =
            head_output(corrupted.layers.at(static_cast<size_t>(id.layer)).context, id.head, d_head);
        const Tensor logits = logits_with_head_replaced(model, backend, clean, id, patched_in);
        HeadPatchEffect e{id, patch_metric_value(metric, logits, clean.tokens), 0, 0,
                          mean_next_token_kl(clean.logits, logits)};
        e.delta = e.value - report.clean;
        e.fraction = effect != 0 ? e.delta / effect : std::numeric_limits<double>::quiet_NaN();
        report.heads.push_back(e);
        if (on_head) on_head(static_cast<int64_t>(report.heads.size()), static_cast<int64_t>(heads.size()));
    }
    return report;
}

}  // namespace attn_viz
