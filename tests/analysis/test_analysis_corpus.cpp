// Corpus aggregation (running moments, partial files, exact merge) and the report writers.
#include <cmath>
#include <sstream>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "corpus_fingerprint.hpp"
#include "corpus_stats.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "stats_report.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;

namespace {

// One random "model run": two layers of three heads sharing one visibility, random T.
ModelAnalysis random_run(int64_t T, const std::vector<const LayerWeights*>& weights) {
    LayerResult first = random_layer({3, T, T, 4, true, 0.0});
    LayerResult second = random_layer({3, T, T, 4, true, 0.0});
    const std::vector<const LayerResult*> pointers = {&first, &second};
    AnalysisOptions options = analysis_fixtures::default_options();
    options.sparse_error = true;
    return analyze_model(pointers, weights, random_tokens(T, 3), options);
}

LayerWeights random_layer_weights() {
    LayerWeights w;
    w.d_model = 6, w.num_heads = 3, w.num_kv_heads = 3, w.d_head = 2;
    w.w_q = test_support::random_tensor({6, 6});
    w.w_k = test_support::random_tensor({6, 6});
    w.w_v = test_support::random_tensor({6, 6});
    w.w_o = test_support::random_tensor({6, 6});
    return w;
}

bool close(double got, double want, double relative) {
    if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
    return std::abs(got - want) <= relative * std::max(1e-12, std::abs(want));
}

// Standard deviations: a value that is the same in every sequence has a spread of 0 in exact
// arithmetic, and of rounding (about 1e-16 of its mean) otherwise.
bool close_spread(double got, double want, double mean, double relative) {
    return close(got, want, relative) || (std::abs(got - want) <= 1e-13 * std::abs(mean));
}

std::vector<std::string> split(const std::string& line, char separator) {
    std::vector<std::string> fields;
    std::stringstream s(line);
    std::string field;
    while (std::getline(s, field, separator)) fields.push_back(field);
    if (!line.empty() && line.back() == separator) fields.push_back("");
    return fields;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("merging two halves of a corpus equals one pass, and both equal a two-pass reference") {
    const LayerWeights w0 = random_layer_weights(), w1 = random_layer_weights();
    std::vector<ModelAnalysis> runs;
    std::uniform_int_distribution<int64_t> length(1, 12);
    for (int n = 0; n < 40; ++n) runs.push_back(random_run(length(test_support::rng()), {&w0, &w1}));

    const uint64_t weights = test_support::rng()();
    CorpusAccumulator all(weights, {}), first_half(weights, {}), second_half(weights, {});
    for (int n = 0; n < 40; ++n) {
        const uint64_t sequence = test_support::rng()();
        all.add(runs[n], sequence);
        (n < 20 ? first_half : second_half).add(runs[n], sequence);
    }
    test_support::ScratchDir dir;
    first_half.save_partial(dir / "a.json");
    second_half.save_partial(dir / "b.json");
    CorpusAccumulator merged = CorpusAccumulator::load_partial(dir / "a.json");
    merged.merge(CorpusAccumulator::load_partial(dir / "b.json"), "b.json");
    CHECK(merged.num_sequences() == 40);
    CHECK(merged.num_fingerprinted() == 40);

    const ModelAnalysis one = all.finish(LabelThresholds{}), two = merged.finish(LabelThresholds{});
    REQUIRE(one.heads.size() == 6);
    for (size_t h = 0; h < 6; ++h)
        for (const HeadStatField& f : head_stat_fields()) {
            // Reference: plain mean and population std over the defined values.
            std::vector<double> values;
            for (const ModelAnalysis& run : runs)
                if (!std::isnan(run.heads[h].*f.member)) values.push_back(run.heads[h].*f.member);
            double mean = 0, variance = 0;
            for (double x : values) mean += x / double(values.size());
            for (double x : values) variance += (x - mean) * (x - mean) / double(values.size());
            INFO(std::string(f.name) << " head " << h);
            CHECK(close(two.heads[h].*f.member, one.heads[h].*f.member, 1e-9));
            CHECK(close_spread(two.heads_std[h].*f.member, one.heads_std[h].*f.member, mean, 1e-9));
            CHECK(close(one.heads[h].*f.member, values.empty() ? NAN : mean, 1e-9));
            CHECK(close_spread(one.heads_std[h].*f.member, values.empty() ? NAN : std::sqrt(variance), mean, 1e-6));
        }
    for (int m = 0; m < pair_metric_count; ++m)
        for (size_t k = 0; k < 36; ++k) {
            INFO(std::string(pair_metric_name(static_cast<PairMetric>(m))) << " entry " << k);
            CHECK(close(two.matrices[m].values[k], one.matrices[m].values[k], 1e-9));
            CHECK(close_spread(two.matrices_std[m].values[k], one.matrices_std[m].values[k], one.matrices[m].values[k],
                               1e-9));
        }
    CHECK(two.labels == one.labels);
    CHECK(two.total_queries == one.total_queries);
    // The corpus table says it holds means and shows each head's std on the line below it.
    const std::string table = stats_table(one);
    CHECK(table.rfind("means over 40 sequences", 0) == 0);
    std::stringstream lines(table);
    std::string line, previous;
    int std_lines = 0;
    while (std::getline(lines, line)) {
        if (line.compare(0, 17, std::string(13, ' ') + "std ") == 0) {
            ++std_lines;
            char entropy_std[16] = {};
            std::snprintf(entropy_std, sizeof entropy_std, "%.3f",
                          one.heads_std[static_cast<size_t>(std_lines - 1)].entropy);
            CHECK(line.find(entropy_std) != std::string::npos);
            CHECK(previous.find(one.labels[static_cast<size_t>(std_lines - 1)]) != std::string::npos);
        }
        previous = line;
    }
    CHECK(std_lines == 6);
}

TEST_CASE("a partial file round-trips exactly and the accumulator's size does not grow with count") {
    CorpusAccumulator acc(7, {});
    acc.add(random_run(5, {}), 100);
    const size_t after_one = acc.state_bytes();
    for (int n = 0; n < 30; ++n) acc.add(random_run(7, {}), 200 + n);
    CHECK(acc.state_bytes() == after_one);
    test_support::ScratchDir dir;
    acc.save_partial(dir / "p.json");
    const CorpusAccumulator back = CorpusAccumulator::load_partial(dir / "p.json");
    CHECK(back.partial_json() == acc.partial_json());
    CHECK(back.num_sequences() == 31);
}

TEST_CASE("a partial of an earlier version, without the newer statistics, matrices and thresholds, still merges") {
    CorpusAccumulator acc(7, {});
    acc.add(random_run(4, {}), 100);
    nlohmann::json old = acc.partial_json();
    const int64_t N = old["num_layers"].get<int64_t>() * old["num_heads"].get<int64_t>();
    constexpr int64_t old_statistics = 14;
    nlohmann::json heads = {
        {"count", nlohmann::json::array()}, {"mean", nlohmann::json::array()}, {"m2", nlohmann::json::array()}};
    for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < old_statistics; ++s)
            for (const char* part : {"count", "mean", "m2"})
                heads[part].push_back(old["heads"][part][n * head_stat_count + s]);
    old["heads"] = heads;
    old["statistics"].erase(old["statistics"].begin() + old_statistics, old["statistics"].end());
    for (const char* name : {"output_mi", "output_cka", "choice_mi"}) old["matrices"].erase(name);
    old["thresholds"].erase("sparse_tolerance");
    old["fingerprints"]["sequences"] = {"0000000000000001"};
    const CorpusAccumulator loaded = CorpusAccumulator::from_partial_json(old, "old.json");
    CorpusAccumulator merged = acc;
    merged.merge(loaded, "old.json");
    const ModelAnalysis a = merged.finish(LabelThresholds{});
    CHECK(a.num_sequences == 2);
    const ModelAnalysis just_new = acc.finish(LabelThresholds{});
    for (int64_t n = 0; n < N; ++n) {
        CHECK(a.heads[n].entropy == doctest::Approx(just_new.heads[n].entropy));  // the same sequence twice
        CHECK(a.heads[n].top1_error == just_new.heads[n].top1_error);             // only the new partial has it
        CHECK(a.heads_std[n].top1_error == 0.0);
    }
    CHECK(a.matrix(PairMetric::choice_mi).at(0, 1) == just_new.matrix(PairMetric::choice_mi).at(0, 1));
}

TEST_CASE("hostile partial files are refused with a message naming the file") {
    CorpusAccumulator acc(7, {});
    acc.add(random_run(4, {}), 100);
    const nlohmann::json good = acc.partial_json();
    test_support::ScratchDir dir;
    auto expect_bad = [&](const nlohmann::json& j, const std::string& fragment) {
        test_support::write_text(dir / "bad.json", j.dump());
        test_support::expect_error(ErrorKind::bad_input, [&] { CorpusAccumulator::load_partial(dir / "bad.json"); },
                                   {"bad.json", fragment});
    };
    nlohmann::json j = good;
    j["format"] = "attn-viz/stats@1";
    expect_bad(j, "format");
    j = good, j.erase("num_heads");
    expect_bad(j, "num_heads");
    j = good, j["num_layers"] = 100000;
    expect_bad(j, "\"num_layers\" is 100000, expected an integer in 1..");
    j = good, j["num_layers"] = 3;  // arrays no longer match the layout
    expect_bad(j, "arrays");
    // Each bad entry is quoted with its place: "count[0] is -1", never "count 0 is not a whole number".
    j = good, j["heads"]["count"][0] = -1;
    expect_bad(j, "count[0] is -1, expected an integer in 0..1");
    j = good, j["heads"]["count"][0] = 99;
    expect_bad(j, "count[0] is 99, expected an integer in 0..1");
    j = good, j["heads"]["mean"][2] = "x";
    expect_bad(j, "mean[2] is \"x\", expected a finite number");
    j = good, j["heads"]["m2"][2] = -1.0;
    expect_bad(j, "m2[2] is -1.0, expected a finite number >= 0");
    j = good, j["matrices"].erase("js_distance");
    expect_bad(j, "js_distance");
    j = good, j["statistics"][0] = "something_else";
    expect_bad(j, "statistics");
    j = good, j["causal"] = 1;
    expect_bad(j, "causal");
    j = good, j["fingerprints"]["hash"] = "fnv1a-64";
    expect_bad(j, "hash");
    j = good, j["fingerprints"]["weights"] = "12345";
    expect_bad(j, "16 hex digits");
    j = good, j["fingerprints"]["sequences"] = {"0000000000000001", "0000000000000002"};  // one sequence
    expect_bad(j, "at most num_sequences");
    j = good, j["fingerprints"]["sequences"][0] = 5;
    expect_bad(j, "sequence 0");
    j = good, j["fingerprints"].erase("weights");
    expect_bad(j, "weights");
    j = good, j["thresholds"].erase("sink");
    expect_bad(j, "thresholds");
    j = good, j["thresholds"]["induction"] = "high";
    expect_bad(j, "induction");
    j = good, j["thresholds"]["top_pairs"] = 2.5;
    expect_bad(j, "top_pairs");
    test_support::write_text(dir / "bad.json", "{\"format\": ");
    CHECK_THROWS_AS(CorpusAccumulator::load_partial(dir / "bad.json"), Error);
    // A different layout cannot be merged or added.
    LayerResult one_layer = random_layer({2, 4, 4, 3, true, 0.0});
    const ModelAnalysis other = analyze_layer(one_layer, nullptr, {}, analysis_fixtures::default_options());
    CHECK_THROWS_AS(acc.add(other, 101), Error);
    CorpusAccumulator different(7, {});
    different.add(other, 102);
    CHECK_THROWS_AS(acc.merge(different, "other.json"), Error);
}

TEST_CASE("merge refuses other layouts, weights and thresholds and repeated sequences, naming both sources") {
    auto partial = [](uint64_t weights, LabelThresholds thresholds, std::vector<uint64_t> sequences) {
        CorpusAccumulator acc(weights, thresholds);
        for (uint64_t s : sequences) acc.add(random_run(3, {}), s);
        return acc;
    };
    auto expect_refused = [](CorpusAccumulator& into, const CorpusAccumulator& other,
                             const std::vector<std::string>& fragments) {
        CHECK(test_support::expect_error(
                  ErrorKind::bad_input, [&] { into.merge(other, "second.json"); }, fragments)
                  .rfind("second.json: ", 0) == 0);
    };
    CorpusAccumulator merged;
    merged.merge(partial(5, {}, {30, 10, 20}), "first.json");
    CorpusAccumulator unchanged = merged;
    expect_refused(merged, partial(5, {}, {40, 20}),
                   {"1 of its 2 sequences are already counted from first.json", "0000000000000014"});
    expect_refused(merged, partial(6, {}, {40}),
                   {"other weights (fingerprint 0000000000000006) than first.json (0000000000000005)"});
    LabelThresholds sink;
    sink.sink = 0.75;
    expect_refused(merged, partial(5, sink, {40}), {"sink=0.75, first.json with sink=0.5"});
    LayerResult one_layer = random_layer({3, 4, 4, 4, true, 0.0});
    CorpusAccumulator other_layout(5, {});
    other_layout.add(analyze_layer(one_layer, nullptr, {}, analysis_fixtures::default_options()), 40);
    expect_refused(merged, other_layout, {"1 layers x 3 heads (causal) do not match first.json: 2 x 3 (causal)"});
    CHECK(merged.partial_json() == unchanged.partial_json());  // a refused merge changes nothing

    // Fine: new sequences of the same weights; later duplicates name the partial that brought them.
    merged.merge(partial(5, {}, {40, 50}), "second.json");
    CHECK(merged.num_sequences() == 5);
    expect_refused(merged, partial(5, {}, {60, 50}), {"already counted from second.json", "0000000000000032"});
    // The same sequence twice within one run counts twice (the corpus holds it twice).
    CHECK(partial(5, {}, {70, 70}).num_fingerprinted() == 2);
    // The fingerprints and thresholds survive a save and a load, sorted.
    const nlohmann::json saved = merged.partial_json();
    CHECK(saved["fingerprints"]["hash"] == "xxh3-64");
    CHECK(saved["fingerprints"]["weights"] == "0000000000000005");
    CHECK(saved["fingerprints"]["sequences"] ==
          nlohmann::json(
              {"000000000000000a", "0000000000000014", "000000000000001e", "0000000000000028", "0000000000000032"}));
    CHECK(saved["thresholds"]["sink"] == 0.5);
    CHECK(CorpusAccumulator::from_partial_json(saved, "again.json").partial_json() == saved);
    const CorpusAccumulator with_sink =
        CorpusAccumulator::from_partial_json(partial(5, sink, {1}).partial_json(), "s.json");
    CHECK(with_sink.thresholds().sink == 0.75);

    // A partial of an earlier version: nothing to check it against; its sequences have no fingerprint.
    nlohmann::json old = partial(5, {}, {10, 80}).partial_json();
    old.erase("fingerprints"), old.erase("thresholds");
    const CorpusAccumulator loaded_old = CorpusAccumulator::from_partial_json(old, "old.json");
    CHECK(loaded_old.num_fingerprinted() == 0);
    CHECK(loaded_old.thresholds().sink == LabelThresholds{}.sink);
    merged.merge(loaded_old, "old.json");
    CHECK(merged.num_sequences() == 7);
    CHECK(merged.num_fingerprinted() == 5);
    CHECK(!loaded_old.partial_json().contains("fingerprints"));
}

TEST_CASE("layer and sequence fingerprints change with any value, shape or option, and only with those") {
    const LayerWeights w = random_layer_weights();
    CHECK(layer_fingerprint(w) == layer_fingerprint(LayerWeights(w)));
    for (int change = 0; change < 6; ++change) {
        LayerWeights v = w;
        if (change == 0) v.w_k.data[5] = -v.w_k.data[5];
        if (change == 1) v.b_o = test_support::random_tensor({6});
        if (change == 2) v.causal = !v.causal;
        if (change == 3) v.rope = RopeStyle::half_split;
        if (change == 4) v.rope_base = 500000.0;
        if (change == 5) v.num_heads = 2, v.num_kv_heads = 2, v.d_head = 3;
        CHECK_MESSAGE(layer_fingerprint(v) != layer_fingerprint(w), "change " << change);
    }
    const Tensor x = test_support::random_tensor({4, 6});
    const uint64_t plain = sequence_fingerprint(x, {});
    CHECK(sequence_fingerprint(x, {0, 0, 0, 0}) == plain);  // no mask = nothing excluded
    CHECK(sequence_fingerprint(x, {0, 0, 1, 0}) != plain);
    Tensor y = x;
    y.data[23] = std::nextafter(y.data[23], 10.0f);
    CHECK(sequence_fingerprint(y, {}) != plain);
    y = x, y.shape = {2, 12};
    CHECK(sequence_fingerprint(y, {0, 0}) != plain);
}

TEST_CASE("stats.json, heads.csv, pairs.csv and the table carry every head and pair, never NaN") {
    for (int64_t T : {1, 6}) {
        const LayerWeights w0 = random_layer_weights(), w1 = random_layer_weights();
        const ModelAnalysis a = random_run(T, {&w0, &w1});
        const nlohmann::json j = stats_json(a);
        CHECK(j["format"] == "attn-viz/stats@1");
        CHECK(j["num_layers"] == 2);
        CHECK(j["num_heads"] == 3);
        CHECK(j["num_queries"] == T);
        CHECK(j["causal"] == true);
        REQUIRE(j["heads"].size() == 6);
        CHECK(j["heads"][4]["layer"] == 1);
        CHECK(j["heads"][4]["head"] == 1);
        CHECK(j["heads"][4]["label"] == a.labels[4]);
        for (const HeadStatField& f : head_stat_fields()) {
            CHECK(j["heads"][0].contains(f.name));
            if (std::isnan(a.heads[0].*f.member))
                CHECK(j["heads"][0][f.name].is_null());
            else
                CHECK(j["heads"][0][f.name].get<double>() == a.heads[0].*f.member);
        }
        CHECK(j["heads"][0]["next_token_mass"].is_null());  // causal: no visible next token
        for (int m = 0; m < pair_metric_count; ++m) {
            const auto& matrix = j[pair_metric_name(static_cast<PairMetric>(m))];
            REQUIRE(matrix.size() == 6);
            CHECK(matrix[5].size() == 6);
        }
        CHECK(j["thresholds"]["redundancy_js"] == LabelThresholds{}.redundancy_js);
        CHECK(j["redundant_pairs"].size() == 10);  // 15 pairs, top 10
        for (const auto& pair : j["redundant_pairs"]) {
            const bool alike = pair["js_distance"].get<double>() <= a.thresholds.redundancy_js;
            CHECK(pair["attend_alike"] == alike);
            CHECK(pair["same_layer"] == (pair["a"]["layer"] == pair["b"]["layer"]));
            // Redundant needs outputs shown alike, which only pairs within a layer have.
            if (pair["redundant"] == true) CHECK((alike && pair["same_layer"] == true && pair["both_sinks"] == false));
            if (pair["same_layer"] == false) CHECK(pair["redundant"] == false);
        }
        CHECK(j.dump().find("NaN") == std::string::npos);

        CHECK(nlohmann::json::parse(j.dump(2)) == j);  // what write_analysis_outputs writes reads back the same
        std::stringstream heads(heads_csv(a));
        std::string line;
        std::getline(heads, line);
        const auto header = split(line, ',');
        CHECK(header.size() == size_t(4 + head_stat_count));
        int rows = 0;
        while (std::getline(heads, line)) {
            const auto fields = split(line, ',');
            REQUIRE(fields.size() == header.size());
            CHECK(fields[3] == a.labels[rows]);
            const std::string& entropy = fields[4];
            CHECK(std::stod(entropy) == a.heads[rows].entropy);  // shortest round-trip text
            ++rows;
        }
        CHECK(rows == 6);
        std::stringstream pairs(pairs_csv(a));
        std::getline(pairs, line);
        CHECK(split(line, ',').size() == size_t(6 + pair_metric_count));
        rows = 0;
        while (std::getline(pairs, line)) ++rows;
        CHECK(rows == 15);
        const std::string table = stats_table(a);
        for (const std::string& label : a.labels) CHECK(table.find(label) != std::string::npos);
        const std::string rows_part = table.substr(0, table.find("columns: "));
        CHECK(std::count(rows_part.begin(), rows_part.end(), '\n') == 7 + static_cast<long>(a.redundant_groups.size()));
    }
}

}  // TEST_SUITE("analysis")
