// Corpus mode's mean maps (corpus_mean_maps.hpp) against a double-precision reference written
// here: the attention by offset and the aligned mean maps, their merge and their partial.
#include <cmath>
#include <map>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "corpus_mean_maps.hpp"
#include "error.hpp"
#include "expect_error.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;
using test_support::expect_error;

namespace {

// One sequence: `L` random layers of H heads over T tokens.
std::vector<LayerResult> random_sequence(int64_t L, int64_t H, int64_t T, bool causal) {
    std::vector<LayerResult> layers;
    for (int64_t l = 0; l < L; ++l) layers.push_back(random_layer({H, T, T, 4, causal, 0.0}));
    return layers;
}

std::vector<const LayerResult*> pointers(const std::vector<LayerResult>& layers) {
    std::vector<const LayerResult*> p;
    for (const LayerResult& r : layers) p.push_back(&r);
    return p;
}

// The reference: per head n, the mass at offset d over every row of every sequence, and the rows.
struct OffsetReference {
    std::map<std::pair<int64_t, int64_t>, double> mass;  // (n, d) -> sum
    int64_t rows = 0;
    void add(const std::vector<LayerResult>& layers) {
        const int64_t H = layers[0].attention.dim(0), T = layers[0].visibility.queries;
        for (size_t l = 0; l < layers.size(); ++l)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t i = 0; i < T; ++i)
                    for (int64_t j = 0; j < T; ++j)
                        mass[{static_cast<int64_t>(l) * H + h, i - j}] +=
                            static_cast<double>(layers[l].attention.data[static_cast<size_t>((h * T + i) * T + j)]);
        rows += T;
    }
    double at(int64_t n, int64_t d) const {
        const auto it = mass.find({n, d});
        return it == mass.end() ? 0.0 : it->second / static_cast<double>(rows);
    }
};

void check_profile(const CorpusMeanMaps& maps, const OffsetReference& want, int64_t N) {
    const std::vector<double> got = maps.offset_profile();
    const int64_t K = maps.max_offset() - maps.min_offset() + 1;
    REQUIRE(got.size() == static_cast<size_t>(N * K));
    for (int64_t n = 0; n < N; ++n) {
        double row = 0;
        for (int64_t d = maps.min_offset(); d <= maps.max_offset(); ++d) {
            const double g = got[static_cast<size_t>(n * K + d - maps.min_offset())];
            CHECK(g == doctest::Approx(want.at(n, d)).epsilon(1e-12));
            row += g;
        }
        CHECK(row == doctest::Approx(1.0).epsilon(1e-6));  // every row's weights sum to 1
    }
}

}  // namespace

TEST_CASE("corpus mean maps: the attention by offset of sequences of several lengths (T = 1 too) is the reference's") {
    for (const bool causal : {true, false}) {
        INFO("causal " << causal);
        const int64_t L = 2, H = 3;
        CorpusMeanMaps maps, first_half, second_half;
        OffsetReference want;
        const std::vector<int64_t> lengths = {5, 1, 7, 3, 7};
        for (size_t s = 0; s < lengths.size(); ++s) {
            const std::vector<LayerResult> layers = random_sequence(L, H, lengths[s], causal);
            maps.add(pointers(layers));
            (s < 2 ? first_half : second_half).add(pointers(layers));
            want.add(layers);
        }
        CHECK(!maps.aligned());
        CHECK(maps.max_length() == 7);
        CHECK(maps.min_offset() == (causal ? 0 : -6));
        CHECK(maps.max_offset() == 6);
        check_profile(maps, want, L * H);

        // Two halves merged, and a partial's round trip, hold the same sums.
        first_half.merge(second_half, "second");
        CHECK(first_half.num_sequences() == 5);
        check_profile(first_half, want, L * H);
        const CorpusMeanMaps loaded = CorpusMeanMaps::from_partial_json(maps.partial_json(), L, H, causal, 5, "p.json");
        CHECK(loaded.offset_profile() == maps.offset_profile());
        CHECK(!loaded.aligned());
    }
}

