#include "corpus_source.hpp"

#include <fmt/format.h>

#include "corpus_coverage.hpp"
#include "error.hpp"
#include "errors.hpp"
#include "json_text.hpp"
#include "model_corpus_run.hpp"
#include "stats_report.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

// What names a corpus given as a list, in messages ("<lines>:3: ...") and in stats.json's "corpora".
constexpr const char* lines_name = "<lines>";

}  // namespace

PythonCorpus::PythonCorpus(const char* argument, const py::handle& source, const std::optional<std::string>& shard_text,
                           attn_viz::CorpusLines lines_kind, bool texts)
    : shard(shard_text ? attn_viz::parse_corpus_shard(*shard_text) : attn_viz::CorpusShard{}) {
    const py::module_ os = py::module_::import("os");
    if (py::isinstance<py::str>(source) || py::isinstance(source, os.attr("PathLike"))) {
        name = path_argument(argument, std::string(py::str(os.attr("fspath")(source))));
        documents = std::make_unique<attn_viz::CorpusDocuments>(name, attn_viz::LoadLimits{}, shard, lines_kind);
        return;
    }
    if (!py::isinstance<py::list>(source) && !py::isinstance<py::tuple>(source))
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "run_corpus takes a path or a list of dicts" +
                                                              std::string(texts ? " and strings" : "") + ", not " +
                                                              std::string(py::str(source.get_type().attr("__name__"))));
    const py::object dumps = py::module_::import("json").attr("dumps");
    std::vector<std::string> lines;
    for (const py::handle item : source) {
        if (texts && py::isinstance<py::str>(item)) {
            py::dict doc;
            doc["text"] = item;
            lines.push_back(py::str(dumps(doc, py::arg("ensure_ascii") = false)));
        } else if (py::isinstance<py::dict>(item)) {
            lines.push_back(py::str(dumps(item, py::arg("ensure_ascii") = false)));
        } else {
            throw attn_viz::Error(
                attn_viz::ErrorKind::usage,
                fmt::format("{}:{}: expected a dict{}, not {}", lines_name, lines.size() + 1,
                            texts ? " or a string" : "", std::string(py::str(item.get_type().attr("__name__")))));
        }
    }
    name = lines_name;
    documents = std::make_unique<attn_viz::CorpusDocuments>(lines_name, std::move(lines), shard);
}

std::string PythonCorpus::finished_json(attn_viz::CorpusAccumulator& corpus,
                                        const attn_viz::LabelThresholds& thresholds) const {
    corpus.set_coverage(attn_viz::corpus_run_coverage(name, shard, *documents, corpus.num_sequences()));
    nlohmann::json stats = attn_viz::stats_json(corpus.finish(thresholds));
    stats["corpora"] = attn_viz::corpora_json(corpus.coverage());
    return attn_viz::dump_json(stats);
}

}  // namespace attn_viz_python
