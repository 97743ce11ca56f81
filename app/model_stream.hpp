// Whether `attn-viz model` runs one text layer by layer (--stream-layers, or by itself when the
// whole run's maps exceed the memory budget): each block's attention then goes to a LayerStream as
// soon as the block is done and is released before the next one (model_request.hpp,
// docs/streaming.md).
#pragma once

#include <string>
#include <vector>

#include "load_limits.hpp"
#include "model_analyses.hpp"
#include "model_request.hpp"

namespace attn_viz_cli {

// The options given that need every layer at once (--html, --generate, and the analyses that
// cannot run beside a layer stream: --ablate, --logit-attribution, --patch-from, --rollout, --flow),
// comma-separated, or "".
std::string whole_run_options(const attn_viz::ReportOptions& report, int generate,
                              const ModelAnalysisOptions& analyses);

// Whether a run goes layer by layer: when `asked` (--stream-layers), or when the whole run's maps
// exceed the memory budget and no whole-run option (`whole_run`, from whole_run_options) is given.
// Refuses --stream-layers with a whole-run option (Error usage) and a streamed run whose largest
// layer exceeds the budget (Error bad_input); a whole run that does not fit is refused by the
// caller as before.
bool streams_layers(bool asked, const std::string& whole_run, const attn_viz::RunBytes& bytes,
                    const attn_viz::LoadLimits& limits);

}  // namespace attn_viz_cli
