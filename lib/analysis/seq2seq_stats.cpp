#include "seq2seq_stats.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "stats_report.hpp"

namespace attn_viz {

std::vector<CrossAlignment> stack_alignment(const std::vector<const LayerResult*>& cross) {
    std::vector<CrossAlignment> heads;
    for (const LayerResult* layer : cross) {
        const std::vector<CrossAlignment> layer_heads = cross_alignment(layer->attention);
        heads.insert(heads.end(), layer_heads.begin(), layer_heads.end());
    }
    return heads;
}

nlohmann::json seq2seq_stats_json(const Seq2SeqAnalysis& a) {
    if (a.stacks.size() != seq2seq_stack_names.size() || a.alignment.size() != a.stacks.back().second.heads.size() ||
        (!a.alignment_std.empty() && a.alignment_std.size() != a.alignment.size()))
        throw Error(ErrorKind::internal, "seq2seq_stats_json: the stacks and the cross heads' alignment do not match");
    nlohmann::json stats = {{"format", stats_format},
                            {"num_sequences", a.stacks.front().second.num_sequences},
                            {"heads", nlohmann::json::array()},
                            {"stacks", nlohmann::json::object()}};
    for (const auto& [name, analysis] : a.stacks) {
        const nlohmann::json stack_stats = stats_json(analysis);
        const bool cross = name == seq2seq_stack_names.back();
        for (size_t n = 0; n < stack_stats["heads"].size(); ++n) {
            nlohmann::json head = stack_stats["heads"][n];
            head["stack"] = name;
            if (cross) head["alignment"] = cross_alignment_json(a.alignment[n]);
            if (cross && !a.alignment_std.empty()) head["std"]["alignment"] = cross_alignment_json(a.alignment_std[n]);
            stats["heads"].push_back(std::move(head));
        }
        stats["stacks"][name] = {{"num_layers", analysis.num_layers},   {"num_heads", analysis.num_heads},
                                 {"num_queries", analysis.num_queries}, {"num_keys", analysis.num_keys},
                                 {"causal", analysis.causal},           {"folder", fmt::format("{}/", name)}};
    }
    return stats;
}

}  // namespace attn_viz
