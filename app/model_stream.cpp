#include "model_stream.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "error.hpp"
#include "layer_cost.hpp"
#include "memory_budget.hpp"
#include "poisoned_heads.hpp"

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

bool streams_layers(bool asked, const std::string& whole_run, const RunBytes& bytes,
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

RunBytes model_run_bytes(const attn_viz::WholeModel& model, int64_t T) {
    const attn_viz::ModelDescription& c = model.description();
    const uint64_t layer_bytes = attn_viz::estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T);
    return {attn_viz::saturating_product(layer_bytes, static_cast<uint64_t>(c.n_layers)), layer_bytes,
            fmt::format("running one layer on {} tokens", T)};
}

void warn_poisoned_heads(const attn_viz::LayerResult& result, size_t layer, const std::string& where) {
    for (const std::string& head : attn_viz::poisoned_heads(result, static_cast<int64_t>(layer)))
        std::fprintf(stderr, "attn-viz: warning: %snon-finite values reach %s\n", where.c_str(), head.c_str());
}

StreamedForward::StreamedForward(attn_viz::Timings& timings, bool show, std::string what, int64_t total)
    : timings_(timings),
      progress_(show, std::move(what)),
      total_(total),
      forward_from_(std::chrono::steady_clock::now()) {}

void StreamedForward::stop_forward_clock() {
    timings_.add("forward", std::chrono::duration<double>(std::chrono::steady_clock::now() - forward_from_).count());
}

void StreamedForward::finish() {
    stop_forward_clock();
    progress_.finish();
}

attn_viz::ModelAnalysis stream_model_report(attn_viz::OutputDir& out, attn_viz::WholeModel& model,
                                            const attn_viz::EncodedText& input_ids, attn_viz::LayerStreamInput input,
                                            const attn_viz::ReportOptions& report, bool show_layers,
                                            attn_viz::Timings& timings, attn_viz::PictureNotes& notes) {
    using namespace attn_viz;
    model.keep_attention_weights(false);
    const int64_t n_layers = input.num_layers;
    LayerStream stream(out, std::move(input), report, timings);
    StreamedForward forward(timings, show_layers, "layer", n_layers);
    model.run_blocks(
        input_ids.ids,
        {.value_norms = report.map == PictureMap::norm, .logits = false, .token_types = input_ids.type_ids},
        [&](size_t l, LayerResult& result, Tensor&, const LayerWeights& weights) {
            forward.report([&] {
                warn_poisoned_heads(result, l, "");
                stream.add_layer(static_cast<int64_t>(l), result, weights);
            });
        });
    forward.finish();
    return stream.finish(notes);
}

}  // namespace attn_viz_cli
