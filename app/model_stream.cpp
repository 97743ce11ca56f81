#include "model_stream.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "memory_budget.hpp"

namespace attn_viz_cli {

std::string whole_run_options(const attn_viz::ReportOptions& report, int generate,
                              const ModelAnalysisOptions& analyses) {
    std::string names;
    const auto add = [&](bool given, const char* name) {
        if (given) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
    };
    add(report.html, "--html");
    add(generate > 0, "--generate");
    const std::vector<attn_viz::AnalysisKind> kinds = asked_analyses(analyses);
    std::vector<attn_viz::AnalysisKind> whole_run;
    for (attn_viz::AnalysisKind kind : kinds)
        if (!attn_viz::analysis_traits(kind).with_layer_stream) whole_run.push_back(kind);
    add(!whole_run.empty(), analysis_flags(whole_run, analyses).c_str());
    return names;
}

bool streams_layers(bool asked, const std::string& whole_run, const attn_viz::RunBytes& bytes,
                    const attn_viz::LoadLimits& limits) {
    if (asked && !whole_run.empty())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("--stream-layers writes each layer's report before the next layer runs: {} "
                                          "need every layer at once",
                                          whole_run));
    if (!asked && (bytes.whole_run <= limits.memory_budget || !whole_run.empty())) return false;
    attn_viz::check_memory(bytes.largest_layer, limits.memory_budget, bytes.largest_layer_what);
    return true;
}

}  // namespace attn_viz_cli
