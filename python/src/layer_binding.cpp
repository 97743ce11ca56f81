// attn_viz.Layer: one attention layer's weights (attn-viz/weights@1, or a .safetensors checkpoint
// with a layout) run on an input sequence file, as `attn-viz run` does (app/cmd_run.cpp):
// load_layer_weights, load_sequence, AttentionLayer::run.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "attention.hpp"
#include "bindings.hpp"
#include "errors.hpp"
#include "layer.hpp"
#include "parallel_for.hpp"
#include "run_result.hpp"
#include "token_ids.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

std::shared_ptr<Layer> open_layer(const std::string& path, const std::string& layout, int layer, int threads) {
    auto l = std::make_shared<Layer>();
    l->source.path = path_argument("path", path), l->source.layout = layout, l->source.layer = layer;
    py::gil_scoped_release released;
    l->weights = attn_viz::load_layer_weights(l->source);
    attn_viz::use_threads(threads);
    l->threads = threads;
    l->backend = std::make_unique<attn_viz::OnednnBackend>();
    l->layer = std::make_unique<attn_viz::AttentionLayer>(*l->backend, l->weights);
    return l;
}

// The layer on the sequence in `input` (JSON, or .npy / .safetensors embeddings with `tokens`).
std::shared_ptr<RunResult> run(const std::shared_ptr<Layer>& l, const std::string& input, const std::string& tokens) {
    auto r = std::make_shared<RunResult>();
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(l->mutex);
        const attn_viz::SequenceInput sequence = attn_viz::load_sequence(
            {path_argument("input", input), path_argument("tokens", tokens), ""}, l->weights.d_model);
        attn_viz::AttentionRequest request;
        request.input = &sequence.embeddings;
        request.key_excluded = sequence.key_excluded;
        r->layers.push_back(l->layer->run(request));
        r->tokens = sequence.tokens;
        r->ids = attn_viz::token_ids_from_labels(sequence.tokens);
    }
    r->owner = l;
    r->backend = l->backend.get();
    r->threads = l->threads;
    r->weights = {&l->weights};
    r->layer_numbers = {l->source.layer};
    r->description = fmt::format("{} (layer {}, {} heads)", l->source.path, l->source.layer, l->weights.num_heads);
    return r;
}

}  // namespace

void bind_layer(py::module_& m) {
    py::class_<Layer, std::shared_ptr<Layer>>(m, "Layer", "One attention layer's weights (the input of `attn-viz run`)")
        .def(py::init(&open_layer), py::arg("path"), py::arg("layout") = "", py::arg("layer") = 0,
             py::arg("threads") = 0,
             "Opens attn-viz/weights@1 JSON, or a .safetensors checkpoint's layer `layer` with `layout` (torch-mha, "
             "bert, gpt2, "
             "llama); threads: 0 = all cores")
        .def("run", &run, py::arg("input"), py::arg("tokens") = "",
             "Runs the layer on the sequence in `input`: JSON {tokens, embeddings, attention_mask}, or "
             ".npy/.safetensors "
             "embeddings [T, D] with a `tokens` file")
        .def("run_corpus", &run_corpus, py::arg("corpus"), py::arg("progress") = py::none(),
             py::arg("shard") = py::none(),
             "Runs a corpus through the layer as `attn-viz run --inputs` does and returns its stats.json document "
             "(without "
             "provenance) as a dict: `corpus` is a JSONL file of input objects, a folder of input JSON files, or a "
             "list of "
             "dicts ({tokens, embeddings, attention_mask}); progress(done, total) after each sequence; shard \"I/N\" "
             "as --shard")
        .def_property_readonly("num_heads", [](const Layer& l) { return l.weights.num_heads; })
        .def_property_readonly("d_model", [](const Layer& l) { return l.weights.d_model; })
        .def_property_readonly("path", [](const Layer& l) { return l.source.path; });
}

}  // namespace attn_viz_python
