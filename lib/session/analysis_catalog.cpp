#include "analysis_catalog.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

const std::vector<AnalysisTraits>& analysis_catalog() {
    using enum AnalysisKind;
    using enum AnalysisInput;
    static constexpr std::string_view corrupted_pair =
        "the corrupted run would need its own source and target pair of the same lengths; not built for "
        "encoder-decoders";
    static const std::vector<AnalysisTraits> rows = {
        // kind, name, key, input, reads logits, over a corpus, beside a layer stream, why not on an encoder-decoder
        {ablation, "ablation", "ablation", whole_run, true, true, false, ""},
        {logit_attribution, "logit attribution", "logit_attribution", whole_run, true, true, false,
         "encoder heads reach the logits only through cross attention, and BART's post-norm blocks rescale the "
         "residual stream after every sublayer; not built for encoder-decoders"},
        {patching, "patching", "patching", whole_run, true, true, false, corrupted_pair},
        {composition, "composition", "composition", weights, false, true, true,
         "it composes heads within one residual stream, while a cross head's keys and values read the encoder's; not "
         "built for encoder-decoders"},
        {rollout, "rollout", "rollout", each_layer, false, false, false,
         "rollout composes one stack's maps through its residual stream; a decoder's also flows through cross "
         "attention"},
        {flow, "flow", "flow", each_layer, false, false, false,
         "flow composes one stack's maps through its residual stream; a decoder's also flows through cross attention"},
        {qk_attribution, "qk attribution", "qk_attribution", whole_run, false, false, false,
         "a cross head's keys read the encoder's stream and a decoder head's queries the decoder's; not built for "
         "encoder-decoders"},
    };
    return rows;
}

const AnalysisTraits& analysis_traits(AnalysisKind kind) {
    for (const AnalysisTraits& row : analysis_catalog())
        if (row.kind == kind) return row;
    throw Error(ErrorKind::internal, "analysis_traits: an analysis without a catalog row");
}

const AnalysisTraits& analysis_traits_named(const std::string& text) {
    std::string keys;
    for (const AnalysisTraits& row : analysis_catalog()) {
        if (text == row.key || text == row.name) return row;
        keys += fmt::format("{}{}", keys.empty() ? "" : ", ", row.key);
    }
    throw Error(ErrorKind::usage, fmt::format("no analysis is called '{}' (the analyses: {})", text, keys));
}

std::string logits_obstacle(const WholeModel& model) {
    if (model.has_logits()) return "";
    return fmt::format(
        " needs a model that predicts next tokens, but this is a {} model: an encoder, with no "
        "next-token logits",
        model.description().architecture);
}

StepCallback progress_callback(const ProgressFactory& progress, const std::string& what) {
    return progress ? progress(what) : StepCallback();
}

namespace {

class CallbackCorpusPart final : public CorpusPart {
public:
    CallbackCorpusPart(std::function<void(const std::string&, const ModelRun&)> add,
                       std::function<void(int64_t)> finish)
        : add_(std::move(add)), finish_(std::move(finish)) {}
    void add(const std::string& where, const ModelRun& run) override { add_(where, run); }
    void finish(int64_t corpus_sequences) override {
        if (finish_) finish_(corpus_sequences);
    }

private:
    std::function<void(const std::string&, const ModelRun&)> add_;
    std::function<void(int64_t)> finish_;
};

}  // namespace

std::unique_ptr<CorpusPart> corpus_part_of(std::function<void(const std::string& where, const ModelRun& run)> add,
                                           std::function<void(int64_t corpus_sequences)> finish) {
    return std::make_unique<CallbackCorpusPart>(std::move(add), std::move(finish));
}

std::string WholeModelAnalysis::obstacle(const WholeModel&, const std::vector<int>&) const { return ""; }

std::string WholeModelAnalysis::corpus_obstacle(const WholeModel&) const { return ""; }

std::unique_ptr<CorpusPart> WholeModelAnalysis::corpus_part(AnalysisContext&, CorpusAccumulator&) const {
    throw Error(ErrorKind::internal, fmt::format("{} has no corpus form", traits().name));
}

void AnalysisSet::add(std::unique_ptr<WholeModelAnalysis> analysis) {
    const auto order = [](const WholeModelAnalysis& a) {
        const std::vector<AnalysisTraits>& rows = analysis_catalog();
        for (size_t i = 0; i < rows.size(); ++i)
            if (rows[i].kind == a.traits().kind) return i;
        return rows.size();
    };
    if (asks(analysis->traits().kind))
        throw Error(ErrorKind::internal, fmt::format("{} asked for twice", analysis->traits().name));
    auto at = analyses_.begin();
    while (at != analyses_.end() && order(**at) < order(*analysis)) ++at;
    analyses_.insert(at, std::move(analysis));
}

const WholeModelAnalysis* AnalysisSet::find(AnalysisKind kind) const {
    for (const auto& analysis : analyses_)
        if (analysis->traits().kind == kind) return analysis.get();
    return nullptr;
}

bool AnalysisSet::reads_logits() const {
    return !kinds_where([](const AnalysisTraits& t) { return t.reads_logits; }).empty();
}

std::vector<AnalysisKind> AnalysisSet::kinds_where(const std::function<bool(const AnalysisTraits&)>& keep) const {
    std::vector<AnalysisKind> kinds;
    for (const auto& analysis : analyses_)
        if (keep(analysis->traits())) kinds.push_back(analysis->traits().kind);
    return kinds;
}

nlohmann::json AnalysisSet::run_weight_analyses(AnalysisContext& ctx) const {
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& analysis : analyses_)
        if (analysis->traits().input == AnalysisInput::weights) {
            Timings::Scope t(ctx.timings, std::string(analysis->traits().name));
            stats.update(analysis->run(ctx, nullptr));
        }
    return stats;
}

nlohmann::json AnalysisSet::run_all(AnalysisContext& ctx, const ModelRun& run) const {
    nlohmann::json stats = nlohmann::json::object();
    for (const auto& analysis : analyses_) {
        const bool of_weights = analysis->traits().input == AnalysisInput::weights;
        Timings::Scope t(ctx.timings, std::string(analysis->traits().name));
        stats.update(analysis->run(ctx, of_weights ? nullptr : &run));
    }
    return stats;
}

}  // namespace attn_viz
