// The rollout and flow rows: attention rollout and attention flow across the layers of one run
// (attention_rollout.hpp), from every layer's maps at once.
#include "analyses.hpp"
#include "rollout_report.hpp"

namespace attn_viz {
namespace {

// The run's layers, as the writers take them.
std::vector<const LayerResult*> run_layers(const ModelRun& run) {
    std::vector<const LayerResult*> layers;
    for (const LayerResult& layer : run.layers) layers.push_back(&layer);
    return layers;
}

class RolloutAnalysis final : public WholeModelAnalysis {
public:
    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::rollout); }
    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        return write_rollout_outputs(ctx.out, run_layers(*run), ctx.tokenizer.labels(run->tokens), ctx.report);
    }
};

class FlowAnalysis final : public WholeModelAnalysis {
public:
    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::flow); }
    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        return write_flow_outputs(ctx.out, run_layers(*run), ctx.tokenizer.labels(run->tokens), ctx.report,
                                  progress_callback(ctx.progress, "flow row"));
    }
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(RolloutOptions) { return std::make_unique<RolloutAnalysis>(); }

std::unique_ptr<WholeModelAnalysis> make_analysis(FlowOptions) { return std::make_unique<FlowAnalysis>(); }

}  // namespace attn_viz
