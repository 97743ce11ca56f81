// One input through a decoder or encoder of a ModelSession, as every front end runs it: the
// forward pass (every layer kept, or with `stream_layers` each layer's report written as soon as
// the layer is done and released), the whole-model analyses of the request (analysis_catalog.hpp),
// every layer's pictures and statistics staged in the output directory, and the greedy
// continuation. The front end parses its options into a ModelRequest and prints the ModelOutcome.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis_catalog.hpp"
#include "generation.hpp"
#include "head_analysis.hpp"
#include "layer_stream.hpp"
#include "model_corpus_run.hpp"
#include "model_session.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"

namespace attn_viz {

// How a run tells its front end what it does: progress of its long steps ("layer", "token", an
// analysis's), and warnings ("non-finite values reach L3H2"), one line each.
struct SessionHooks {
    ProgressFactory progress;
    std::function<void(const std::string& line)> warning;
};

// What one run of a decoder or encoder does, fixed before it starts.
struct ModelRequest {
    ModelInput input;                       // as given (stats.json records how the input was made)
    ModelInputIds ids;                      // as encoded (ModelSession::encode) and checked
    const AnalysisSet* analyses = nullptr;  // the whole-model analyses to run, or none
    ReportOptions report;                   // the pictures, statistics and dumps (with the heads drawn)
    bool stream_layers = false;             // each layer's report written as soon as it is done
    int generate = 0;                       // the greedy continuation's tokens (0: none)
    std::string input_text;                 // report.html's "Input"
    nlohmann::json provenance;              // stats.json's "provenance"
    SessionHooks hooks;
};

// What the run made beside its staged files: the heads' analysis, the analyses' stats.json
// entries, the pictures' notes, and the continuation when one was asked.
struct ModelOutcome {
    ModelAnalysis analysis;
    nlohmann::json analyses = nlohmann::json::object();
    PictureNotes notes;
    std::optional<Generation> generation;
};

// The run of `request` on `session`'s model (loaded, not an encoder-decoder), its files staged in `out`.
ModelOutcome run_model_request(ModelSession& session, const ModelRequest& request, OutputDir& out, Timings& timings);

// Corpus mode over `session`'s model (loaded, not an encoder-decoder): one pass over the blocks for
// the weights' fingerprint and similarities (a streamed model decodes each block once for both),
// then every sequence through the model into the running moments.
class ModelCorpusRequest {
public:
    ModelCorpusRequest(ModelSession& session, Timings& timings);
    // What names the corpus's partial (WholeModel::fingerprint).
    uint64_t fingerprint() const { return weights_.fingerprint; }
    // Every document `documents` has left into `corpus` (add_model_corpus), with `analyses`'
    // corpus parts told every run (which then runs each sequence alone; without them a streamed
    // model runs layer-major); on_sequence: the sequences done. Returns the weight analyses'
    // stats.json entries; passes() says how the sequences went through the model.
    nlohmann::json run(const AnalysisSet& analyses, const ReportOptions& report, const LoadLimits& limits,
                       CorpusDocuments& documents, CorpusAccumulator& corpus, const SessionHooks& hooks,
                       const std::function<void(int64_t sequences)>& on_sequence, OutputDir& out);
    const ModelCorpusPasses& passes() const { return passes_; }

private:
    ModelSession& session_;
    Timings& timings_;
    CorpusWeights weights_;
    ModelCorpusPasses passes_;
};

// Warns (`hooks.warning`) of the heads of block `layer` that NaN/Inf values reach, `where` first
// ("" or "c.jsonl:3: ").
void warn_poisoned_heads(const SessionHooks& hooks, const LayerResult& result, size_t layer, const std::string& where);

// The memory a run's maps take: every layer's at once (a whole run) and its largest layer's (a
// streamed run), with what that layer is for the message refusing it ("running one layer on 9 tokens").
struct RunBytes {
    uint64_t whole_run = 0, largest_layer = 0;
    std::string largest_layer_what;
};

// The model's (any family: the streamed forward pass is WholeModel::run_blocks) RunBytes over T tokens.
RunBytes model_run_bytes(const WholeModel& model, int64_t T);

// The clock and progress of a forward pass whose layers are reported as they arrive: "forward" in
// `timings` is the time in the layers without the time each layer's report takes, and the layers
// done go to `progress` ("attention layer 3/18").
class StreamedForward {
public:
    StreamedForward(Timings& timings, StepCallback progress, int64_t total);
    // Runs `report_layer` for the layer just done, outside the forward's clock, then counts it.
    template <class ReportLayer>
    void report(ReportLayer&& report_layer) {
        stop_forward_clock();
        report_layer();
        ++done_;
        if (progress_) progress_(done_, total_);
        forward_from_ = std::chrono::steady_clock::now();
    }
    // Adds the time since the last layer's report to "forward" and lets the progress go.
    void finish();

private:
    void stop_forward_clock();

    Timings& timings_;
    StepCallback progress_;
    int64_t done_ = 0, total_;
    std::chrono::steady_clock::time_point forward_from_;
};

}  // namespace attn_viz
