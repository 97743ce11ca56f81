// attn_viz.Model: a whole model (Hugging Face folder, GGUF file, llama2.c checkpoint with its
// tokenizer) opened and run as `attn-viz model` does (app/cmd_model.cpp): open_model_files,
// open_whole_model (or an encoder-decoder's Seq2SeqModel), read_model_tokenizer,
// encode_within_context, WholeModel::run.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "error.hpp"
#include "errors.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "interrupt.hpp"
#include "model.hpp"
#include "model_run.hpp"
#include "model_tokenizer_file.hpp"
#include "parallel_for.hpp"
#include "run_result.hpp"

namespace py = pybind11;

namespace attn_viz_python {

int64_t Model::vocab_size() const {
    return model ? model->description().vocab_size : seq2seq->weights().config.blocks.vocab_size;
}
int64_t Model::max_tokens() const {
    return model ? model->description().max_tokens : seq2seq->weights().config.blocks.max_tokens;
}

namespace {

// `text`, the value of the argument `argument`, refused (Error usage) when empty, as the CLI's --text '' is.
const std::string& nonempty_text(const std::string& argument, const std::string& text) {
    if (text.empty()) throw attn_viz::Error(attn_viz::ErrorKind::usage, argument + ": '' is an empty text");
    return text;
}

}  // namespace

std::vector<int> model_ids(const Model& m, const std::optional<std::string>& text,
                           const std::optional<std::vector<int>>& ids, const std::string& text_name,
                           const std::string& ids_name) {
    if (text.has_value() == ids.has_value())
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "give one of " + text_name + " or " + ids_name);
    if (text)
        return attn_viz::encode_within_context(*m.tokenizer, nonempty_text(text_name, *text), m.max_tokens(),
                                               text_name);
    attn_viz::check_model_tokens(*ids, m.vocab_size(), m.max_tokens(), ids_name);
    return *ids;
}

namespace {

std::shared_ptr<Model> open_model(const std::string& path, const std::string& tokenizer, int threads) {
    auto m = std::make_shared<Model>();
    m->path = path_argument("path", path);
    path_argument("tokenizer", tokenizer);
    py::gil_scoped_release released;
    const attn_viz::ModelFiles files = attn_viz::open_model_files(path);
    attn_viz::use_threads(threads);
    m->threads = threads;
    m->backend = std::make_unique<attn_viz::OnednnBackend>();
    if (files.format == attn_viz::ModelFormat::hf_folder && attn_viz::is_seq2seq_model_type(files.config.model_type))
        m->seq2seq = std::make_unique<attn_viz::Seq2SeqModel>(
            *m->backend, attn_viz::read_hf_seq2seq_folder(files.path, files.config));
    else
        m->model = attn_viz::open_whole_model(*m->backend, files);
    m->tokenizer = attn_viz::read_model_tokenizer(files, tokenizer, m->vocab_size());
    return m;
}

// The ids (and token types) of `text` with `text_pair` encoded as a pair, as the CLI's
// --text-pair; else as model_ids.
attn_viz::EncodedText model_input(const Model& m, const std::optional<std::string>& text,
                                  const std::optional<std::string>& text_pair,
                                  const std::optional<std::vector<int>>& ids) {
    if (!text_pair) return {model_ids(m, text, ids, "text", "ids"), {}};
    if (!text) throw attn_viz::Error(attn_viz::ErrorKind::usage, "text_pair is a pair's second text: give text too");
    return attn_viz::encode_pair_within_context(*m.tokenizer, nonempty_text("text", *text),
                                                nonempty_text("text_pair", *text_pair), m.max_tokens(), "text_pair");
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
        const attn_viz::EncodedText input = model_input(*m, text, text_pair, ids);
        const std::vector<int>& tokens = input.ids;
        // The results keep no logits.
        // A model of one token type or none runs every token as type 0, as the CLI does.
        const bool typed = m->model->description().token_types > 1;
        attn_viz::ModelRun run = m->model->run(
            tokens, {.logits = false, .token_types = typed ? input.type_ids : std::vector<int>{}}, on_layer);
        if (text_pair) {  // as the CLI's stats.json says it (BertViz's sentence_b_start)
            r->input_stats = {{"text_pair", *text_pair}, {"sentence_b_start", input.second_start}};
            if (!run.token_types.empty()) r->input_stats["token_types"] = run.token_types;
        }
        r->layers = std::move(run.layers);
        r->weights = m->model->attention_weights();
        r->tokens = m->tokenizer->labels(tokens);
        r->ids.assign(tokens.begin(), tokens.end());
        r->roles = attn_viz::token_roles(*m->tokenizer, tokens);
    }
    r->owner = m;
    r->backend = m->backend.get();
    r->threads = m->threads;
    r->whole_model = true;
    r->description = attn_viz::model_description(m->path, m->model->description());
    r->input_text = text.value_or("");
    return r;
}

