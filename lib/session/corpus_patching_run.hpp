// Corpus mode's activation patching (model --inputs C.jsonl --patch-from-inputs C2.jsonl): the
// corrupted corpus is read beside the clean one, document for document (the same --shard of it;
// blank lines count in neither), and each pair is patched head by head into the accumulator's
// CorpusPatching.
#pragma once

#include <string>

#include "corpus_patching.hpp"
#include "load_limits.hpp"
#include "model_tokenizer.hpp"
#include "sequence_stream.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz {

class CorpusPatchingRun {
public:
    // Opens `path` (a corpus as --inputs takes) with the clean corpus's `shard`.
    CorpusPatchingRun(const std::string& path, CorpusShard shard, const LoadLimits& limits,
                      const ModelTokenizer& tokenizer);

    // The partner of the clean run `clean` (read at `clean_where`): read, run and every head of
    // `model` patched from it into `patching`. Error(bad_input) naming the corrupted file's line
    // when it is missing, malformed or of another token count than the clean sequence.
    void add(CorpusPatching& patching, WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
             const std::string& clean_where, Timings& timings);

    // After the clean corpus's last sequence (`clean_sequences` in the whole clean corpus):
    // refuses a corrupted corpus of another size and records its fingerprint in `patching`.
    void finish(CorpusPatching& patching, int64_t clean_sequences);

private:
    std::string path_;
    LoadLimits limits_;
    CorpusDocuments documents_;
    const ModelTokenizer& tokenizer_;
};

}  // namespace attn_viz
