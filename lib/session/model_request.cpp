#include "model_request.hpp"

#include <fmt/format.h>

#include "layer_cost.hpp"
#include "memory_budget.hpp"
#include "poisoned_heads.hpp"
#include "weight_similarity.hpp"

namespace attn_viz {

void warn_poisoned_heads(const SessionHooks& hooks, const LayerResult& result, size_t layer, const std::string& where) {
    if (!hooks.warning) return;
    for (const std::string& head : poisoned_heads(result, static_cast<int64_t>(layer)))
        hooks.warning(fmt::format("{}non-finite values reach {}", where, head));
}

RunBytes model_run_bytes(const WholeModel& model, int64_t T) {
    const ModelDescription& c = model.description();
    const uint64_t layer_bytes = estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T);
    return {saturating_product(layer_bytes, static_cast<uint64_t>(c.n_layers)), layer_bytes,
            fmt::format("running one layer on {} tokens", T)};
}

StreamedForward::StreamedForward(Timings& timings, StepCallback progress, int64_t total)
    : timings_(timings),
      progress_(std::move(progress)),
      total_(total),
      forward_from_(std::chrono::steady_clock::now()) {}

void StreamedForward::stop_forward_clock() {
    timings_.add("forward", std::chrono::duration<double>(std::chrono::steady_clock::now() - forward_from_).count());
}

void StreamedForward::finish() {
    stop_forward_clock();
    progress_ = {};
}

namespace {

// What every step of one run works with: the session, the request, the staged outputs, the stage times.
struct RunContext {
    ModelSession& session;
    const ModelRequest& request;
    OutputDir& out;
    Timings& timings;

    WholeModel& model() const { return session.model(); }
    AnalysisContext analysis_context() const {
        return {model(), session.backend(), session.tokenizer(), request.report, out, timings, request.hooks.progress};
    }
    nlohmann::json input_stats() const {
        nlohmann::json stats = session.input_stats(request.input, request.ids);
        stats["provenance"] = request.provenance;
        return stats;
    }
};

// The forward pass over the ids with what the request asks beside the maps; warns of the heads
// of each layer NaN/Inf values reach.
ModelRun forward(const RunContext& c, bool logits) {
    Timings::Scope t(c.timings, "forward");
    const ModelRequest& r = c.request;
    const ForwardRequest forward_request{
        .value_norms = r.report.map == PictureMap::norm, .logits = logits, .token_types = r.ids.token_types};
    ModelRun run = c.model().run(r.ids.ids, forward_request, progress_callback(r.hooks.progress, "layer"));
    for (size_t l = 0; l < run.layers.size(); ++l) warn_poisoned_heads(r.hooks, run.layers[l], l, "");
    return run;
}

// Every layer's pictures and statistics staged, with the stats.json entries of the whole-model
// analyses (`analyses`).
ModelAnalysis write_model_report(const RunContext& c, const ModelRun& run, const nlohmann::json& analyses,
                                 PictureNotes& notes) {
    const ModelRequest& r = c.request;
    const ModelTokenizer& tokenizer = c.session.tokenizer();
    ReportInput report;
    report.backend = &c.session.backend();
    report.extra_stats = analyses;
    for (const LayerResult& layer : run.layers) report.layers.push_back(&layer);
    report.weights = c.model().attention_weights();
    report.query_tokens = report.key_tokens = tokenizer.labels(r.ids.ids);
    report.layer_folders = true;
    report.token_ids.assign(r.ids.ids.begin(), r.ids.ids.end());
    report.token_roles = token_roles(tokenizer, r.ids.ids);
    report.extra_stats.update(c.input_stats());
    report.model_description = c.session.description();
    report.input_text = r.input_text;
    WeightSimilarities weight_similarity;
    {
        Timings::Scope t(c.timings, "weight similarity");
        weight_similarity =
            weight_similarities(report.weights, false, c.session.backend(), output_grams_of(report.layers));
    }
    report.weight_similarity = &weight_similarity;
    return write_report(c.out, report, r.report, c.timings, &notes);
}

// The forward pass with every block's report written as soon as the block is done (LayerStream);
// the model keeps no block's attention weights.
ModelAnalysis stream_model_report(const RunContext& c, LayerStreamInput input, PictureNotes& notes) {
    const ModelRequest& r = c.request;
    WholeModel& model = c.model();
    model.keep_attention_weights(false);
    const int64_t n_layers = input.num_layers;
    LayerStream stream(c.out, std::move(input), r.report, c.timings);
    StreamedForward forward(c.timings, progress_callback(r.hooks.progress, "layer"), n_layers);
    model.run_blocks(
        r.ids.ids, {.value_norms = r.report.map == PictureMap::norm, .logits = false, .token_types = r.ids.token_types},
        [&](size_t l, LayerResult& result, Tensor&, const LayerWeights& weights) {
            forward.report([&] {
                warn_poisoned_heads(r.hooks, result, l, "");
                stream.add_layer(static_cast<int64_t>(l), result, weights);
            });
        });
    forward.finish();
    return stream.finish(notes);
}

}  // namespace

