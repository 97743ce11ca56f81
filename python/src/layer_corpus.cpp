// Layer.run_corpus: a corpus through one attention layer as `attn-viz run --inputs` runs it
// (app/cmd_run.cpp, lib's add_layer_corpus), statistics only: every per-head statistic and
// pairwise matrix as mean and std over the sequences, and which corpus (or shard) they cover.
#include <pybind11/stl.h>

#include "corpus_fingerprint.hpp"
#include "corpus_source.hpp"
#include "interrupt.hpp"
#include "layer.hpp"
#include "layer_corpus_run.hpp"
#include "report.hpp"
#include "run_folder.hpp"
#include "weight_similarity.hpp"
#include "weights_fingerprint.hpp"

namespace py = pybind11;

namespace attn_viz_python {

py::object run_corpus(const std::shared_ptr<Layer>& l, py::object corpus_source, py::object progress,
                      const std::optional<std::string>& shard) {
    PythonCorpus source("corpus", corpus_source, shard, attn_viz::CorpusLines::json, false);
    PythonSteps steps(std::move(progress));
    attn_viz::LayerCorpusHooks hooks;
    hooks.on_sequence = steps.count_callback(*source.documents);
    std::string text;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(l->mutex);
        attn_viz::CorpusAccumulator corpus(attn_viz::layer_fingerprint(l->weights), attn_viz::LabelThresholds{});
        const attn_viz::WeightSimilarities weight_similarity =
            attn_viz::weight_similarities({&l->weights}, false, *l->backend);
        const attn_viz::AnalysisOptions options =
            attn_viz::analysis_options(report_options(l->threads), *l->backend, &weight_similarity);
        attn_viz::Timings timings;
        attn_viz::add_layer_corpus(*source.documents, *l->layer, options, attn_viz::LoadLimits{}, corpus, hooks,
                                   timings);
        text = source.finished_json(corpus, options.thresholds);
    }
    return json_to_python(text);
}

}  // namespace attn_viz_python
