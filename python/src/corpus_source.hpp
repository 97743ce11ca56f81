// What Model.run_corpus and Layer.run_corpus share: the corpus given from Python (a path, or a
// list of documents) and the stats.json document of a finished corpus run.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "corpus_stats.hpp"
#include "sequence_stream.hpp"

namespace attn_viz_python {

// A corpus given from Python, or one shard of it: `source`, the value of the argument `argument`,
// is a path (str or os.PathLike; refused holding a NUL byte, errors.hpp) read as
// the CLI's --inputs reads it (`lines`: how a file's lines are read), or a list whose items are
// dicts, or with `texts` also strings ({"text": item}), each made one JSON line (so a list and the
// JSONL file of the same lines are the same corpus). `shard`: "I/N" as --shard, or none.
struct PythonCorpus {
    PythonCorpus(const char* argument, const pybind11::handle& source, const std::optional<std::string>& shard,
                 attn_viz::CorpusLines lines, bool texts);

    // The stats.json text (without provenance) of `corpus`, whose run read `documents` to the end:
    // its analysis and "corpora". Throws Error(bad_input) when the run took no sequence.
    std::string finished_json(attn_viz::CorpusAccumulator& corpus, const attn_viz::LabelThresholds& thresholds) const;

    attn_viz::CorpusShard shard;
    std::string name;  // the path, or "<lines>": in messages and stats.json's "corpora"
    std::unique_ptr<attn_viz::CorpusDocuments> documents;
};

}  // namespace attn_viz_python
