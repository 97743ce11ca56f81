// The patching row: every head's clean output replaced by its output on a corrupted input of as
// many tokens and the model rerun from its layer on (activation_patching.hpp); over a corpus,
// each sequence paired with its partner in a corrupted corpus (corpus_patching_run.hpp).
#include <memory>

#include <fmt/format.h>

#include "analyses.hpp"
#include "corpus_patching_run.hpp"
#include "patching_report.hpp"

namespace attn_viz {
namespace {

class PatchingAnalysis final : public WholeModelAnalysis {
public:
    explicit PatchingAnalysis(PatchingOptions options) : options_(std::move(options)) {}

    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::patching); }

    std::string obstacle(const WholeModel& model, const std::vector<int>& ids) const override {
        if (std::string no_logits = logits_obstacle(model); !no_logits.empty()) return no_logits;
        if (options_.corrupted.size() == ids.size()) return "";
        return fmt::format(
            ": the corrupted input has {} tokens, the clean input {}; patching needs the same number "
            "of tokens",
            options_.corrupted.size(), ids.size());
    }

    std::string corpus_obstacle(const WholeModel& model) const override { return logits_obstacle(model); }

    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        const ModelDescription& c = ctx.model.description();
        const ModelRun corrupted = ctx.model.run(options_.corrupted, {.contributions = false});
        const PatchingReport patching =
            patch_heads(ctx.model, ctx.backend, *run, corrupted, parse_ablated_heads("all", c.n_layers, c.n_heads),
                        options_.metric, progress_callback(ctx.progress, "patched head"));
        return write_patching_outputs(ctx.out, patching, c.n_layers, c.n_heads,
                                      ctx.tokenizer.labels(options_.corrupted), ctx.report);
    }

    std::unique_ptr<CorpusPart> corpus_part(AnalysisContext& ctx, CorpusAccumulator& corpus) const override {
        const ModelDescription& c = ctx.model.description();
        corpus.keep_patching(CorpusPatching(c.n_layers, c.n_heads, options_.metric));
        auto corrupted = std::make_shared<CorpusPatchingRun>(options_.corrupted_corpus, options_.shard, options_.limits,
                                                             ctx.tokenizer);
        CorpusPatching& patching = *corpus.patching();
        return corpus_part_of(
            [&ctx, &patching, corrupted](const std::string& where, const ModelRun& run) {
                corrupted->add(patching, ctx.model, ctx.backend, run, where, ctx.timings);
            },
            [&patching, corrupted](int64_t corpus_sequences) { corrupted->finish(patching, corpus_sequences); });
    }

private:
    PatchingOptions options_;
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(PatchingOptions options) {
    return std::make_unique<PatchingAnalysis>(std::move(options));
}

}  // namespace attn_viz
