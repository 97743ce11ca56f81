#include "corpus_coverage.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "fingerprint.hpp"

namespace attn_viz {
namespace {

// "1, 3, 5" (the first ten, then "and N more").
std::string shard_list(const std::vector<int64_t>& shards) {
    std::string text;
    for (size_t k = 0; k < shards.size() && k < 10; ++k) text += fmt::format("{}{}", k ? ", " : "", shards[k]);
    if (shards.size() > 10) text += fmt::format(" and {} more", shards.size() - 10);
    return text;
}

// "c.jsonl (fingerprint 0123456789abcdef)"
std::string corpus_name(const CorpusShards& c) {
    return fmt::format("{} (fingerprint {})", c.path, fingerprint_text(c.fingerprint));
}

}  // namespace

int64_t CorpusShards::sequences_covered() const {
    int64_t covered = 0;
    for (int64_t shard : shards) covered += shard < num_sequences ? (num_sequences - 1 - shard) / num_shards + 1 : 0;
    return covered;
}

CorpusCoverage::CorpusCoverage(CorpusShards corpus) { corpora_.push_back(std::move(corpus)); }

int64_t CorpusCoverage::sequences_covered() const {
    int64_t covered = 0;
    for (const CorpusShards& c : corpora_) covered += c.sequences_covered();
    return covered;
}

void CorpusCoverage::merge(const CorpusCoverage& other) {
    for (const CorpusShards& theirs : other.corpora_) {
        const auto same_corpus = [&](const CorpusShards& c) { return c.fingerprint == theirs.fingerprint; };
        const auto mine = std::find_if(corpora_.begin(), corpora_.end(), same_corpus);
        if (mine == corpora_.end()) {
            for (const CorpusShards& c : corpora_)
                if (c.path == theirs.path && c.num_shards > 1 && c.num_shards == theirs.num_shards)
                    fail_input(theirs.sources.front(),
                               fmt::format("its shards of {} and those of {} ({}) were cut from different contents: "
                                           "the corpus changed between its shards' runs (run every shard on one "
                                           "version)",
                                           corpus_name(theirs), c.sources.front(), corpus_name(c)));
            corpora_.push_back(theirs);
            continue;
        }
        if (mine->num_sequences != theirs.num_sequences)
            fail_input(theirs.sources.front(),
                       fmt::format("counts {} sequences in {}, {} counts {}", theirs.num_sequences, corpus_name(theirs),
                                   mine->sources.front(), mine->num_sequences));
        if (mine->num_shards != theirs.num_shards)
            fail_input(theirs.sources.front(),
                       fmt::format("splits {} into {} shards, {} into {}: shards of different splits overlap",
                                   corpus_name(theirs), theirs.num_shards, mine->sources.front(), mine->num_shards));
        for (size_t k = 0; k < theirs.shards.size(); ++k) {
            const int64_t shard = theirs.shards[k];
            const auto at = std::lower_bound(mine->shards.begin(), mine->shards.end(), shard);
            const auto index = at - mine->shards.begin();
            if (at != mine->shards.end() && *at == shard)
                fail_input(theirs.sources[k], fmt::format("shard {}/{} of {} is already merged from {}: the same shard "
                                                          "twice would count its sequences twice",
                                                          shard, theirs.num_shards, theirs.path,
                                                          mine->sources[static_cast<size_t>(index)]));
            mine->shards.insert(at, shard);
            mine->sources.insert(mine->sources.begin() + index, theirs.sources[k]);
        }
    }
}

std::string CorpusCoverage::missing() const {
    std::string text;
    for (const CorpusShards& c : corpora_) {
        if (c.complete()) continue;
        std::vector<int64_t> absent;
        for (int64_t shard = 0, k = 0; shard < c.num_shards; ++shard) {
            if (k < static_cast<int64_t>(c.shards.size()) && c.shards[static_cast<size_t>(k)] == shard)
                ++k;
            else
                absent.push_back(shard);
        }
        text += fmt::format("{}{}: shard{}{} of {}{} missing ({} of {} shards, {} of {} sequences)",
                            text.empty() ? "" : "; ", c.path, absent.size() > 1 ? "s " : " ", shard_list(absent),
                            c.num_shards, absent.size() > 1 ? " are" : " is", c.shards.size(), c.num_shards,
                            c.sequences_covered(), c.num_sequences);
    }
    return text;
}

nlohmann::json corpora_json(const CorpusCoverage& coverage) {
    nlohmann::json corpora = nlohmann::json::array();
    for (const CorpusShards& c : coverage.corpora())
        corpora.push_back({{"path", c.path},
                           {"fingerprint", fingerprint_text(c.fingerprint)},
                           {"num_sequences", c.num_sequences},
                           {"num_shards", c.num_shards},
                           {"shards", c.shards}});
    return corpora;
}

std::string CorpusCoverage::summary() const {
    std::string text;
    for (const CorpusShards& c : corpora_) {
        const std::string sequences = c.complete() ? fmt::to_string(c.num_sequences)
                                                   : fmt::format("{} of {}", c.sequences_covered(), c.num_sequences);
        text += fmt::format("{}{} of {} shards of {}, {} sequences", text.empty() ? "" : "; ", c.shards.size(),
                            c.num_shards, c.path, sequences);
    }
    return text;
}

}  // namespace attn_viz
