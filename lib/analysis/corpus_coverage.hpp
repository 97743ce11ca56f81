// Which shards of which corpora a corpus result covers (--shard I/N), so that `attn-viz merge`
// refuses a shard given twice and a corpus that changed between its shards, and reports or refuses
// the shards that are missing (docs/analysis.md, "Coverage").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sequence_stream.hpp"

namespace attn_viz {

// The shards of one corpus that a result covers.
struct CorpusShards {
    std::string path;                  // the corpus as given to --inputs (for messages; never compared)
    uint64_t fingerprint = 0;          // CorpusDocuments::corpus_fingerprint()
    int64_t num_sequences = 0;         // in the whole corpus, every shard's
    int64_t num_shards = 1;            // N of --shard I/N
    std::vector<int64_t> shards;       // the shards covered, ascending
    std::vector<std::string> sources;  // [shards.size()] the result each came from (messages; not saved)

    // The sequences i < num_sequences with i mod N in `shards`.
    int64_t sequences_covered() const;
    bool complete() const { return static_cast<int64_t>(shards.size()) == num_shards; }
};

class CorpusCoverage {
public:
    CorpusCoverage() = default;  // covers nothing known (a result of an earlier version, or built in code)
    // The shards of one corpus (a run: shard I/N; a partial file: one entry of its "corpora").
    explicit CorpusCoverage(CorpusShards corpus);

    bool empty() const { return corpora_.empty(); }
    const std::vector<CorpusShards>& corpora() const { return corpora_; }
    int64_t sequences_covered() const;

    // Adds what `other` covers. Refuses (Error bad_input naming both results) a shard covered
    // twice, a corpus split into different numbers of shards, and shards of one corpus path with
    // different fingerprints (the corpus changed between its shards' runs).
    void merge(const CorpusCoverage& other);

    // "" when every corpus is complete; otherwise what is missing, e.g. "c.jsonl: shards 1, 3 of
    // 4 are missing (2 of 4 shards, 500 of 1000 sequences)", one corpus after the other.
    std::string missing() const;
    // "4 of 4 shards of c.jsonl, 1000 sequences" (corpora joined by "; ").
    std::string summary() const;

private:
    std::vector<CorpusShards> corpora_;  // in the order first merged
};

// The "corpora" list of partial files and corpus stats.json: per corpus its path, fingerprint,
// num_sequences, num_shards and the shards covered (docs/analysis.md; read back by
// CorpusAccumulator::from_partial_json).
nlohmann::json corpora_json(const CorpusCoverage& coverage);

}  // namespace attn_viz
