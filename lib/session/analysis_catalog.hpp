// The whole-model analyses, one row each: what an analysis reads, whether it needs the model's
// next-token logits, runs over a corpus, beside a layer-by-layer report or on an
// encoder-decoder (and why not). Every front end (the CLI, Python) asks this table instead of listing the
// analyses by hand; a new analysis is a row here, its class in analyses/ and its writer in
// lib/report.
//
// The library never names a command-line option: an analysis is named by `name` ("logit
// attribution") in messages and by `key` ("logit_attribution") in Python, and a refusal
// (`WholeModelAnalysis::obstacle`) is the text that follows whatever the front end calls it
// (" needs a model that predicts next tokens, ..." or ": this model's logits do not split ...").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_stats.hpp"
#include "model_tokenizer.hpp"
#include "onednn_backend.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz {

enum class AnalysisKind { ablation, logit_attribution, patching, composition, rollout, flow, qk_attribution };

// What an analysis reads: the weights alone (composition), each layer's maps (rollout, flow: all
// of them at once), or the whole run: residual streams and logits (ablation, attribution, patching).
enum class AnalysisInput { weights, each_layer, whole_run };

struct AnalysisTraits {
    AnalysisKind kind;
    std::string_view name;  // in messages: "logit attribution"
    std::string_view key;   // in Python and stats.json's summaries: "logit_attribution"
    AnalysisInput input;
    bool reads_logits = false;       // the forward pass computes the logits [T, V] for it
    bool over_corpus = false;        // has a corpus form (corpus_part), merged through partials
    bool with_layer_stream = false;  // runs when the layers are reported one at a time
    // Why it does not run on an encoder-decoder (bart, t5), or "" when it does.
    std::string_view not_on_encoder_decoder;
};

// The rows, in the order analyses run and are listed.
const std::vector<AnalysisTraits>& analysis_catalog();
const AnalysisTraits& analysis_traits(AnalysisKind kind);
// The row whose key or name is `text`; Error(usage) listing the keys otherwise.
const AnalysisTraits& analysis_traits_named(const std::string& text);

// The refusal of an analysis (or generation) on a model without next-token logits (an encoder
// such as BERT), naming its type: " needs a model that predicts next tokens, but this is a bert
// model: ...", or "" when the model has logits.
std::string logits_obstacle(const WholeModel& model);

// How a long analysis tells its progress: `progress(what)` ("ablated head", "flow row") gives the
// callback told (done, total) as it goes; the callback is dropped when the analysis is done. An
// empty factory: no progress.
using ProgressFactory = std::function<StepCallback(const std::string& what)>;
StepCallback progress_callback(const ProgressFactory& progress, const std::string& what);

// What an analysis runs on and writes into: the model, the backend every product runs on, the
// tokenizer, the report's options (colormap, pictures or not), the staged outputs, the stage times.
struct AnalysisContext {
    WholeModel& model;
    OnednnBackend& backend;
    const ModelTokenizer& tokenizer;
    const ReportOptions& report;
    OutputDir& out;
    Timings& timings;
    ProgressFactory progress;
};

// One sequence's part of a corpus analysis: told every sequence's run (`where`: "c.jsonl:3"),
// then the number of sequences of the whole corpus once they are all read.
class CorpusPart {
public:
    virtual ~CorpusPart() = default;
    virtual void add(const std::string& where, const ModelRun& run) = 0;
    virtual void finish(int64_t corpus_sequences) { (void)corpus_sequences; }
};

// The corpus part that calls `add` for each sequence and `finish` (if any) at the end.
std::unique_ptr<CorpusPart> corpus_part_of(std::function<void(const std::string& where, const ModelRun& run)> add,
                                           std::function<void(int64_t corpus_sequences)> finish = {});

// One analysis with its options, as a request holds it.
class WholeModelAnalysis {
public:
    virtual ~WholeModelAnalysis() = default;
    virtual const AnalysisTraits& traits() const = 0;
    // Why it cannot run on `model` over `ids` (the text after its name), or "" when it can.
    virtual std::string obstacle(const WholeModel& model, const std::vector<int>& ids) const;
    // Why it cannot run over a corpus of `model`, or "" (only asked of analyses with over_corpus).
    virtual std::string corpus_obstacle(const WholeModel& model) const;
    // One input: computes, writes its files into ctx.out and returns its stats.json entries. `run`
    // is the clean run (with logits when reads_logits), or null for an analysis of the weights.
    virtual nlohmann::json run(AnalysisContext& ctx, const ModelRun* run) const = 0;
    // Over a corpus: keeps its running part in `corpus` (saved, merged and written with the rest)
    // and returns what adds each sequence to it (an analysis without a corpus form is refused
    // before: Error(internal) here).
    virtual std::unique_ptr<CorpusPart> corpus_part(AnalysisContext& ctx, CorpusAccumulator& corpus) const;
};

// The analyses a request asks for, in catalog order (add keeps it).
class AnalysisSet {
public:
    void add(std::unique_ptr<WholeModelAnalysis> analysis);
    bool empty() const { return analyses_.empty(); }
    bool asks(AnalysisKind kind) const { return find(kind) != nullptr; }
    const WholeModelAnalysis* find(AnalysisKind kind) const;
    const std::vector<std::unique_ptr<WholeModelAnalysis>>& all() const { return analyses_; }
    // Whether any reads the logits (the forward pass then computes them).
    bool reads_logits() const;
    // The kinds asked whose traits fail `keep` (e.g. that cannot run beside a layer stream).
    std::vector<AnalysisKind> kinds_where(const std::function<bool(const AnalysisTraits&)>& keep) const;

    // The analyses of the weights alone, written without a forward pass (so a streamed run and a
    // corpus run write them as one run does); their stats.json entries ({} for none).
    nlohmann::json run_weight_analyses(AnalysisContext& ctx) const;
    // Every analysis on the clean run `run`, in catalog order; their stats.json entries.
    nlohmann::json run_all(AnalysisContext& ctx, const ModelRun& run) const;

private:
    std::vector<std::unique_ptr<WholeModelAnalysis>> analyses_;
};

}  // namespace attn_viz
