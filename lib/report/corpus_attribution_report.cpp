#include "corpus_attribution_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ablation_report.hpp"
#include "file_write.hpp"
#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "patching_report.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// One head's moments, for the ranking.
struct HeadMoments {
    int64_t layer = 0, head = 0;
    double mean = 0, std = 0;
};

// Every head, most toward the target on average first (then layer, head).
std::vector<HeadMoments> ranked_heads(const CorpusAttribution& a) {
    std::vector<HeadMoments> heads;
    for (int64_t l = 0; l < a.layers(); ++l)
        for (int64_t h = 0; h < a.heads(); ++h) {
            const RunningMoments& m = a.moments(AttributionPart::head, l, h);
            heads.push_back({l, h, m.mean_or_nan(), m.population_std()});
        }
    std::stable_sort(heads.begin(), heads.end(),
                     [](const HeadMoments& x, const HeadMoments& y) { return x.mean > y.mean; });
    return heads;
}

// The sum over the layers of one layer part's means.
double summed_means(const CorpusAttribution& a, AttributionPart part) {
    double sum = 0;
    for (int64_t l = 0; l < a.layers(); ++l) sum += a.moments(part, l).mean_or_nan();
    return sum;
}

}  // namespace

std::vector<std::string> corpus_attribution_findings(const CorpusAttribution& a) {
    const std::vector<HeadMoments> order = ranked_heads(a);
    if (order.empty() || a.positions() == 0) return {};
    const HeadMoments &top = order.front(), &bottom = order.back();
    return {fmt::format(
        "direct logit attribution over {} positions: {} writes most toward the {} ({} on average, std {}), {} most "
        "against it ({}); of the mean logit {}, the heads give {}, the feed-forwards {}, the embeddings {}",
        a.positions(), head_name(top.layer, top.head), a.target(), signed_short_number(top.mean),
        short_number(top.std, "{:.3g}"), head_name(bottom.layer, bottom.head), signed_short_number(bottom.mean),
        short_number(a.moments(AttributionPart::logit).mean, "{:.3g}"),
        signed_short_number(summed_means(a, AttributionPart::layer_heads)),
        signed_short_number(summed_means(a, AttributionPart::mlp)),
        signed_short_number(a.moments(AttributionPart::embedding).mean))};
}

nlohmann::json write_corpus_attribution_outputs(OutputDir& out, const CorpusAttribution& a, const ReportOptions& o) {
    std::string csv = "component,layer,head,mean,std,count\n";
    const auto row = [&](const char* component, const std::string& layer, const std::string& head,
                         const RunningMoments& m) {
        csv += fmt::format("{},{},{},{},{},{}\n", component, layer, head, csv_number(m.mean_or_nan()),
                           csv_number(m.population_std()), m.count);
    };
    row("embedding", "", "", a.moments(AttributionPart::embedding));
    nlohmann::json layers = nlohmann::json::array();
    for (int64_t l = 0; l < a.layers(); ++l) {
        const std::string layer = fmt::to_string(l);
        for (int64_t h = 0; h < a.heads(); ++h)
            row("head", layer, fmt::to_string(h), a.moments(AttributionPart::head, l, h));
        row("heads", layer, "", a.moments(AttributionPart::layer_heads, l));
        row("attention_bias", layer, "", a.moments(AttributionPart::attention_bias, l));
        row("mlp", layer, "", a.moments(AttributionPart::mlp, l));
        layers.push_back({{"layer", l},
                          {"heads", mean_and_std_json(a.moments(AttributionPart::layer_heads, l))},
                          {"attention_bias", mean_and_std_json(a.moments(AttributionPart::attention_bias, l))},
                          {"mlp", mean_and_std_json(a.moments(AttributionPart::mlp, l))}});
    }
    row("norm_bias", "", "", a.moments(AttributionPart::norm_bias));
    row("logit", "", "", a.moments(AttributionPart::logit));
    write_file_bytes(out.file("logit_attribution.csv"), csv);

    const std::vector<HeadMoments> order = ranked_heads(a);
    nlohmann::json ranking = nlohmann::json::array();
    for (size_t r = 0; r < order.size(); ++r)
        ranking.push_back({{"rank", r + 1},
                           {"layer", order[r].layer},
                           {"head", order[r].head},
                           {"mean", json_number(order[r].mean)},
                           {"std", json_number(order[r].std)}});
    if (o.pictures) {
        std::vector<float> means;
        for (int64_t l = 0; l < a.layers(); ++l)
            for (int64_t h = 0; h < a.heads(); ++h)
                means.push_back(static_cast<float>(a.moments(AttributionPart::head, l, h).mean));
        write_layer_head_png(out.file("logit_attribution_heads.png"), means, a.layers(), a.heads(),
                             fmt::format("Direct logit attribution to the {}, mean over {} positions of the corpus",
                                         a.target(), a.positions()),
                             "logit contribution", o, true);
    }
    return {{"logit_attribution",
             {{"target", a.target()},
              {"positions", a.positions()},
              {"logit", mean_and_std_json(a.moments(AttributionPart::logit))},
              {"embedding", mean_and_std_json(a.moments(AttributionPart::embedding))},
              {"norm_bias", mean_and_std_json(a.moments(AttributionPart::norm_bias))},
              {"layers", layers},
              {"heads", ranking},
              {"findings", corpus_attribution_findings(a)}}}};
}

nlohmann::json write_corpus_analysis_outputs(OutputDir& out, const CorpusAccumulator& corpus,
                                             const ReportOptions& options) {
    nlohmann::json stats = nlohmann::json::object();
    if (corpus.attribution()) stats.update(write_corpus_attribution_outputs(out, *corpus.attribution(), options));
    if (corpus.patching()) stats.update(write_corpus_patching_outputs(out, *corpus.patching(), options));
    if (corpus.ablation()) stats.update(write_corpus_ablation_outputs(out, *corpus.ablation(), options));
    return stats;
}

}  // namespace attn_viz
