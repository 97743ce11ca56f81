// attn_viz.Model: a whole model (Hugging Face folder, GGUF file, llama2.c checkpoint with its
// tokenizer) opened and its inputs encoded by the session, as `attn-viz model` opens and encodes
// them (model_session.hpp), and run by WholeModel::run.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "error.hpp"
#include "errors.hpp"
#include "interrupt.hpp"
#include "model.hpp"
#include "parallel_for.hpp"
#include "run_folder.hpp"
#include "run_result.hpp"

namespace py = pybind11;

namespace attn_viz_python {

namespace {

// `input` encoded by the session; ids given as ids are checked against the model, as the CLI's --tokens.
attn_viz::ModelInputIds checked_input(const Model& m, const attn_viz::ModelInput& input,
                                      const attn_viz::ModelInputNames& names) {
    attn_viz::ModelInputIds encoded = m.session->encode(input, names);
    if (input.ids) m.session->check_tokens(encoded.ids, names.ids);
    return encoded;
}

}  // namespace

std::vector<int> model_ids(const Model& m, const std::optional<std::string>& text,
                           const std::optional<std::vector<int>>& ids, const std::string& text_name,
                           const std::string& ids_name) {
    attn_viz::ModelInput input;
    input.text = text, input.ids = ids;
    return checked_input(m, input, {text_name, "", ids_name}).ids;
}

namespace {

// `text`, the value of the argument `argument`, refused (Error usage) when empty, as the CLI's --text '' is.
const std::string& nonempty_text(const std::string& argument, const std::string& text) {
    if (text.empty()) throw attn_viz::Error(attn_viz::ErrorKind::usage, argument + ": '' is an empty text");
    return text;
}

std::shared_ptr<Model> open_model(const std::string& path, const std::string& tokenizer, int threads) {
    auto m = std::make_shared<Model>();
    m->path = path_argument("path", path);
    path_argument("tokenizer", tokenizer);
    py::gil_scoped_release released;
    auto session = std::make_unique<attn_viz::ModelSession>(path);
    attn_viz::use_threads(threads);
    m->threads = threads;
    session->load(tokenizer);
    m->session = std::move(session);
    return m;
}

std::shared_ptr<RunResult> run_decoder(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
                                       const std::optional<std::string>& text_pair,
                                       const std::optional<std::vector<int>>& ids, py::object progress) {
    auto r = std::make_shared<RunResult>();
    PythonSteps steps(std::move(progress));
    attn_viz::StepCallback on_layer = steps.callback();
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        const attn_viz::ModelSession& session = *m->session;
        attn_viz::ModelInput request;
        request.text = text, request.text_pair = text_pair, request.ids = ids;
        const attn_viz::ModelInputIds input = checked_input(*m, request, {"text", "text_pair", "ids"});
        const std::vector<int>& tokens = input.ids;
        // The results keep no logits.
        attn_viz::ModelRun run =
            session.model().run(tokens, {.logits = false, .token_types = input.token_types}, on_layer);
        if (text_pair) r->input_stats = session.input_stats(request, input);  // as the CLI's stats.json says it
        r->layers = std::move(run.layers);
        r->weights = session.model().attention_weights();
        r->tokens = session.tokenizer().labels(tokens);
        r->ids.assign(tokens.begin(), tokens.end());
        r->roles = attn_viz::token_roles(session.tokenizer(), tokens);
    }
    r->owner = m;
    r->backend = &m->session->backend();
    r->threads = m->threads;
    r->whole_model = true;
    r->description = attn_viz::model_description(m->path, m->session->model().description());
    r->input_text = text.value_or("");
    return r;
}

// A Result, or a Seq2SeqResult for an encoder-decoder (which takes target_text or target_ids too).
py::object run(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
               const std::optional<std::vector<int>>& ids, const std::optional<std::string>& target_text,
               const std::optional<std::vector<int>>& target_ids, py::object progress,
               const std::optional<std::string>& text_pair) {
    if (m->session->encoder_decoder() && text_pair)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path +
                                  ": text_pair is a BERT-style encoder's second text; an encoder-decoder takes "
                                  "text and target_text or target_ids");
    if (m->session->encoder_decoder()) return run_seq2seq(m, text, ids, target_text, target_ids, std::move(progress));
    if (target_text || target_ids)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path +
                                  ": target_text and target_ids are the decoder input of an "
                                  "encoder-decoder model (bart, t5); this model has none");
    return py::cast(run_decoder(m, text, text_pair, ids, std::move(progress)));
}

}  // namespace

void bind_model(py::module_& m) {
    py::class_<Model, std::shared_ptr<Model>> model(
        m, "Model", "A whole model: Hugging Face folder, GGUF file or llama2.c checkpoint");
    model
        .def(
            py::init(&open_model), py::arg("path"), py::arg("tokenizer") = "", py::arg("threads") = 0,
            "Opens the model at `path`; `tokenizer`: a llama2.c tokenizer.bin (or a tokenizer.json or folder) when the "
            "model has none of its own; threads: 0 = all cores")
        .def("run", &run, py::arg("text") = py::none(), py::arg("ids") = py::none(),
             py::arg("target_text") = py::none(), py::arg("target_ids") = py::none(), py::arg("progress") = py::none(),
             py::arg("text_pair") = py::none(),
             "Runs the model over `text` (encoded as the CLI's --text; with `text_pair`, the pair encoded as the CLI's "
             "--text-pair encodes it, segment B's tokens of token type 1, and stats() gives sentence_b_start) or token "
             "`ids`; an encoder-decoder (bart, t5) "
             "also "
             "takes the decoder's input as `target_text` or `target_ids` (teacher forced, as given) and returns a "
             "Seq2SeqResult; progress(done, total) is called after each layer; Ctrl-C stops the run after the layer in "
             "progress")
        .def(
            "run_corpus", &run_corpus, py::arg("path_or_lines"), py::arg("progress") = py::none(),
            py::arg("shard") = py::none(),
            "Runs every sequence of a corpus as `attn-viz model --inputs` does: a path (a .jsonl file of {\"text\"} or "
            "{\"tokens\"} objects, another file of one text per line, or a folder of .json files), or a list of such "
            "dicts "
            "and of strings (texts); shard 'I/N' takes the sequences i with i mod N == I. progress(done, total) is "
            "called "
            "after each sequence (total None for a path). Returns the stats.json document (without provenance)")
        .def(
            "encode",
            [](const Model& m, const std::string& text, const std::optional<std::string>& text_pair) -> py::object {
                const attn_viz::ModelTokenizer& tokenizer = m.session->tokenizer();
                if (!text_pair) return py::cast(tokenizer.encode(nonempty_text("text", text)));
                const attn_viz::EncodedText pair =
                    tokenizer.encode_pair(nonempty_text("text", text), nonempty_text("text_pair", *text_pair));
                py::dict out;
                out["ids"] = pair.ids, out["token_type_ids"] = pair.type_ids,
                out["sentence_b_start"] = pair.second_start;
                return out;
            },
            py::arg("text"), py::arg("text_pair") = py::none(),
            "The ids of `text` as run() encodes it; with `text_pair`, a dict of the pair's ids, token_type_ids and "
            "sentence_b_start, as transformers' tokenizer(text, text_pair)")
        .def_property_readonly(
            "description", [](const Model& m) -> py::object { return json_to_python(m.session->shape().dump()); },
            "The model's shape: architecture, n_layers, n_heads, ...")
        .def_property_readonly("path", [](const Model& m) { return m.path; });
    bind_model_analyses(model);
    bind_model_compare(model);
}

}  // namespace attn_viz_python
