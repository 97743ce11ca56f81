// CorpusAccumulator's partial-result files ("attn-viz/partial@1"): writing, and reading with
// validation of every field against the declared layout before anything is allocated from it.
#include <algorithm>
#include <cmath>
#include <optional>

#include "corpus_stats.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "fingerprint.hpp"
#include "json_input.hpp"
#include "json_text.hpp"
#include "mapped_file.hpp"

namespace attn_viz {

namespace {

constexpr int64_t max_partial_heads = 4096;  // layers x heads accepted from a file
constexpr const char* fingerprint_hash = "xxh3-64";  // how "fingerprints" were computed (core/fingerprint.hpp)
constexpr int64_t max_partial_sequences = int64_t(1) << 50;
constexpr size_t max_partial_corpora = 65536;
// What partials of earlier versions hold: the first statistics, matrices and thresholds of ours.
// Those added since are read as never recorded (count 0) or, for thresholds, as their defaults.
constexpr int first_release_statistics = 14, first_release_matrices = 6, first_release_thresholds = 9;

// Moments as three parallel arrays; doubles are written by nlohmann::json in their shortest form
// that reads back to the same bits, so a save/load round trip is exact.
nlohmann::json moments_json(const std::vector<RunningMoments>& moments) {
    nlohmann::json count = nlohmann::json::array(), mean = nlohmann::json::array(), m2 = nlohmann::json::array();
    for (const RunningMoments& r : moments) count.push_back(r.count), mean.push_back(r.mean), m2.push_back(r.m2);
    return {{"count", std::move(count)}, {"mean", std::move(mean)}, {"m2", std::move(m2)}};
}

const nlohmann::json& member(const nlohmann::json& object, const char* name, const std::string& where) {
    if (!object.is_object() || !object.contains(name)) fail_input(where, std::string("missing \"") + name + "\"");
    return object.at(name);
}

int64_t whole_number(const nlohmann::json& object, const char* name, int64_t low, int64_t high, const std::string& where) {
    const nlohmann::json& v = member(object, name, where);
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high)
        fail_input(where, std::string("\"") + name + "\" must be a whole number in [" + std::to_string(low) + ", " +
                              std::to_string(high) + "]");
    return v.get<int64_t>();
}

std::vector<RunningMoments> read_moments(const nlohmann::json& block, size_t expected, int64_t max_count,
                                         const std::string& where) {
    const nlohmann::json& count = member(block, "count", where);
    const nlohmann::json& mean = member(block, "mean", where);
    const nlohmann::json& m2 = member(block, "m2", where);
    for (const nlohmann::json* array : {&count, &mean, &m2})
        if (!array->is_array() || array->size() != expected)
            fail_input(where, "expected arrays of " + std::to_string(expected) + " numbers");
    std::vector<RunningMoments> moments(expected);
    for (size_t k = 0; k < expected; ++k) {
        const nlohmann::json &c = count[k], &m = mean[k], &s = m2[k];
        if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > max_count)
            fail_input(where, "count " + std::to_string(k) + " is not a whole number in [0, num_sequences]");
        if (!m.is_number() || !s.is_number() || !std::isfinite(m.get<double>()) || !std::isfinite(s.get<double>()) ||
            s.get<double>() < 0)
            fail_input(where, "mean/m2 " + std::to_string(k) + " is not a finite number (m2 >= 0)");
        moments[k] = {c.get<int64_t>(), m.get<double>(), s.get<double>()};
    }
    return moments;
}

uint64_t fingerprint_value(const nlohmann::json& text, const std::string& what, const std::string& where) {
    const std::optional<uint64_t> value = text.is_string() ? parse_fingerprint_text(text.get<std::string>()) : std::nullopt;
    if (!value) fail_input(where, what + " is not a fingerprint of 16 hex digits");
    return *value;
}

LabelThresholds read_thresholds(const nlohmann::json& block, const std::string& where) {
    const auto fields = threshold_fields();
    if (!block.is_object() || block.size() > fields.size() || block.size() < size_t(first_release_thresholds))
        fail_input(where, "\"thresholds\" must hold exactly this version's thresholds");
    LabelThresholds thresholds;
    for (size_t k = 0; k < fields.size(); ++k) {
        const auto& [name, field] = fields[k];
        if (!block.contains(name)) {
            if (k >= size_t(first_release_thresholds)) continue;  // an earlier version's partial
            fail_input(where, std::string("\"thresholds\" lacks \"") + name + "\"");
        }
        const nlohmann::json& v = block.at(name);
        const double x = v.is_number() ? v.get<double>() : NAN;
        const bool whole = std::string_view(name) != "top_pairs" || (x >= 0 && x == std::floor(x));
        if (!std::isfinite(x) || !whole)
            fail_input(where, std::string("threshold \"") + name + "\" is not a finite number (top_pairs: a whole number >= 0)");
        thresholds.*field = x;
    }
    return thresholds;
}

