// Model.run_corpus: a corpus through a decoder or encoder model as `attn-viz model --inputs` runs
// it (app/cmd_model.cpp, lib's add_model_corpus), statistics only: every per-head statistic and
// pairwise matrix as mean and std over the sequences, and which corpus (or shard) they cover.
#include <pybind11/stl.h>

#include "corpus_coverage.hpp"
#include "error.hpp"
#include "interrupt.hpp"
#include "json_text.hpp"
#include "model.hpp"
#include "model_corpus_run.hpp"
#include "report.hpp"
#include "run_folder.hpp"
#include "stats_report.hpp"
#include "weight_similarity.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

// What names a corpus given as a list, in messages ("<lines>:3: ...") and in stats.json's "corpora".
constexpr const char* lines_name = "<lines>";

// The documents of `source`: a path (str or os.PathLike) read as the CLI's --inputs reads it, or a
// list whose items are dicts ({"text": ...} or {"tokens": [...]}) or strings (texts), each made
// one JSON line (so a list and the JSONL file of the same lines are the same corpus). `name` gets
// what names the corpus, `total` the number of sequences of the shard (None for a path).
std::unique_ptr<attn_viz::CorpusDocuments> corpus_documents(const py::handle& source, const attn_viz::CorpusShard& shard,
                                                            std::string& name, py::object& total) {
    const py::module_ os = py::module_::import("os");
    if (py::isinstance<py::str>(source) || py::isinstance(source, os.attr("PathLike"))) {
        total = py::none();
        name = py::str(os.attr("fspath")(source));
        return std::make_unique<attn_viz::CorpusDocuments>(name, attn_viz::LoadLimits{}, shard, attn_viz::CorpusLines::json_or_text);
    }
    if (!py::isinstance<py::list>(source) && !py::isinstance<py::tuple>(source))
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "run_corpus takes a path or a list of dicts and strings, not " +
                                                              std::string(py::str(source.get_type().attr("__name__"))));
    const py::object dumps = py::module_::import("json").attr("dumps");
    std::vector<std::string> lines;
    int64_t held = 0;
    for (const py::handle item : source) {
        if (py::isinstance<py::str>(item)) {
            py::dict doc;
            doc["text"] = item;
            lines.push_back(py::str(dumps(doc, py::arg("ensure_ascii") = false)));
        } else if (py::isinstance<py::dict>(item)) {
            lines.push_back(py::str(dumps(item, py::arg("ensure_ascii") = false)));
        } else {
            throw attn_viz::Error(attn_viz::ErrorKind::usage, std::string(lines_name) + ":" + std::to_string(lines.size() + 1) +
                                                                  ": expected a dict or a string, not " +
                                                                  std::string(py::str(item.get_type().attr("__name__"))));
        }
        if (shard.holds(static_cast<int64_t>(lines.size()) - 1)) ++held;
    }
    total = py::int_(held);
    name = lines_name;
    return std::make_unique<attn_viz::CorpusDocuments>(lines_name, std::move(lines), shard);
}

}  // namespace

py::object run_corpus(const std::shared_ptr<Model>& m, py::object source, py::object progress, const std::optional<std::string>& shard_text) {
    if (!m->model)
        throw attn_viz::Error(attn_viz::ErrorKind::usage, m->path + ": run_corpus does not apply to an encoder-decoder model: corpus "
                                                                    "statistics hold one stack of layers (run each source and target pair alone)");
    const attn_viz::CorpusShard shard = shard_text ? attn_viz::parse_corpus_shard(*shard_text) : attn_viz::CorpusShard{};
    std::string name;
    py::object total;
    const std::unique_ptr<attn_viz::CorpusDocuments> documents = corpus_documents(source, shard, name, total);
    PythonSteps steps(std::move(progress));
    attn_viz::ModelCorpusHooks hooks;
    hooks.on_layer = steps.interruption_check();
    hooks.on_sequence = steps.count_callback(std::move(total));
    std::string text;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        attn_viz::WholeModel& model = *m->model;
        attn_viz::CorpusAccumulator corpus(model.fingerprint(), attn_viz::LabelThresholds{});
        const attn_viz::WeightSimilarities weight_similarity = attn_viz::weight_similarities(model.attention_weights(), false, *m->backend);
        attn_viz::AnalysisOptions options;
        options.threads = attn_viz::resolve_threads(0);
        options.weight_similarity = &weight_similarity;
        attn_viz::Timings timings;
        attn_viz::add_model_corpus(*documents, model, *m->tokenizer, options, attn_viz::LoadLimits{}, corpus, hooks, timings);
        corpus.set_coverage(attn_viz::corpus_run_coverage(name, shard, *documents, corpus.num_sequences()));
        nlohmann::json stats = attn_viz::stats_json(corpus.finish(options.thresholds));
        stats["corpora"] = attn_viz::corpora_json(corpus.coverage());
        text = attn_viz::dump_json(stats);
    }
    return json_to_python(text);
}

}  // namespace attn_viz_python
