// Head ablation over a corpus (corpus_ablation.hpp): each measure's moments against a
// double-precision reference written here, merged halves, the partial's round trip and what a
// merge refuses.
#include <cmath>

#include <doctest/doctest.h>

#include "corpus_ablation.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "support.hpp"

using namespace attn_viz;
using test_support::expect_error;

namespace {

// One sequence's report of `heads` with random measures (a T = 1 sequence has no loss: NaN).
AblationReport random_report(const std::vector<AblatedHead>& heads, AblationMode mode, bool one_token) {
    std::normal_distribution<double> normal(0.0, 1.0);
    AblationReport r;
    r.mode = mode;
    r.clean_loss = one_token ? NAN : 3 + normal(test_support::rng());
    for (const AblatedHead& id : heads) {
        const double delta = one_token ? NAN : normal(test_support::rng());
        r.heads.push_back({id, r.clean_loss + delta, delta, std::fabs(normal(test_support::rng()))});
    }
    return r;
}

// Mean and population std of the defined (non-NaN) values, in double.
std::pair<double, double> reference_moments(const std::vector<double>& values) {
    double sum = 0, count = 0;
    for (double v : values)
        if (!std::isnan(v)) sum += v, ++count;
    const double mean = sum / count;
    double squares = 0;
    for (double v : values)
        if (!std::isnan(v)) squares += (v - mean) * (v - mean);
    return {mean, std::sqrt(squares / count)};
}

}  // namespace

TEST_CASE("corpus ablation: every measure's mean and std over the sequences are the reference's, merged or loaded") {
    const std::vector<AblatedHead> heads = {{1, 0}, {0, 2}, {0, 0}};
    CorpusAblation all(2, 3, AblationMode::mean, heads), first(2, 3, AblationMode::mean, heads),
        second(2, 3, AblationMode::mean, heads);
    std::vector<AblationReport> reports;
    for (int s = 0; s < 7; ++s) {
        reports.push_back(random_report(heads, AblationMode::mean, s == 3));
        all.add(reports.back());
        (s < 4 ? first : second).add(reports.back());
    }
    first.merge(second, "second.json");
    const CorpusAblation loaded = CorpusAblation::from_partial_json(all.partial_json(), 2, 3, "p.json");
    const std::vector<AblationMeasure>& measures = ablation_measures();
    for (const CorpusAblation* a : std::vector<const CorpusAblation*>{&all, &first, &loaded}) {
        CHECK(a->sequences() == 7);
        CHECK(a->ablated() == heads);
        CHECK(a->mode() == AblationMode::mean);
        for (size_t k = 0; k < heads.size(); ++k)
            for (size_t m = 0; m < measures.size(); ++m) {
                std::vector<double> values;
                for (const AblationReport& r : reports) values.push_back(r.heads[k].*measures[m].member);
                const auto [mean, std] = reference_moments(values);
                CAPTURE(measures[m].name);
                CHECK(a->moments(k, m).mean_or_nan() == doctest::Approx(mean).epsilon(1e-12));
                CHECK(a->moments(k, m).population_std() == doctest::Approx(std).epsilon(1e-9));
                // The one-token sequence has no loss: 6 sequences count for the losses, 7 for KL.
                CHECK(a->moments(k, m).count == (std::string(measures[m].name) == "kl" ? 7 : 6));
            }
        std::vector<double> clean;
        for (const AblationReport& r : reports) clean.push_back(r.clean_loss);
        CHECK(a->clean_loss().mean_or_nan() == doctest::Approx(reference_moments(clean).first).epsilon(1e-12));
    }
    // The round trip is exact.
    CHECK(loaded.partial_json() == all.partial_json());
}

TEST_CASE(
    "corpus ablation: merge refuses another mode, other heads or layout; a partial of other measures is refused") {
    const std::vector<AblatedHead> heads = {{0, 1}};
    CorpusAblation zero(1, 2, AblationMode::zero, heads);
    zero.add(random_report(heads, AblationMode::zero, false));
    CorpusAblation mean(1, 2, AblationMode::mean, heads);
    expect_error(ErrorKind::bad_input, [&] { zero.merge(mean, "m.json"); },
                 {"m.json: ablates heads by mean, the corpus so far by zero"});
    CorpusAblation other(1, 2, AblationMode::zero, {{0, 0}});
    expect_error(ErrorKind::bad_input, [&] { zero.merge(other, "o.json"); },
                 {"o.json: ablates the heads L0H0, the corpus so far L0H1"});
    CorpusAblation wider(1, 3, AblationMode::zero, heads);
    expect_error(ErrorKind::bad_input, [&] { zero.merge(wider, "w.json"); }, {"another layout"});
    expect_error(ErrorKind::internal, [&] { zero.add(random_report({{0, 0}}, AblationMode::zero, false)); }, {});

    nlohmann::json partial = zero.partial_json();
    partial["measures"].push_back("cosine");
    expect_error(ErrorKind::bad_input, [&] { CorpusAblation::from_partial_json(partial, 1, 2, "p.json"); },
                 {"p.json ablation: \"measures\" must be this version's"});
    partial = zero.partial_json();
    partial["heads"] = {"L3H0"};
    expect_error(ErrorKind::bad_input, [&] { CorpusAblation::from_partial_json(partial, 1, 2, "p.json"); },
                 {"p.json ablation: "});
    expect_error(ErrorKind::bad_input, [&] { CorpusAblation::from_partial_json(zero.partial_json(), 2, 2, "p.json"); },
                 {"layers x heads differ"});
}