CorpusCoverage read_coverage(const nlohmann::json& corpora, int64_t num_sequences, const std::string& where) {
    if (!corpora.is_array() || corpora.empty() || corpora.size() > max_partial_corpora)
        fail_input(where, "\"corpora\" must be a list of 1 to " + std::to_string(max_partial_corpora) + " corpora");
    CorpusCoverage coverage;
    for (const nlohmann::json& entry : corpora) {
        CorpusShards c;
        const nlohmann::json& path = member(entry, "path", where);
        if (!path.is_string()) fail_input(where, "a corpus \"path\" must be a string");
        c.path = path.get<std::string>();
        c.fingerprint = fingerprint_value(member(entry, "fingerprint", where), "a corpus \"fingerprint\"", where);
        c.num_sequences = whole_number(entry, "num_sequences", 1, max_partial_sequences, where);
        c.num_shards = whole_number(entry, "num_shards", 1, max_corpus_shards, where);
        const nlohmann::json& shards = member(entry, "shards", where);
        if (!shards.is_array() || shards.empty() || static_cast<int64_t>(shards.size()) > c.num_shards)
            fail_input(where, "a corpus's \"shards\" must list 1 to num_shards shards");
        for (const nlohmann::json& shard : shards) {
            // Every shard a run covers held a sequence: I < min(N, num_sequences).
            if (!shard.is_number_integer() || shard.get<int64_t>() < 0 || shard.get<int64_t>() >= c.num_shards ||
                shard.get<int64_t>() >= c.num_sequences || (!c.shards.empty() && shard.get<int64_t>() <= c.shards.back()))
                fail_input(where, "a corpus's \"shards\" must be ascending whole numbers below num_shards and num_sequences");
            c.shards.push_back(shard.get<int64_t>());
        }
        c.sources.assign(c.shards.size(), where);
        coverage.merge(CorpusCoverage(std::move(c)));
    }
    if (coverage.sequences_covered() > num_sequences)
        fail_input(where, "its \"corpora\" cover " + std::to_string(coverage.sequences_covered()) + " sequences, more than its " +
                              std::to_string(num_sequences));
    return coverage;
}

}  // namespace

nlohmann::json CorpusAccumulator::partial_json() const {
    nlohmann::json j = {{"format", partial_format},        {"num_layers", num_layers_},
                        {"num_heads", num_heads_},         {"causal", causal_},
                        {"num_sequences", num_sequences_}, {"total_queries", total_queries_},
                        {"max_queries", max_queries_},     {"max_keys", max_keys_}};
    nlohmann::json statistics = nlohmann::json::array();
    for (const HeadStatField& f : head_stat_fields()) statistics.push_back(f.name);
    j["statistics"] = std::move(statistics);  // the order of each head's block in "heads"
    j["heads"] = moments_json(heads_);
    nlohmann::json matrices = nlohmann::json::object();
    for (int m = 0; m < pair_metric_count; ++m) matrices[pair_metric_name(static_cast<PairMetric>(m))] = moments_json(matrices_[m]);
    j["matrices"] = std::move(matrices);
    if (thresholds_) {
        nlohmann::json thresholds = nlohmann::json::object();
        for (const auto& [name, field] : threshold_fields()) thresholds[name] = (*thresholds_).*field;
        j["thresholds"] = std::move(thresholds);
    }
    if (weights_fingerprint_) {
        nlohmann::json sequences = nlohmann::json::array();
        for (const CountedSequence& s : sorted_sequences()) sequences.push_back(fingerprint_text(s.fingerprint));
        j["fingerprints"] = {{"hash", fingerprint_hash},
                             {"weights", fingerprint_text(*weights_fingerprint_)},
                             {"sequences", std::move(sequences)}};
    }
    if (!coverage_.empty()) j["corpora"] = corpora_json(coverage_);
    return j;
}

