// Model.run_corpus: a corpus through a decoder or encoder model as `attn-viz model --inputs` runs
// it (app/cmd_model.cpp, lib's add_model_corpus), statistics only: every per-head statistic and
// pairwise matrix as mean and std over the sequences, and which corpus (or shard) they cover.
#include <pybind11/stl.h>

#include "corpus_source.hpp"
#include "error.hpp"
#include "interrupt.hpp"
#include "model.hpp"
#include "model_corpus_run.hpp"
#include "report.hpp"
#include "run_folder.hpp"
#include "weight_similarity.hpp"

namespace py = pybind11;

namespace attn_viz_python {

py::object run_corpus(const std::shared_ptr<Model>& m, py::object corpus_source, py::object progress,
                      const std::optional<std::string>& shard) {
    if (m->session->encoder_decoder())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path +
                                  ": run_corpus does not apply to an encoder-decoder model: corpus "
                                  "statistics hold one stack of layers (run each source and target pair alone)");
    PythonCorpus source("path_or_lines", corpus_source, shard, attn_viz::CorpusLines::json_or_text, true);
    PythonSteps steps(std::move(progress));
    attn_viz::ModelCorpusHooks hooks;
    hooks.on_layer = steps.interruption_check();
    hooks.on_sequence = steps.count_callback(*source.documents);
    std::string text;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        attn_viz::WholeModel& model = m->session->model();
        const attn_viz::CorpusWeights weights = attn_viz::corpus_weights(model, m->session->backend());
        attn_viz::CorpusAccumulator corpus(weights.fingerprint, attn_viz::LabelThresholds{});
        const attn_viz::AnalysisOptions options =
            attn_viz::analysis_options(report_options(m->threads), m->session->backend(), &weights.similarity);
        attn_viz::Timings timings;
        attn_viz::add_model_corpus(*source.documents, model, m->session->tokenizer(), options, attn_viz::LoadLimits{},
                                   corpus, hooks, timings);
        text = source.finished_json(corpus, options.thresholds);
    }
    return json_to_python(text);
}

}  // namespace attn_viz_python
