// attn_viz.Model's native object: a whole model opened as `attn-viz model` opens it, by the
// session (model_session.hpp): a decoder or encoder (WholeModel), or an encoder-decoder folder
// (bart, t5: Seq2SeqModel), with its tokenizer.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "model_session.hpp"

namespace attn_viz_python {

struct Model {
    std::unique_ptr<attn_viz::ModelSession> session;  // loaded
    std::string path;
    int threads = 0;   // as opened (0 = all cores): the analyses' too (report_options)
    std::mutex mutex;  // one run at a time: runs release the GIL
};

// The ids of `text` as the CLI's --text encodes them (`what` names it in errors), or `ids` as
// --tokens gives them, checked against the model; Error(usage) naming `text_name` and `ids_name`
// unless exactly one is given.
std::vector<int> model_ids(const Model& m, const std::optional<std::string>& text,
                           const std::optional<std::vector<int>>& ids, const std::string& text_name,
                           const std::string& ids_name);

// Model.run_corpus: the corpus `source` (a path, or a list of dicts and strings) through a
// decoder or encoder model, as `attn-viz model --inputs` runs it; returns the stats.json document
// (without provenance) as a dict (model_corpus.cpp).
pybind11::object run_corpus(const std::shared_ptr<Model>& m, pybind11::object source, pybind11::object progress,
                            const std::optional<std::string>& shard);

// Model.run for an encoder-decoder: the source through the encoder, the target (teacher forced,
// as given) through the decoder (seq2seq_result.cpp).
pybind11::object run_seq2seq(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
                             const std::optional<std::vector<int>>& ids, const std::optional<std::string>& target_text,
                             const std::optional<std::vector<int>>& target_ids, pybind11::object progress);

void bind_seq2seq_result(pybind11::module_& m);  // attn_viz.Seq2SeqResult (seq2seq_result.cpp)

// Model._analyze, the whole-model analyses of the catalog (model_analyses.cpp).
void bind_model_analyses(pybind11::class_<Model, std::shared_ptr<Model>>& model);

// Model.compare, two models head by head (model_compare.cpp).
void bind_model_compare(pybind11::class_<Model, std::shared_ptr<Model>>& model);

}  // namespace attn_viz_python