CorpusAccumulator CorpusAccumulator::from_partial_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || !j.contains("format") || j["format"] != partial_format)
        fail_input(where, std::string("not a partial result (\"format\" must be \"") + partial_format + "\")");
    CorpusAccumulator acc;
    acc.sources_ = {where};
    acc.num_layers_ = whole_number(j, "num_layers", 1, max_partial_heads, where);
    acc.num_heads_ = whole_number(j, "num_heads", 1, max_partial_heads, where);
    const int64_t N = acc.num_layers_ * acc.num_heads_;
    if (N > max_partial_heads) fail_input(where, "more than " + std::to_string(max_partial_heads) + " heads in all");
    const nlohmann::json& causal = member(j, "causal", where);
    if (!causal.is_boolean()) fail_input(where, "\"causal\" must be true or false");
    acc.causal_ = causal.get<bool>();
    acc.num_sequences_ = whole_number(j, "num_sequences", 1, max_partial_sequences, where);
    acc.total_queries_ = whole_number(j, "total_queries", 0, max_partial_sequences, where);
    acc.max_queries_ = whole_number(j, "max_queries", 0, max_partial_sequences, where);
    acc.max_keys_ = whole_number(j, "max_keys", 0, max_partial_sequences, where);
    // The statistics' names must be ours, in our order, or the first ones of them (an earlier
    // version's partial); a file from another version is refused.
    const nlohmann::json& statistics = member(j, "statistics", where);
    const int64_t listed = statistics.is_array() ? static_cast<int64_t>(statistics.size()) : 0;
    bool same_statistics = listed >= first_release_statistics && listed <= head_stat_count;
    for (int64_t s = 0; same_statistics && s < listed; ++s) same_statistics = statistics[s] == head_stat_fields()[s].name;
    if (!same_statistics) fail_input(where, "\"statistics\" does not list this version's per-head statistics");
    const std::vector<RunningMoments> listed_moments =
        read_moments(member(j, "heads", where), static_cast<size_t>(N * listed), acc.num_sequences_, where + " heads");
    acc.heads_.assign(static_cast<size_t>(N * head_stat_count), {});
    for (int64_t n = 0; n < N; ++n)
        std::copy_n(listed_moments.begin() + n * listed, listed, acc.heads_.begin() + n * head_stat_count);
    const nlohmann::json& matrices = member(j, "matrices", where);
    for (int m = 0; m < pair_metric_count; ++m) {
        const char* name = pair_metric_name(static_cast<PairMetric>(m));
        if (m >= first_release_matrices && matrices.is_object() && !matrices.contains(name)) {
            acc.matrices_[m].assign(static_cast<size_t>(N * N), {});  // an earlier version's partial
            continue;
        }
        acc.matrices_[m] = read_moments(member(matrices, name, where), static_cast<size_t>(N * N), acc.num_sequences_,
                                        where + " " + name);
    }
    // Added after the first release of the format: absent from the partials of earlier versions.
    if (j.contains("thresholds")) acc.thresholds_ = read_thresholds(j["thresholds"], where);
    if (j.contains("fingerprints")) {
        const nlohmann::json& fingerprints = j["fingerprints"];
        if (member(fingerprints, "hash", where) != fingerprint_hash)
            fail_input(where, std::string("\"fingerprints\" must use the hash \"") + fingerprint_hash + "\"");
        acc.weights_fingerprint_ = fingerprint_value(member(fingerprints, "weights", where), "\"weights\"", where);
        const nlohmann::json& sequences = member(fingerprints, "sequences", where);
        if (!sequences.is_array() || static_cast<int64_t>(sequences.size()) > acc.num_sequences_)
            fail_input(where, "\"sequences\" must be a list of at most num_sequences fingerprints");
        acc.sequences_.reserve(sequences.size());
        for (size_t k = 0; k < sequences.size(); ++k)
            acc.sequences_.push_back({fingerprint_value(sequences[k], "sequence " + std::to_string(k), where), 0});
    }
    if (j.contains("corpora")) acc.coverage_ = read_coverage(j["corpora"], acc.num_sequences_, where);
    return acc;
}

void CorpusAccumulator::save_partial(const std::string& path) const {
    if (heads_.empty()) throw Error(ErrorKind::internal, path + ": no sequence was accumulated");
    write_file_atomically(path, dump_json(partial_json()) + "\n");
}

CorpusAccumulator CorpusAccumulator::load_partial(const std::string& path) {
    const MappedFile file(path, "partial result");
    return from_partial_json(parse_json_text(file.text(), path, "not valid JSON"), path);
}

}  // namespace attn_viz
