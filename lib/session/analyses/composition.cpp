// The composition row: Q-, K- and V-composition scores of every pair of heads in successive
// layers, from the weights alone (composition_scores.hpp), so also beside a layer stream and once
// for a corpus.
#include <fmt/format.h>

#include "analyses.hpp"
#include "composition_report.hpp"
#include "composition_scores.hpp"

namespace attn_viz {
namespace {

class CompositionAnalysis final : public WholeModelAnalysis {
public:
    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::composition); }

    std::string obstacle(const WholeModel& model, const std::vector<int>&) const override {
        const std::string obstacle = composition_obstacle(model.weights(), model.attention_weights());
        return obstacle.empty() ? ""
                                : fmt::format(": composition scores do not describe this model's heads: {}", obstacle);
    }

    std::string corpus_obstacle(const WholeModel& model) const override { return obstacle(model, {}); }

    nlohmann::json run(AnalysisContext& ctx, const ModelRun*) const override {
        const NormFolding folding = attention_norm_folding(ctx.model.weights());
        return write_composition_outputs(ctx.out,
                                         composition_scores(ctx.model.attention_weights(), folding, ctx.backend),
                                         norm_folding_description(folding), ctx.report);
    }
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(CompositionOptions) {
    return std::make_unique<CompositionAnalysis>();
}

}  // namespace attn_viz