// A Result, or a Seq2SeqResult for an encoder-decoder (which takes target_text or target_ids too).
py::object run(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
               const std::optional<std::vector<int>>& ids, const std::optional<std::string>& target_text,
               const std::optional<std::vector<int>>& target_ids, py::object progress,
               const std::optional<std::string>& text_pair) {
    if (m->seq2seq && text_pair)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path +
                                  ": text_pair is a BERT-style encoder's second text; an encoder-decoder takes "
                                  "text and target_text or target_ids");
    if (m->seq2seq) return run_seq2seq(m, text, ids, target_text, target_ids, std::move(progress));
    if (target_text || target_ids)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path +
                                  ": target_text and target_ids are the decoder input of an "
                                  "encoder-decoder model (bart, t5); this model has none");
    return py::cast(run_decoder(m, text, text_pair, ids, std::move(progress)));
}

py::dict description(const Model& m) {
    py::dict out;
    if (m.seq2seq) {
        const attn_viz::Seq2SeqConfig& c = m.seq2seq->weights().config;
        out["architecture"] = c.blocks.architecture;
        out["n_layers"] = c.blocks.n_layers, out["n_decoder_layers"] = c.n_decoder_layers,
        out["n_heads"] = c.blocks.n_heads;
        out["n_kv_heads"] = c.blocks.n_kv_heads, out["dim"] = c.blocks.d_model, out["head_dim"] = c.blocks.head_dim;
        out["vocab_size"] = c.blocks.vocab_size, out["max_tokens"] = c.blocks.max_tokens;
        return out;
    }
    const attn_viz::ModelDescription& d = m.model->description();
    out["architecture"] = d.architecture;
    out["n_layers"] = d.n_layers, out["n_heads"] = d.n_heads, out["n_kv_heads"] = d.n_kv_heads;
    out["dim"] = d.dim, out["head_dim"] = d.head_dim, out["vocab_size"] = d.vocab_size,
    out["max_tokens"] = d.max_tokens;
    return out;
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
                if (!text_pair) return py::cast(m.tokenizer->encode(nonempty_text("text", text)));
                const attn_viz::EncodedText pair =
                    m.tokenizer->encode_pair(nonempty_text("text", text), nonempty_text("text_pair", *text_pair));
                py::dict out;
                out["ids"] = pair.ids, out["token_type_ids"] = pair.type_ids,
                out["sentence_b_start"] = pair.second_start;
                return out;
            },
            py::arg("text"), py::arg("text_pair") = py::none(),
            "The ids of `text` as run() encodes it; with `text_pair`, a dict of the pair's ids, token_type_ids and "
            "sentence_b_start, as transformers' tokenizer(text, text_pair)")
        .def_property_readonly("description", &description, "The model's shape: architecture, n_layers, n_heads, ...")
        .def_property_readonly("path", [](const Model& m) { return m.path; });
    bind_model_analyses(model);
}

}  // namespace attn_viz_python
