// `attn-viz model` over one text layer by layer (--stream-layers, or by itself when the whole
// run's maps exceed the memory budget): each block's attention goes to a LayerStream as soon as
// the block is done and is released before the next one (layer_stream.hpp, docs/streaming.md).
#pragma once

#include <string>
#include <vector>

#include "layer_stream.hpp"
#include "load_limits.hpp"
#include "model_analyses.hpp"
#include "progress.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

// The options given that need every layer at once (--html, --generate, and the analyses that
// cannot run beside a layer stream: --ablate, --logit-attribution, --patch-from, --rollout, --flow),
// comma-separated, or "".
std::string whole_run_options(const attn_viz::ReportOptions& report, int generate,
                              const ModelAnalysisOptions& analyses);

// The memory a run's maps take: every layer's at once (a whole run) and its largest layer's (a
// streamed run), with what that layer is for the message refusing it ("running one layer on 9 tokens").
struct RunBytes {
    uint64_t whole_run = 0, largest_layer = 0;
    std::string largest_layer_what;
};

// Whether a run goes layer by layer: when `asked` (--stream-layers), or when the whole run's maps
// exceed the memory budget and no whole-run option (`whole_run`, from whole_run_options) is given.
// Refuses --stream-layers with a whole-run option (Error usage) and a streamed run whose largest
// layer exceeds the budget (Error bad_input); a whole run that does not fit is refused by the
// caller as before.
bool streams_layers(bool asked, const std::string& whole_run, const RunBytes& bytes,
                    const attn_viz::LoadLimits& limits);

// The model's (any family: the streamed forward pass is WholeModel::run_blocks) RunBytes over T tokens.
RunBytes model_run_bytes(const attn_viz::WholeModel& model, int64_t T);

// The clock and progress of a forward pass whose layers are reported as they arrive: "forward" in
// `timings` is the time in the layers without the time each layer's report takes, and the layers
// done show as progress ("attention layer 3/18") when `show` is set.
class StreamedForward {
public:
    StreamedForward(attn_viz::Timings& timings, bool show, std::string what, int64_t total);
    // Runs `report_layer` for the layer just done, outside the forward's clock, then counts it.
    template <class ReportLayer>
    void report(ReportLayer&& report_layer) {
        stop_forward_clock();
        report_layer();
        progress_.update(++done_, total_);
        forward_from_ = std::chrono::steady_clock::now();
    }
    // Adds the time since the last layer's report to "forward" and erases the progress line.
    void finish();

private:
    void stop_forward_clock();

    attn_viz::Timings& timings_;
    Progress progress_;
    int64_t done_ = 0, total_;
    std::chrono::steady_clock::time_point forward_from_;
};

// Warns on stderr of the heads of block `layer` that NaN/Inf values reach (`where`: "" or
// "c.jsonl:3: ").
void warn_poisoned_heads(const attn_viz::LayerResult& result, size_t layer, const std::string& where);

// The forward pass over `input_ids` (ids and token types) with every block's report written as soon as the block is
// done (LayerStream into `out`); the model keeps no block's attention weights. show_layers: the layers done as progress
// on stderr. Returns the whole analysis.
attn_viz::ModelAnalysis stream_model_report(attn_viz::OutputDir& out, attn_viz::WholeModel& model,
                                            const attn_viz::EncodedText& input_ids, attn_viz::LayerStreamInput input,
                                            const attn_viz::ReportOptions& report, bool show_layers,
                                            attn_viz::Timings& timings, attn_viz::PictureNotes& notes);

}  // namespace attn_viz_cli
