// The ablation row: each listed head removed (zeroed or replaced by its mean) and the model rerun
// from its layer on; a decoder's next-token loss and KL, an encoder's final hidden states (and
// masked-LM loss); over a corpus, a decoder's measures' moments (corpus_ablation.hpp).
#include "ablation_report.hpp"
#include "analyses.hpp"
#include "corpus_ablation.hpp"

namespace attn_viz {
namespace {

class HeadAblationAnalysis final : public WholeModelAnalysis {
public:
    explicit HeadAblationAnalysis(AblationOptions options) : options_(std::move(options)) {}

    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::ablation); }

    // An encoder's ablation (final hidden states, masked-LM loss) runs on one input; its corpus
    // form, moments of those measures, is not written yet.
    std::string corpus_obstacle(const WholeModel& model) const override { return logits_obstacle(model); }

    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        const ModelDescription& c = ctx.model.description();
        const StepCallback on_head = progress_callback(ctx.progress, "ablated head");
        if (ctx.model.has_logits())
            return write_ablation_outputs(
                ctx.out, ablate_heads(ctx.model, ctx.backend, *run, options_.heads, options_.mode, on_head), c.n_layers,
                c.n_heads, ctx.report);
        // An encoder: the change of its final hidden states.
        return write_encoder_ablation_outputs(
            ctx.out, ablate_encoder_heads(ctx.model, ctx.backend, *run, options_.heads, options_.mode, on_head),
            c.n_layers, c.n_heads, ctx.report);
    }

    std::unique_ptr<CorpusPart> corpus_part(AnalysisContext& ctx, CorpusAccumulator& corpus) const override {
        const ModelDescription& c = ctx.model.description();
        corpus.keep_ablation(CorpusAblation(c.n_layers, c.n_heads, options_.mode, options_.heads));
        return corpus_part_of([&ctx, &ablation = *corpus.ablation()](const std::string&, const ModelRun& run) {
            Timings::Scope t(ctx.timings, "ablation");
            ablation.add(ablate_heads(ctx.model, ctx.backend, run, ablation.ablated(), ablation.mode()));
        });
    }

private:
    AblationOptions options_;
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(AblationOptions options) {
    return std::make_unique<HeadAblationAnalysis>(std::move(options));
}

}  // namespace attn_viz
