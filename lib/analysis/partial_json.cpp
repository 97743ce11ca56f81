#include "partial_json.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "error.hpp"
#include "fingerprint.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"

namespace attn_viz {
namespace {

constexpr size_t max_partial_corpora = 65536;
// The thresholds of the first release of the partial format; those added since may be absent.
constexpr int first_release_thresholds = 9;

// `value` (named `what` in messages: "mean[3]") as a finite number, at least 0 with
// `non_negative`; Error(bad_input) quoting the value otherwise.
double finite_number(const nlohmann::json& value, bool non_negative, const std::string& where,
                     const std::string& what) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || (non_negative && value.get<double>() < 0))
        fail_input(where, fmt::format("{} is {}, expected a finite number{}", what, json_excerpt(value),
                                      non_negative ? " >= 0" : ""));
    return value.get<double>();
}

}  // namespace

// Moments as three parallel arrays; doubles are written by nlohmann::json in their shortest form
// that reads back to the same bits, so a save/load round trip is exact.
nlohmann::json moments_json(const std::vector<RunningMoments>& moments) {
    nlohmann::json count = nlohmann::json::array(), mean = nlohmann::json::array(), m2 = nlohmann::json::array();
    for (const RunningMoments& r : moments) count.push_back(r.count), mean.push_back(r.mean), m2.push_back(r.m2);
    return {{"count", std::move(count)}, {"mean", std::move(mean)}, {"m2", std::move(m2)}};
}

const nlohmann::json& member(const nlohmann::json& object, const char* name, const std::string& where) {
    if (!object.is_object() || !object.contains(name)) fail_input(where, fmt::format("missing \"{}\"", name));
    return object.at(name);
}

int64_t whole_number(const nlohmann::json& object, const char* name, int64_t low, int64_t high,
                     const std::string& where) {
    return json_integer_in(member(object, name, where), low, high, where, fmt::format("\"{}\"", name));
}

void check_block_layout(const nlohmann::json& block, int64_t layers, int64_t heads, const std::string& where) {
    if (whole_number(block, "num_layers", 1, max_partial_heads, where) != layers ||
        whole_number(block, "num_heads", 1, max_partial_heads, where) != heads)
        fail_input(where, "its layers x heads differ from the partial's");
}

std::vector<RunningMoments> read_moments(const nlohmann::json& block, size_t expected, int64_t max_count,
                                         const std::string& where) {
    const nlohmann::json& count = member(block, "count", where);
    const nlohmann::json& mean = member(block, "mean", where);
    const nlohmann::json& m2 = member(block, "m2", where);
    for (const nlohmann::json* array : {&count, &mean, &m2})
        if (!array->is_array() || array->size() != expected)
            fail_input(where, fmt::format("expected arrays of {} numbers", expected));
    std::vector<RunningMoments> moments(expected);
    for (size_t k = 0; k < expected; ++k)
        moments[k] = {json_integer_in(count[k], 0, max_count, where, fmt::format("count[{}]", k)),
                      finite_number(mean[k], false, where, fmt::format("mean[{}]", k)),
                      finite_number(m2[k], true, where, fmt::format("m2[{}]", k))};
    return moments;
}

uint64_t fingerprint_value(const nlohmann::json& text, const std::string& what, const std::string& where) {
    const std::optional<uint64_t> value =
        text.is_string() ? parse_fingerprint_text(text.get<std::string>()) : std::nullopt;
    if (!value) fail_input(where, fmt::format("{} is not a fingerprint of 16 hex digits", what));
    return *value;
}

nlohmann::json thresholds_json(const LabelThresholds& thresholds) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, field] : threshold_fields()) j[name] = thresholds.*field;
    return j;
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
            fail_input(where, fmt::format("\"thresholds\" lacks \"{}\"", name));
        }
        const nlohmann::json& v = block.at(name);
        const std::string what = fmt::format("threshold \"{}\"", name);
        const double x = finite_number(v, false, where, what);
        if (std::string_view(name) == "top_pairs" && (x < 0 || x != std::floor(x)))
            fail_input(where, fmt::format("{} is {}, expected a whole number >= 0", what, json_excerpt(v)));
        thresholds.*field = x;
    }
    return thresholds;
}

CorpusCoverage read_coverage(const nlohmann::json& corpora, int64_t num_sequences, const std::string& where) {
    if (!corpora.is_array() || corpora.empty() || corpora.size() > max_partial_corpora)
        fail_input(where, fmt::format("\"corpora\" must be a list of 1 to {} corpora", max_partial_corpora));
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
                shard.get<int64_t>() >= c.num_sequences ||
                (!c.shards.empty() && shard.get<int64_t>() <= c.shards.back()))
                fail_input(where, fmt::format("a corpus's \"shards\" must be ascending whole numbers below num_shards "
                                              "and num_sequences ({} and {}): {} is not",
                                              c.num_shards, c.num_sequences, json_excerpt(shard)));
            c.shards.push_back(shard.get<int64_t>());
        }
        c.sources.assign(c.shards.size(), where);
        coverage.merge(CorpusCoverage(std::move(c)));
    }
    if (coverage.sequences_covered() > num_sequences)
        fail_input(where, fmt::format("its \"corpora\" cover {} sequences, more than its {}",
                                      coverage.sequences_covered(), num_sequences));
    return coverage;
}

nlohmann::json read_partial_file(const std::string& path) {
    const MappedFile file(path, "partial result");
    return parse_json_text(file.text(), path, "not valid JSON");
}

}  // namespace attn_viz
