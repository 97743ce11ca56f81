// attn_viz.Model: a whole model (Hugging Face folder, GGUF file, llama2.c checkpoint with its
// tokenizer) opened and run as `attn-viz model` does (app/cmd_model.cpp): open_model_files,
// open_whole_model, read_model_tokenizer, encode_within_context, WholeModel::run.
#include <memory>
#include <mutex>
#include <optional>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "error.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "interrupt.hpp"
#include "model_tokenizer_file.hpp"
#include "run_result.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

struct Model {
    std::unique_ptr<attn_viz::OnednnBackend> backend;  // outlives `model`
    std::unique_ptr<attn_viz::WholeModel> model;
    std::unique_ptr<attn_viz::ModelTokenizer> tokenizer;
    std::string path;
    std::mutex mutex;  // one run at a time: runs release the GIL
};

std::shared_ptr<Model> open_model(const std::string& path, const std::string& tokenizer, int threads) {
    auto m = std::make_shared<Model>();
    m->path = path;
    py::gil_scoped_release released;
    const attn_viz::ModelFiles files = attn_viz::open_model_files(path);
    if (files.format == attn_viz::ModelFormat::hf_folder && attn_viz::is_seq2seq_model_type(files.config.model_type))
        throw attn_viz::Error(attn_viz::ErrorKind::usage, path + ": encoder-decoder models (" + files.config.model_type +
                                                              ") are not available from Python yet; use attn-viz model");
    m->backend = std::make_unique<attn_viz::OnednnBackend>(threads);
    m->model = attn_viz::open_whole_model(*m->backend, files);
    m->tokenizer = attn_viz::read_model_tokenizer(files, tokenizer, m->model->description().vocab_size);
    return m;
}

// The ids of `text` as the CLI's --text encodes them, or `ids` as --tokens gives them.
std::vector<int> run_ids(const Model& m, const std::optional<std::string>& text, const std::optional<std::vector<int>>& ids) {
    if (text.has_value() == ids.has_value())
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "give one of text or ids");
    const attn_viz::ModelDescription& d = m.model->description();
    if (text) return attn_viz::encode_within_context(*m.tokenizer, *text, d.max_tokens, "text");
    attn_viz::check_model_tokens(*ids, d.vocab_size, d.max_tokens);
    return *ids;
}

std::shared_ptr<RunResult> run(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
                               const std::optional<std::vector<int>>& ids, py::object progress) {
    auto r = std::make_shared<RunResult>();
    PythonSteps steps(std::move(progress));
    attn_viz::StepCallback on_layer = steps.callback();
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        const std::vector<int> tokens = run_ids(*m, text, ids);
        attn_viz::ModelRun run = m->model->run(tokens, true, false, on_layer);
        r->layers = std::move(run.layers);
        r->weights = m->model->attention_weights();
        r->tokens = m->tokenizer->labels(tokens);
        r->ids.assign(tokens.begin(), tokens.end());
    }
    r->owner = m;
    r->whole_model = true;
    r->description = attn_viz::model_description(m->path, m->model->description());
    r->input_text = text.value_or("");
    return r;
}

py::dict description(const Model& m) {
    const attn_viz::ModelDescription& d = m.model->description();
    py::dict out;
    out["architecture"] = d.architecture;
    out["n_layers"] = d.n_layers, out["n_heads"] = d.n_heads, out["n_kv_heads"] = d.n_kv_heads;
    out["dim"] = d.dim, out["head_dim"] = d.head_dim, out["vocab_size"] = d.vocab_size, out["max_tokens"] = d.max_tokens;
    return out;
}

}  // namespace

void bind_model(py::module_& m) {
    py::class_<Model, std::shared_ptr<Model>>(m, "Model", "A whole model: Hugging Face folder, GGUF file or llama2.c checkpoint")
        .def(py::init(&open_model), py::arg("path"), py::arg("tokenizer") = "", py::arg("threads") = 0,
             "Opens the model at `path`; `tokenizer`: a llama2.c tokenizer.bin (or a tokenizer.json or folder) when the "
             "model has none of its own; threads: 0 = all cores")
        .def("run", &run, py::arg("text") = py::none(), py::arg("ids") = py::none(), py::arg("progress") = py::none(),
             "Runs the model over `text` (encoded as the CLI's --text) or token `ids`; progress(done, total) is called "
             "after each layer; Ctrl-C stops the run after the layer in progress")
        .def("encode", [](const Model& m, const std::string& text) { return m.tokenizer->encode(text); }, py::arg("text"),
             "The ids of `text` as run() encodes it")
        .def_property_readonly("description", &description, "The model's shape: architecture, n_layers, n_heads, ...")
        .def_property_readonly("path", [](const Model& m) { return m.path; });
}

}  // namespace attn_viz_python
