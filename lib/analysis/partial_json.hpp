// The pieces of JSON that partial-result files share (the corpus partials of corpus_stats.hpp,
// attn-viz/partial@1, and the compare partials of compare_corpus.hpp, attn-viz/compare-partial@1):
// running moments, fingerprints, thresholds and corpus coverage, each read back with validation
// (Error bad_input naming `where`) before anything is allocated from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_coverage.hpp"
#include "corpus_stats.hpp"
#include "head_labels.hpp"

namespace attn_viz {

inline constexpr const char* fingerprint_hash = "xxh3-64";  // how "fingerprints" were computed (core/fingerprint.hpp)
inline constexpr int64_t max_partial_heads = 4096;          // layers x heads accepted from a file
inline constexpr int64_t max_partial_sequences = int64_t(1) << 50;

// Moments as three parallel arrays {"count", "mean", "m2"}; doubles are written by nlohmann::json
// in their shortest form that reads back to the same bits, so a save/load round trip is exact.
nlohmann::json moments_json(const std::vector<RunningMoments>& moments);
// `expected` moments, each count in [0, max_count], mean and m2 finite, m2 >= 0.
std::vector<RunningMoments> read_moments(const nlohmann::json& block, size_t expected, int64_t max_count,
                                         const std::string& where);

// object[name], refused when `object` is not an object holding it.
const nlohmann::json& member(const nlohmann::json& object, const char* name, const std::string& where);
// object[name] as a whole number in [low, high].
int64_t whole_number(const nlohmann::json& object, const char* name, int64_t low, int64_t high,
                     const std::string& where);
// Refuses (Error bad_input naming `where`) an analysis's block of a partial whose "num_layers" x
// "num_heads" are not the partial's `layers` x `heads`.
void check_block_layout(const nlohmann::json& block, int64_t layers, int64_t heads, const std::string& where);
// A fingerprint written as 16 hex digits; `what` names it in the error.
uint64_t fingerprint_value(const nlohmann::json& text, const std::string& what, const std::string& where);

// {name: value} of every threshold, and back (a partial of an earlier version may lack the ones
// added since: they keep their defaults).
nlohmann::json thresholds_json(const LabelThresholds& thresholds);
LabelThresholds read_thresholds(const nlohmann::json& block, const std::string& where);

// A partial file's JSON (Error bad_input naming `path` when it is not JSON); the caller checks its
// "format" and reads it.
nlohmann::json read_partial_file(const std::string& path);

// The "corpora" list (corpora_json) of a result of num_sequences sequences.
CorpusCoverage read_coverage(const nlohmann::json& corpora, int64_t num_sequences, const std::string& where);

}  // namespace attn_viz
