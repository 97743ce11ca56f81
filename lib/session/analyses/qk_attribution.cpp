// The QK attribution row: each chosen head's pre-softmax score from a query to a key split into
// the residual stream's components on the query side times those on the key side
// (qk_attribution.hpp), with its CSV, pictures, stats.json section and findings.
#include "qk_attribution.hpp"

#include <fmt/format.h>

#include "analyses.hpp"
#include "qk_attribution_report.hpp"

namespace attn_viz {
namespace {

class QkAttributionAnalysis final : public WholeModelAnalysis {
public:
    explicit QkAttributionAnalysis(QkAttributionOptions options) : options_(std::move(options)) {}

    const AnalysisTraits& traits() const override { return analysis_traits(AnalysisKind::qk_attribution); }

    std::string obstacle(const WholeModel& model, const std::vector<int>& ids) const override {
        if (const std::string obstacle = qk_attribution_obstacle(model.weights()); !obstacle.empty())
            return fmt::format(": this model's attention scores do not split into per-component terms: {}", obstacle);
        const int64_t T = static_cast<int64_t>(ids.size());
        for (const auto& [what, position] :
             {std::pair{"query", options_.query_position}, std::pair{"key", options_.key_position}})
            if (position && (*position < 0 || *position >= T))
                return fmt::format(": {} position {} is outside the input's {} tokens (0..{})", what, *position, T,
                                   T - 1);
        return "";
    }

    nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const override {
        std::vector<QkAttribution> entries;
        for (const AblatedHead& head : options_.heads)
            entries.push_back(
                attribute_qk(ctx.model, *run, head.layer, head.head, options_.query_position, options_.key_position));
        return write_qk_attribution_outputs(ctx.out, entries, ctx.tokenizer.labels(run->tokens), ctx.report);
    }

private:
    QkAttributionOptions options_;
};

}  // namespace

std::unique_ptr<WholeModelAnalysis> make_analysis(QkAttributionOptions options) {
    return std::make_unique<QkAttributionAnalysis>(std::move(options));
}

}  // namespace attn_viz
