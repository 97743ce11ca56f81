// attn_viz.Result: what one run of a model or a layer file produced, kept in the library's own
// structures so that the statistics, the pictures and the PNG bytes come from the same code as
// the CLI's (lib/report: analyze_report, report_stats, write_report, head_png).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "head_analysis.hpp"
#include "layer_result.hpp"
#include "report.hpp"

namespace attn_viz_python {

struct RunResult {
    std::shared_ptr<void> owner;                            // the model or layer whose weights `weights` point into
    attn_viz::OnednnBackend* backend = nullptr;             // the owner's, for the analysis's products
    std::vector<attn_viz::LayerResult> layers;              // per layer: attention [H, T, S], ...
    std::vector<const attn_viz::LayerWeights*> weights;     // the same layers' weights
    std::vector<std::string> tokens;                        // T labels
    std::vector<int64_t> ids;                               // T ids (a layer file's: equal labels, equal ids)
    std::vector<attn_viz::TokenRole> roles;                 // T roles (a model's tokenizer's), or none (a layer file)
    bool whole_model = false;                               // layer_NN/ folders, like `attn-viz model`
    std::vector<int64_t> layer_numbers;                     // what pictures call the layers (empty: 0, 1, ...)
    std::string description, input_text;                    // report.html's "Model" and "Input"
    nlohmann::json input_stats = nlohmann::json::object();  // stats.json's keys about the input (a text pair's)
    int threads = 0;  // the owner's (Model, Layer): the analysis's and pictures' threads

    attn_viz::ReportInput report_input() const;
    // The analysis of every head, made once (the caller holds `mutex`).
    const attn_viz::ModelAnalysis& analysis();

    // The shared color range of head_png (the caller holds `mutex`), made once.
    const std::optional<attn_viz::ValueRange>& png_range();

    std::mutex mutex;  // the analysis is made with the GIL released
    std::optional<attn_viz::ModelAnalysis> analyzed;
    std::optional<std::optional<attn_viz::ValueRange>> png_range_made;  // none until the first head_png
    pybind11::object attention;                                         // the [L, H, T, S] array, made on first use
};

void bind_run_result(pybind11::module_& m);

}  // namespace attn_viz_python
