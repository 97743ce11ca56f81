// Which shards of which corpora a corpus result covers: counting, merging (refusing a shard
// twice, other splits, a corpus changed between shards), gaps, and the "corpora" block of partial
// files, hostile ones included.
#include <cmath>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "corpus_fingerprint.hpp"
#include "corpus_stats.hpp"
#include "error.hpp"
#include "expect_error.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;

namespace {

// Shard I/N of a corpus of `sequences` (path "c.jsonl" unless given), as one run covers it.
CorpusCoverage shard_of(uint64_t fingerprint, int64_t sequences, int64_t I, int64_t N, const std::string& source,
                        const std::string& path = "c.jsonl") {
    return CorpusCoverage({path, fingerprint, sequences, N, {I}, {source}});
}

// An accumulator of `count` random sequences (one layer of two heads) covering `coverage`.
CorpusAccumulator random_partial(int count, CorpusCoverage coverage) {
    CorpusAccumulator acc;
    for (int n = 0; n < count; ++n) {
        const LayerResult r = random_layer({2, 5, 5, 3, true, 0.0});
        acc.add(analyze_layer(r, nullptr, random_tokens(5, 3), analysis_fixtures::default_options()),
                test_support::rng()());
    }
    acc.set_coverage(std::move(coverage));
    return acc;
}

void expect_refused(CorpusCoverage coverage, const CorpusCoverage& other, const std::vector<std::string>& fragments) {
    test_support::expect_error(
        attn_viz::ErrorKind::bad_input, [&] { coverage.merge(other); }, fragments);
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("shard I of N covers the sequences i < C with i mod N = I") {
    for (int trial = 0; trial < 20; ++trial) {
        const int64_t C = 1 + static_cast<int64_t>(test_support::rng()() % 50),
                      N = 1 + static_cast<int64_t>(test_support::rng()() % 12);
        CAPTURE(C);
        CAPTURE(N);
        int64_t total = 0;
        for (int64_t I = 0; I < N; ++I) {
            int64_t count = 0;
            for (int64_t i = 0; i < C; ++i) count += i % N == I;
            const CorpusShards shard{"c", 1, C, N, {I}, {"p"}};
            CHECK(shard.sequences_covered() == count);
            total += count;
        }
        CHECK(total == C);
    }
}

TEST_CASE("shards merge in any order into one corpus's coverage; what is missing is listed") {
    CorpusCoverage coverage = shard_of(7, 10, 3, 4, "p3.json");
    coverage.merge(shard_of(7, 10, 0, 4, "p0.json"));
    CHECK(coverage.missing() == "c.jsonl: shards 1, 2 of 4 are missing (2 of 4 shards, 5 of 10 sequences)");
    CHECK(coverage.summary() == "2 of 4 shards of c.jsonl, 5 of 10 sequences");
    coverage.merge(shard_of(7, 10, 2, 4, "p2.json"));
    CHECK(coverage.missing() == "c.jsonl: shard 1 of 4 is missing (3 of 4 shards, 7 of 10 sequences)");
    coverage.merge(shard_of(7, 10, 1, 4, "p1.json"));
    CHECK(coverage.missing().empty());
    CHECK(coverage.summary() == "4 of 4 shards of c.jsonl, 10 sequences");
    REQUIRE(coverage.corpora().size() == 1);
    CHECK(coverage.corpora()[0].shards == std::vector<int64_t>{0, 1, 2, 3});
    CHECK(coverage.corpora()[0].sources == std::vector<std::string>{"p0.json", "p1.json", "p2.json", "p3.json"});
    // Another corpus, whole: both are listed; the empty coverage adds nothing.
    coverage.merge(shard_of(9, 3, 0, 1, "d.json", "d.jsonl"));
    coverage.merge(CorpusCoverage());
    CHECK(coverage.summary() == "4 of 4 shards of c.jsonl, 10 sequences; 1 of 1 shards of d.jsonl, 3 sequences");
    CHECK(coverage.sequences_covered() == 13);
    const nlohmann::json corpora = corpora_json(coverage);
    CHECK(corpora[0]["fingerprint"] == "0000000000000007");
    CHECK(corpora[1]["shards"] == nlohmann::json({0}));
    // Many missing shards are summarised.
    CHECK(shard_of(7, 100, 0, 30, "p")
              .missing()
              .find("shards 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 19 more of 30 are missing") != std::string::npos);
}

TEST_CASE("merging refuses a shard twice, one corpus split two ways, and a corpus changed between its shards") {
    CorpusCoverage two = shard_of(7, 10, 0, 4, "p0.json");
    two.merge(shard_of(7, 10, 2, 4, "p2.json"));
    expect_refused(two, shard_of(7, 10, 2, 4, "again.json"),
                   {"again.json: shard 2/4 of c.jsonl is already merged from p2.json"});
    expect_refused(two, shard_of(7, 10, 1, 2, "half.json"),
                   {"half.json: splits c.jsonl", "into 2 shards, p0.json into 4"});
    expect_refused(two, shard_of(7, 11, 1, 4, "odd.json"), {"odd.json: counts 11 sequences", "p0.json counts 10"});
    expect_refused(two, shard_of(8, 10, 1, 4, "new.json"),
                   {"new.json: its shards of c.jsonl (fingerprint 0000000000000008)", "p0.json",
                    "changed between its shards' runs"});
    // Whole runs of different corpora under one name, or shards of differently named corpora: a union.
    CorpusCoverage whole = shard_of(7, 10, 0, 1, "a.json");
    whole.merge(shard_of(8, 12, 0, 1, "b.json"));
    CHECK(whole.corpora().size() == 2);
    two.merge(shard_of(8, 10, 1, 4, "other.json", "other.jsonl"));
    CHECK(two.missing().find("other.jsonl: shards 0, 2, 3 of 4 are missing") != std::string::npos);
}

TEST_CASE("partial files keep the coverage; merging accumulators merges and checks it") {
    test_support::ScratchDir dir;
    CorpusAccumulator a = random_partial(3, shard_of(0xfedcba9876543210, 6, 0, 2, "a"));
    a.save_partial(dir / "a.json");
    const CorpusAccumulator back = CorpusAccumulator::load_partial(dir / "a.json");
    CHECK(back.partial_json() == a.partial_json());
    CHECK(back.partial_json()["corpora"][0]["fingerprint"] == "fedcba9876543210");
    CHECK(back.coverage().corpora()[0].sources == std::vector<std::string>{dir / "a.json"});

    CorpusAccumulator merged;
    merged.merge(back, dir / "a.json");
    merged.merge(random_partial(3, shard_of(0xfedcba9876543210, 6, 1, 2, "b.json")), "b.json");
    CHECK(merged.coverage().missing().empty());
    CHECK(merged.num_sequences() == 6);
    test_support::expect_error(attn_viz::ErrorKind::bad_input, [&] { merged.merge(back, dir / "a.json"); },
                               {"a.json: shard 0/2", "already merged from"});
    CHECK(merged.num_sequences() == 6);  // a refused merge changes nothing
    // A partial without coverage (an earlier version) merges and adds none.
    merged.merge(random_partial(2, CorpusCoverage()), "old.json");
    CHECK(merged.num_sequences() == 8);
    CHECK(merged.coverage().sequences_covered() == 6);
}

TEST_CASE(
    "a corpus whose repeated lines fall in different shards merges to the single run; a shard counted twice is "
    "refused") {
    // Three distinct sequences; the corpus holds them as A B A C A B, so A falls in every shard of
    // three and B in two. Each sequence has its random maps and its own fingerprint.
    std::vector<ModelAnalysis> distinct;
    std::vector<uint64_t> fingerprints;
    for (int n = 0; n < 3; ++n) {
        const LayerResult r = random_layer({2, 4 + n, 4 + n, 3, true, 0.0});
        distinct.push_back(analyze_layer(r, nullptr, random_tokens(4 + n, 3), analysis_fixtures::default_options()));
        fingerprints.push_back(test_support::rng()());
    }
    const std::vector<int> corpus = {0, 1, 0, 2, 0, 1};
    const uint64_t corpus_fingerprint = test_support::rng()();
    const int64_t size = static_cast<int64_t>(corpus.size());
    // Shard I/N of the corpus as a run takes it, saved and read back as its partial file.
    const auto shard = [&](int64_t I, int64_t N, const std::string& path) {
        CorpusAccumulator run(11, LabelThresholds{});
        for (int64_t i = I; i < size; i += N) run.add_corpus_sequence(distinct[corpus[i]], fingerprints[corpus[i]], i);
        run.set_coverage(shard_of(corpus_fingerprint, size, I, N, "this run", path));
        return CorpusAccumulator::from_partial_json(run.partial_json(), "p" + std::to_string(I) + ".json");
    };
    const CorpusAccumulator single = shard(0, 1, "c.jsonl");
    CHECK(single.num_fingerprinted() == size);
    CorpusAccumulator merged;
    for (int64_t I : {2, 0, 1}) merged.merge(shard(I, 3, "c.jsonl"), "p" + std::to_string(I) + ".json");
    CHECK(merged.coverage().missing().empty());
    CHECK(merged.num_sequences() == size);
    const ModelAnalysis one = single.finish({}), parts = merged.finish({});
    for (size_t n = 0; n < one.heads.size(); ++n)
        for (const HeadStatField& f : head_stat_fields()) {
            const double x = one.heads[n].*f.member, y = parts.heads[n].*f.member;
            CHECK_MESSAGE((std::isnan(x) ? std::isnan(y) : std::fabs(x - y) <= 1e-12 * std::fabs(x) + 1e-15), f.name);
            const double sx = one.heads_std[n].*f.member, sy = parts.heads_std[n].*f.member;
            CHECK_MESSAGE((std::isnan(sx) ? std::isnan(sy) : std::fabs(sx - sy) <= 1e-9 * std::fabs(sx) + 1e-12),
                          f.name);
        }
    CHECK(one.labels == parts.labels);

    // The same shard twice: refused by its coverage (also from a copy of the corpus at another
    // path: the same fingerprint), and by its sequences' keys where no coverage says so.
    test_support::expect_error(attn_viz::ErrorKind::bad_input,
                               [&] { merged.merge(shard(1, 3, "c.jsonl"), "again.json"); },
                               {"shard 1/3 of c.jsonl is already merged"});
    CorpusAccumulator halves;
    halves.merge(shard(0, 2, "c.jsonl"), "p0.json");
    test_support::expect_error(attn_viz::ErrorKind::bad_input,
                               [&] { halves.merge(shard(0, 2, "copy.jsonl"), "copy.json"); },
                               {"shard 0/2 of copy.jsonl is already merged from p0.json"});
    nlohmann::json uncovered = shard(0, 2, "c.jsonl").partial_json();
    uncovered.erase("corpora");
    test_support::expect_error(
        attn_viz::ErrorKind::bad_input,
        [&] { halves.merge(CorpusAccumulator::from_partial_json(uncovered, "bare.json"), "bare.json"); },
        {"bare.json: 3 of its 3 sequences are already counted from p0.json"});
    // Shard 1/2, which repeats shard 0's lines at other positions, is welcome.
    halves.merge(shard(1, 2, "c.jsonl"), "p1.json");
    CHECK(halves.num_sequences() == size);
    // Keys tell corpus, position and sequence apart.
    CHECK(corpus_sequence_key(1, 2, 3) != corpus_sequence_key(9, 2, 3));
    CHECK(corpus_sequence_key(1, 2, 3) != corpus_sequence_key(1, 4, 3));
    CHECK(corpus_sequence_key(1, 2, 3) != corpus_sequence_key(1, 2, 5));
    CHECK(corpus_sequence_key(1, 2, 3) == corpus_sequence_key(1, 2, 3));
}

TEST_CASE("hostile \"corpora\" blocks in partial files are refused naming the file") {
    test_support::ScratchDir dir;
    const nlohmann::json good = random_partial(4, shard_of(5, 8, 1, 2, "p")).partial_json();
    const auto expect_bad = [&](const nlohmann::json& corpora, const std::string& fragment) {
        nlohmann::json j = good;
        j["corpora"] = corpora;
        test_support::write_text(dir / "bad.json", j.dump());
        test_support::expect_error(attn_viz::ErrorKind::bad_input,
                                   [&] { CorpusAccumulator::load_partial(dir / "bad.json"); }, {"bad.json", fragment});
    };
    const nlohmann::json entry = good["corpora"][0];
    CHECK(entry["shards"] == nlohmann::json({1}));
    expect_bad(entry, "list of 1 to");
    expect_bad(nlohmann::json::array(), "list of 1 to");
    const auto with = [&](const char* key, const nlohmann::json& value) {
        nlohmann::json e = entry;
        e[key] = value;
        return nlohmann::json::array({e});
    };
    expect_bad(with("path", 3), "\"path\"");
    expect_bad(with("fingerprint", "12345"), "fingerprint");
    expect_bad(with("fingerprint", "000000000000000G"), "fingerprint");
    expect_bad(with("num_sequences", 0), "num_sequences");
    expect_bad(with("num_shards", 0), "num_shards");
    expect_bad(with("num_shards", 2000000), "num_shards");
    expect_bad(with("shards", nlohmann::json::array()), "shards");
    expect_bad(with("shards", {1, 0}), "ascending");
    expect_bad(with("shards", {1, 1}), "ascending");
    expect_bad(with("shards", {2}), "below num_shards");
    expect_bad(with("shards", {"1"}), "ascending");
    nlohmann::json e = entry;
    e["num_shards"] = 20, e["shards"] = {12};  // shard 12 of a corpus of 8 holds no sequence
    expect_bad(nlohmann::json::array({e}), "below num_shards and num_sequences");
    e["num_shards"] = 1, e["shards"] = {0};  // covers 8 sequences, the partial holds 4
    expect_bad(nlohmann::json::array({e}), "cover 8 sequences, more than its 4");
    e = entry;
    expect_bad(nlohmann::json::array({e, e}), "already merged from");
    e.erase("num_shards");
    expect_bad(nlohmann::json::array({e}), "num_shards");
}

}  // TEST_SUITE("analysis")
