// The logit attribution row: each component's direct contribution to the logit of each
// position's next token (or of one target) through the final norm with its scale frozen
// (logit_attribution.hpp); over a corpus, each component's moments (corpus_attribution.hpp).
#include "logit_attribution.hpp"

#include <fmt/format.h>

#include "analyses.hpp"
#include "corpus_attribution.hpp"
#include "logit_attribution_report.hpp"
#include "token_reference.hpp"

namespace attn_viz {
namespace {

class LogitAttributionAnalysis final : public WholeModelAnalysis {
public:
    explicit LogitAttributionAnalysis(LogitAttributionOptions options) : options_(std::move(options)) {}

    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::logit_attribution); }

    std::string obstacle(const WholeModel& model, const std::vector<int>&) const override {
        if (std::string no_logits = logits_obstacle(model); !no_logits.empty()) return no_logits;
        const std::string obstacle = logit_attribution_obstacle(model.weights());
        return obstacle.empty() ? ""
                                : fmt::format(": this model's logits do not split into per-head terms: {}", obstacle);
    }

    std::string corpus_obstacle(const WholeModel& model) const override { return obstacle(model, {}); }

    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        const std::vector<int> targets = targets_of(*run);
        return write_logit_attribution_outputs(ctx.out, attribute_logits(ctx.model, ctx.backend, *run, targets),
                                               ctx.tokenizer.labels(targets), options_.target_description, ctx.report);
    }

    // Each sequence attributed at every position with a target, else at the positions whose next
    // token the sequence holds (all but the last).
    std::unique_ptr<CorpusPart> corpus_part(AnalysisContext& ctx, CorpusAccumulator& corpus) const override {
        const ModelDescription& c = ctx.model.description();
        corpus.keep_attribution(CorpusAttribution(c.n_layers, c.n_heads, options_.target_description));
        return corpus_part_of(
            [this, &ctx, &attribution = *corpus.attribution()](const std::string&, const ModelRun& run) {
                Timings::Scope t(ctx.timings, "logit attribution");
                const int64_t T = static_cast<int64_t>(run.tokens.size());
                attribution.add(attribute_logits(ctx.model, ctx.backend, run, targets_of(run)),
                                options_.target >= 0 ? T : T - 1);
            });
    }

private:
    // The token attributed at each position of `run`: the target, or each position's next token.
    std::vector<int> targets_of(const ModelRun& run) const {
        return options_.target >= 0 ? std::vector<int>(run.tokens.size(), static_cast<int>(options_.target))
                                    : next_token_targets(run);
    }

    LogitAttributionOptions options_;
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(LogitAttributionOptions options) {
    return std::make_unique<LogitAttributionAnalysis>(std::move(options));
}

std::string attribution_target_description(int64_t target, const ModelTokenizer& tokenizer) {
    const int target_id = static_cast<int>(target);
    return target >= 0 ? token_words(target_id, tokenizer.labels({target_id})[0]) : "next token";
}

}  // namespace attn_viz