TEST_CASE(
    "corpus mean maps: sequences of one length keep the mean map, equal to the reference, through merge and partial") {
    for (const int64_t T : {1, 6}) {
        INFO("T " << T);
        const int64_t L = 2, H = 1;
        CorpusMeanMaps maps(false), a, b;
        std::vector<std::vector<LayerResult>> sequences;
        for (int s = 0; s < 4; ++s) {
            sequences.push_back(random_sequence(L, H, T, true));
            maps.add(pointers(sequences.back()));
            (s % 2 ? a : b).add(pointers(sequences.back()));
        }
        REQUIRE(maps.aligned());
        CHECK(maps.aligned_length() == T);
        CHECK(!maps.layer_folders());
        const Tensor mean = maps.aligned_mean();
        REQUIRE(mean.shape == std::vector<int64_t>{L, H, T, T});
        for (int64_t l = 0; l < L; ++l)
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < T; ++j) {
                    double want = 0;
                    for (const auto& s : sequences)
                        want += s[static_cast<size_t>(l)].attention.data[static_cast<size_t>(i * T + j)];
                    CHECK(mean.data[static_cast<size_t>((l * T + i) * T + j)] ==
                          doctest::Approx(want / 4).epsilon(1e-6));
                }
        a.merge(b, "b");
        REQUIRE(a.aligned());
        const Tensor merged = a.aligned_mean();
        for (size_t k = 0; k < mean.data.size(); ++k)
            CHECK(merged.data[k] == doctest::Approx(mean.data[k]).epsilon(1e-6));
        const CorpusMeanMaps loaded = CorpusMeanMaps::from_partial_json(maps.partial_json(), L, H, true, 4, "p.json");
        REQUIRE(loaded.aligned());
        CHECK(loaded.aligned_mean().data == mean.data);
        CHECK(!loaded.layer_folders());

        // One sequence of another length, added or merged, leaves the offsets only.
        CorpusMeanMaps longer;
        const std::vector<LayerResult> other = random_sequence(L, H, T + 2, true);
        longer.add(pointers(other));
        a.merge(longer, "longer");
        CHECK(!a.aligned());
        CHECK(a.max_length() == T + 2);
        maps.add(pointers(other));
        CHECK(!maps.aligned());
        CHECK(maps.offset_profile() == a.offset_profile());
    }
}

TEST_CASE("corpus mean maps: maps past max_aligned_cells keep the offsets only; a bad partial is refused by name") {
    CorpusMeanMaps maps;
    // 1 layer x 1 head x T x T just past the cap.
    const int64_t T = static_cast<int64_t>(std::sqrt(static_cast<double>(CorpusMeanMaps::max_aligned_cells))) + 1;
    std::vector<LayerResult> big = random_sequence(1, 1, T, true);
    maps.add(pointers(big));
    CHECK(!maps.aligned());
    CHECK(maps.max_length() == T);

    CorpusMeanMaps small;
    const std::vector<LayerResult> layers = random_sequence(1, 2, 3, false);
    small.add(pointers(layers));
    const nlohmann::json good = small.partial_json();
    nlohmann::json bad = good;
    bad["offset_sums"][0] = -1.0;
    expect_error(ErrorKind::bad_input, [&] { CorpusMeanMaps::from_partial_json(bad, 1, 2, false, 1, "p.json"); },
                 {"p.json mean_maps: offset_sums[0] is -1"});
    bad = good;
    bad["aligned_sums"].erase(0);
    expect_error(ErrorKind::bad_input, [&] { CorpusMeanMaps::from_partial_json(bad, 1, 2, false, 1, "p.json"); },
                 {"\"aligned_sums\" must be an array of 18 numbers"});
    expect_error(ErrorKind::bad_input, [&] { CorpusMeanMaps::from_partial_json(good, 1, 2, false, 2, "p.json"); },
                 {"\"sequences\""});
    CorpusMeanMaps other_layout;
    const std::vector<LayerResult> three_heads = random_sequence(1, 3, 3, false);
    other_layout.add(pointers(three_heads));
    expect_error(ErrorKind::bad_input, [&] { small.merge(other_layout, "q.json"); },
                 {"q.json: its mean maps are of another layout"});
}