ModelOutcome run_model_request(ModelSession& session, const ModelRequest& request, OutputDir& out, Timings& timings) {
    const RunContext c{session, request, out, timings};
    const ModelTokenizer& tokenizer = session.tokenizer();
    const AnalysisSet no_analyses;
    const AnalysisSet& analyses = request.analyses ? *request.analyses : no_analyses;
    ModelOutcome outcome;
    AnalysisContext analysis = c.analysis_context();
    if (request.stream_layers) {
        // The weights' analyses first: they need every block's attention weights, not its maps.
        outcome.analyses = analyses.run_weight_analyses(analysis);
        const WholeModel& model = session.model();
        LayerStreamInput stream{model.description().n_layers, model.description().n_heads,
                                tokenizer.labels(request.ids.ids),
                                std::vector<int64_t>(request.ids.ids.begin(), request.ids.ids.end()), c.input_stats()};
        stream.extra_stats.update(outcome.analyses);
        stream.backend = &session.backend();
        stream.token_roles = token_roles(tokenizer, request.ids.ids);
        outcome.analysis = stream_model_report(c, std::move(stream), outcome.notes);
    } else {
        const ModelRun run = forward(c, analyses.reads_logits());
        outcome.analyses = analyses.run_all(analysis, run);
        outcome.analysis = write_model_report(c, run, outcome.analyses, outcome.notes);
    }
    if (request.generate > 0) {
        Timings::Scope t(timings, "generate");
        outcome.generation = generate(session.model(), tokenizer, request.ids.ids, request.generate,
                                      progress_callback(request.hooks.progress, "token"));
    }
    return outcome;
}

ModelCorpusRequest::ModelCorpusRequest(ModelSession& session, Timings& timings) : session_(session), timings_(timings) {
    Timings::Scope t(timings, "weight similarity");
    weights_ = corpus_weights(session.model(), session.backend());
}

nlohmann::json ModelCorpusRequest::run(const AnalysisSet& analyses, const ReportOptions& report,
                                       const LoadLimits& limits, CorpusDocuments& documents, CorpusAccumulator& corpus,
                                       const SessionHooks& hooks, const std::function<void(int64_t)>& on_sequence,
                                       OutputDir& out) {
    WholeModel& model = session_.model();
    AnalysisContext analysis{model, session_.backend(), session_.tokenizer(), report, out, timings_, hooks.progress};
    const nlohmann::json entries = analyses.run_weight_analyses(analysis);
    std::vector<std::unique_ptr<CorpusPart>> parts;
    for (const auto& a : analyses.all())
        if (a->traits().input == AnalysisInput::whole_run) parts.push_back(a->corpus_part(analysis, corpus));
    const AnalysisOptions options = analysis_options(report, session_.backend(), &weights_.similarity);
    ModelCorpusHooks corpus_hooks;
    corpus_hooks.on_layers = [&hooks](const std::string& where, const std::vector<LayerResult>& layers) {
        const std::string prefix = fmt::format("{}: ", where);
        for (size_t l = 0; l < layers.size(); ++l) warn_poisoned_heads(hooks, layers[l], l, prefix);
    };
    if (!parts.empty())
        corpus_hooks.on_run = [&](const std::string& where, const ModelRun& run) {
            for (const auto& part : parts) part->add(where, run);
        };
    corpus_hooks.on_sequence = on_sequence;
    passes_ = add_model_corpus(documents, model, session_.tokenizer(), options, limits, corpus, corpus_hooks, timings_);
    for (const auto& part : parts) part->finish(documents.corpus_sequences());
    return entries;
}

}  // namespace attn_viz
