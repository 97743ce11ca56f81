#include "run_result.hpp"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "error.hpp"
#include "json_text.hpp"
#include "numpy_tensor.hpp"
#include "run_folder.hpp"
#include "timings.hpp"

namespace py = pybind11;

namespace attn_viz_python {

attn_viz::ReportInput RunResult::report_input() const {
    attn_viz::ReportInput in;
    in.backend = backend;
    for (const attn_viz::LayerResult& layer : layers) in.layers.push_back(&layer);
    in.weights = weights;
    in.query_tokens = in.key_tokens = tokens;
    in.layer_folders = whole_model;
    in.token_ids = ids;
    in.token_roles = roles;
    in.layer_numbers = layer_numbers;
    in.model_description = description;
    in.input_text = input_text;
    in.extra_stats = input_stats;
    return in;
}

const attn_viz::ModelAnalysis& RunResult::analysis() {
    if (!analyzed) analyzed = attn_viz::analyze_report(report_input(), report_options(threads));
    return *analyzed;
}

const std::optional<attn_viz::ValueRange>& RunResult::png_range() {
    if (!png_range_made) png_range_made = attn_viz::head_png_range(report_input(), report_options(threads), analysis());
    return *png_range_made;
}

namespace {

// [L, H, T, S] for a model (one layer too), as `model --dump-attention` writes it; [1, H, T, S]
// for a layer file, whose dump (`run --dump-attention`) is [H, T, S].
py::object attention_array(RunResult& r) {
    if (r.attention) return r.attention;
    std::vector<const attn_viz::LayerResult*> layers;
    for (const attn_viz::LayerResult& layer : r.layers) layers.push_back(&layer);
    attn_viz::Tensor stacked;
    {
        py::gil_scoped_release released;
        stacked = attn_viz::stacked_attention(layers, true);
    }
    r.attention = to_numpy(std::move(stacked));
    return r.attention;
}

// Layer `layer`'s tensor `tensor` (of r.layers) as an array of `shape` over the same buffer, which
// the Result keeps alive (the array's base).
py::array_t<float> layer_view(const std::shared_ptr<RunResult>& r, int64_t layer,
                              attn_viz::Tensor attn_viz::LayerResult::*tensor, const std::vector<int64_t>& shape) {
    return py::array_t<float>(shape, (r->layers[static_cast<size_t>(layer)].*tensor).ptr(), py::cast(r));
}

void check_layer(const RunResult& r, int64_t layer) {
    if (layer < 0 || layer >= static_cast<int64_t>(r.layers.size()))
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("layer {} is out of range: the run has {} layers", layer, r.layers.size()));
}

// [T, H, d_h]: each head's output A_h V_h before W_O (TransformerLens's hook_z without the batch).
py::array_t<float> head_outputs(const std::shared_ptr<RunResult>& r, int64_t layer) {
    check_layer(*r, layer);
    const attn_viz::LayerResult& l = r->layers[static_cast<size_t>(layer)];
    const int64_t T = l.context.dim(0), H = l.attention.dim(0);
    return layer_view(r, layer, &attn_viz::LayerResult::context, {T, H, l.context.dim(1) / H});
}

// [T, D]: the attention output, the heads' outputs through W_O with its bias (hook_attn_out).
py::array_t<float> attention_output(const std::shared_ptr<RunResult>& r, int64_t layer) {
    check_layer(*r, layer);
    const attn_viz::Tensor& output = r->layers[static_cast<size_t>(layer)].output;
    return layer_view(r, layer, &attn_viz::LayerResult::output, {output.dim(0), output.dim(1)});
}

// stats.json's document, through JSON text, so the dict is exactly what the file holds.
py::object stats(RunResult& r) {
    std::string text;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(r.mutex);
        text = attn_viz::dump_json(attn_viz::report_stats(r.report_input(), r.analysis()));
    }
    return json_to_python(text);
}

py::bytes head_png(RunResult& r, int64_t layer, int64_t head) {
    std::vector<uint8_t> png;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(r.mutex);
        png =
            attn_viz::head_png(r.report_input(), report_options(r.threads), r.analysis(), {layer, head}, r.png_range());
    }
    return py::bytes(reinterpret_cast<const char*>(png.data()), png.size());
}

// Every picture and statistics file into `out`, as the CLI writes them with --out (and --html).
void write(RunResult& r, const std::string& out, bool force, bool html) {
    write_run_folder(r.mutex, out, force, html, r.threads,
                     [&](attn_viz::OutputDir& dir, const attn_viz::ReportOptions& options, attn_viz::Timings& timings) {
                         attn_viz::write_report(dir, r.report_input(), options, timings);
                     });
}

}  // namespace

void bind_run_result(py::module_& m) {
    py::class_<RunResult, std::shared_ptr<RunResult>>(
        m, "Result", "The attention of one run: maps, tokens, statistics and pictures.")
        .def_property_readonly("attention", &attention_array,
                               "Attention weights, float32 [L, H, T, S] (S == T for self-attention), not copied")
        .def_property_readonly(
            "tokens", [](const RunResult& r) { return r.tokens; }, "The T token labels")
        .def_property_readonly(
            "ids", [](const RunResult& r) { return r.ids; }, "The T token ids")
        .def("head_outputs", &head_outputs, py::arg("layer"),
             "Layer `layer`'s head outputs A_h V_h before W_O, float32 [T, H, d_h], a view kept alive by the result")
        .def("attention_output", &attention_output, py::arg("layer"),
             "Layer `layer`'s attention output (the heads through W_O, with its bias), float32 [T, D], a view")
        .def("stats", &stats,
             "Statistics of every head: the document the CLI writes as stats.json (without provenance)")
        .def("head_png", &head_png, py::arg("layer"), py::arg("head"),
             "Head `head` of layer `layer` (an index into the run's layers) drawn as the CLI draws head_NN.png, as PNG "
             "bytes")
        .def("write", &write, py::arg("out"), py::arg("force") = false, py::arg("html") = false,
             "Writes the pictures and statistics files into the folder `out` as the CLI's --out does (report.html with "
             "html=True)");
}

}  // namespace attn_viz_python
