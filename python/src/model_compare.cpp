// Model.compare: two opened models head by head over one input, as `attn-viz compare A B --text
// ... --out DIR` writes compare.json (lib/session/model_compare.hpp, the same code): every head's
// measures, the summary of the chosen metric, top-1 agreement and the outputs' comparison.
#include "model_compare.hpp"

#include <mutex>

#include <pybind11/stl.h>

#include "analysis_catalog.hpp"
#include "bindings.hpp"
#include "error.hpp"
#include "errors.hpp"
#include "interrupt.hpp"
#include "model.hpp"
#include "run_folder.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

py::object compare(const std::shared_ptr<Model>& a, const std::shared_ptr<Model>& b,
                   const std::optional<std::string>& text, const std::optional<std::vector<int>>& ids, int generate,
                   const std::string& metric_name) {
    if (a->session->encoder_decoder() || b->session->encoder_decoder())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              "compare: two encoder-decoders are compared from the CLI only (attn-viz compare A B "
                              "--target-text ...)");
    if (generate < 0 || generate > (1 << 20))
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              "generate: " + std::to_string(generate) + " is not in 0..2^20");
    try {  // an unknown metric fails before any work
        attn_viz::comparison_metric(attn_viz::HeadComparison{}, metric_name);
    } catch (const attn_viz::Error& e) {
        throw attn_viz::Error(e.kind(), std::string("metric: ") + e.what());
    }
    nlohmann::json document;
    {
        py::gil_scoped_release released;
        std::unique_lock<std::mutex> lock_a(a->mutex, std::defer_lock), lock_b(b->mutex, std::defer_lock);
        if (a == b)
            lock_a.lock();
        else
            std::lock(lock_a, lock_b);
        attn_viz::check_same_shape(*a->session, *b->session);
        const std::vector<int> tokens = model_ids(*a, text, ids, "text", "ids");
        if (const std::string no_logits = attn_viz::logits_obstacle(a->session->model());
            generate > 0 && !no_logits.empty())
            throw attn_viz::Error(attn_viz::ErrorKind::usage, "generate" + no_logits);
        const attn_viz::AnalysisOptions options =
            attn_viz::analysis_options(report_options(a->threads), a->session->backend());
        const attn_viz::ModelComparison m =
            attn_viz::compare_on_tokens(*a->session, *b->session, {tokens, {}}, options, generate);
        const std::vector<double> metric = attn_viz::comparison_metric(m.heads, metric_name);
        const attn_viz::CompareSummary summary =
            attn_viz::summarize_comparison(m.heads, metric, metric_name, m.top1, -1);
        document = attn_viz::model_comparison_json(m, metric, summary);
    }
    return json_to_python(document.dump());
}

}  // namespace

void bind_model_compare(py::class_<Model, std::shared_ptr<Model>>& model) {
    model.def("compare", &compare, py::arg("other"), py::arg("text") = py::none(), py::arg("ids") = py::none(),
              py::arg("generate") = 0, py::arg("metric") = "js_distance",
              "This model and `other` (of one shape) over `text` (encoded by this model's tokenizer) or `ids`, head by "
              "head, as `attn-viz compare A B` writes compare.json (without its provenance): heads (each one's "
              "measures and top1_agreement), summary (of `metric`: js_distance, correlation_distance or a statistic "
              "name) and output (next-token KL, losses, top-1; with `generate` > 0 both greedy continuations)");
}

}  // namespace attn_viz_python
