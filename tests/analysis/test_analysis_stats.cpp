// Per-head statistics and labels against plain double-precision references.
#include <algorithm>
#include <cmath>
#include <tuple>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "head_labels.hpp"
#include "head_stats.hpp"
#include "token_role.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;
using test_support::expect_error;

namespace {

// The reference: every statistic straight from its definition in docs/metrics.md, in double,
// with a full sort for keys_for_90 and the detection patterns D built as T x T matrices.
HeadStats reference_stats(const LayerResult& r, int64_t h, const std::vector<int64_t>& tokens,
                          const std::vector<TokenRole>& roles = {}) {
    const Visibility& v = r.visibility;
    const int64_t H = r.attention.dim(0), T = v.queries, S = v.keys;
    auto a = [&](int64_t i, int64_t j) { return static_cast<double>(r.attention.data[(h * T + i) * S + j]); };
    struct Avg {
        double sum = 0;
        int n = 0;
        void add(double x) { sum += x, ++n; }
        double get() const { return n ? sum / n : NAN; }
    } entropy, normalized, confidence, distance, prev, next, self, first, keys90, margin, contribution, dup, ind;
    Avg role_mass[4];  // cls, sep, last sep, punctuation
    int64_t last_sep = -1;
    for (size_t j = 0; j < roles.size(); ++j)
        if (roles[j] == TokenRole::separator) last_sep = int64_t(j);
    for (int64_t i = 0; i < T; ++i) {
        int64_t seen = 0;
        for (int64_t j = 0; j < S; ++j) seen += v.visible(i, j);
        if (!seen) continue;
        double e = 0, mx = 0, dist = 0;
        std::vector<double> row;
        for (int64_t j = 0; j < S; ++j) {
            if (a(i, j) > 0) e -= a(i, j) * std::log(a(i, j));
            mx = std::max(mx, a(i, j));
            dist += a(i, j) * std::abs(double(i - j));
            row.push_back(a(i, j));
        }
        entropy.add(e);
        normalized.add(seen > 1 ? e / std::log(double(seen)) : 0.0);
        confidence.add(mx);
        distance.add(dist);
        std::sort(row.rbegin(), row.rend());
        double total = 0, cumulative = 0;
        for (double x : row) total += x;
        int count = 0;
        for (double x : row) {
            if (cumulative >= 0.9 * total) break;
            cumulative += x, ++count;
        }
        keys90.add(count);
        if (i >= 1 && v.visible(i, i - 1)) prev.add(a(i, i - 1));
        if (i + 1 < S && v.visible(i, i + 1)) next.add(a(i, i + 1));
        if (i < S && v.visible(i, i)) self.add(a(i, i));
        if (v.visible(i, 0)) first.add(a(i, 0));
        margin.add(r.logit_margin.data[h * T + i]);
        contribution.add(r.contribution_norms.data[h * T + i]);
        if (!roles.empty()) {
            double mass[4] = {};
            bool sees[4] = {};
            for (int64_t j = 0; j < S; ++j) {
                if (!v.visible(i, j)) continue;
                const TokenRole role = roles[size_t(j)];
                const int kind = role == TokenRole::start         ? 0
                                 : role == TokenRole::separator   ? 1
                                 : role == TokenRole::punctuation ? 3
                                                                  : -1;
                if (kind >= 0) mass[kind] += a(i, j), sees[kind] = true;
                if (j == last_sep) mass[2] += a(i, j), sees[2] = true;
            }
            for (int k = 0; k < 4; ++k)
                if (sees[k]) role_mass[k].add(mass[k]);
        }
        if (tokens.empty()) continue;
        double dup_mass = 0, ind_mass = 0;
        bool dup_target = false, ind_target = false;
        for (int64_t j = 0; j < S; ++j) {
            if (!v.visible(i, j)) continue;
            if (j >= 1 && j < i && tokens[j] == tokens[i])
                dup_mass += a(i, j), dup_target = true;  // key 0 is never a target
            if (j >= 1 && j <= i && tokens[j - 1] == tokens[i]) ind_mass += a(i, j), ind_target = true;
        }
        if (dup_target) dup.add(dup_mass);
        if (ind_target) ind.add(ind_mass);
    }
    double out_norm = 0;
    for (float x : r.output.data) out_norm += double(x) * x;
    HeadStats s;
    s.entropy = entropy.get();
    s.normalized_entropy = normalized.get();
    s.confidence = confidence.get();
    s.mean_distance = distance.get();
    s.previous_token_mass = prev.get();
    s.next_token_mass = next.get();
    s.self_mass = self.get();
    s.first_token_mass = first.get();
    s.keys_for_90 = keys90.get();
    s.logit_margin = margin.get();
    s.contribution = contribution.get();
    s.ablation_importance = std::sqrt(double(r.contribution_gram.data[h * H + h])) / std::sqrt(out_norm);
    s.duplicate_token = tokens.empty() ? NAN : dup.get();
    s.induction = tokens.empty() ? NAN : ind.get();
    s.cls_mass = role_mass[0].get();
    s.sep_mass = role_mass[1].get();
    s.last_sep_mass = role_mass[2].get();
    s.punctuation_mass = role_mass[3].get();
    return s;
}

void check_close(const HeadStats& got, const HeadStats& want) {
    for (const HeadStatField& f : head_stat_fields()) {
        const double g = got.*f.member, w = want.*f.member;
        INFO(std::string(f.name) << ": got " << g << ", want " << w);
        CHECK(std::isnan(g) == std::isnan(w));
        if (std::isnan(w)) continue;
        CHECK(std::abs(g - w) <= 2e-5 * std::max(1.0, std::abs(w)));
    }
}

// Roles drawn at random, each of the four alike likely.
std::vector<TokenRole> random_roles(int64_t T) {
    std::vector<TokenRole> roles;
    for (int64_t token : random_tokens(T, 4)) roles.push_back(static_cast<TokenRole>(token));
    return roles;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("per-head statistics match a double reference over several shapes") {
    const std::vector<RandomLayerShape> shapes = {
        {1, 1, 1, 3, false, 0.0},     {3, 7, 7, 5, true, 0.0},      {4, 33, 33, 8, false, 0.2},
        {2, 19, 19, 4, true, 0.3},    {3, 5, 9, 6, false, 0.0},     {2, 40, 40, 3, false, 0.0},
        {3, 21, 21, 5, true, 0.0, 4}, {2, 30, 30, 4, true, 0.2, 3}, {2, 9, 9, 4, true, 0.0, 1},  // sliding windows
    };
    for (const RandomLayerShape& shape : shapes) {
        const LayerResult r = random_layer(shape);
        const bool self_attention = shape.queries == shape.keys;
        const std::vector<int64_t> tokens = self_attention ? random_tokens(shape.queries, 4) : std::vector<int64_t>{};
        const std::vector<TokenRole> roles = self_attention ? random_roles(shape.queries) : std::vector<TokenRole>{};
        for (int threads : {1, 3}) {
            const std::vector<HeadStats> stats = compute_head_stats(r, tokens, threads, roles);
            REQUIRE(stats.size() == size_t(shape.heads));
            for (int64_t h = 0; h < shape.heads; ++h) {
                INFO("H=" << shape.heads << " T=" << shape.queries << " S=" << shape.keys << " causal=" << shape.causal
                          << " head " << h << " threads " << threads);
                check_close(stats[h], reference_stats(r, h, tokens, roles));
            }
        }
    }
}

TEST_CASE("causal maps have no next-token statistic and cross-attention no token scores") {
    const LayerResult causal = random_layer({2, 9, 9, 4, true, 0.0});
    for (const HeadStats& s : compute_head_stats(causal, random_tokens(9, 3))) {
        CHECK(std::isnan(s.next_token_mass));
        CHECK(s.previous_token_mass > 0);
    }
    const LayerResult cross = random_layer({2, 4, 7, 4, false, 0.0});
    for (const HeadStats& s : compute_head_stats(cross)) {
        CHECK(std::isnan(s.duplicate_token));
        CHECK(std::isnan(s.induction));
        CHECK(s.entropy > 0);
    }
    CHECK_THROWS_AS(compute_head_stats(causal, random_tokens(5, 3)), Error);
}

TEST_CASE("special-token masses are undefined without roles, for a role no token has, and for cross-attention") {
    const LayerResult r = random_layer({2, 7, 7, 4, false, 0.0});
    for (const HeadStats& s : compute_head_stats(r, random_tokens(7, 3))) {
        CHECK(std::isnan(s.cls_mass));
        CHECK(std::isnan(s.sep_mass));
        CHECK(std::isnan(s.last_sep_mass));
        CHECK(std::isnan(s.punctuation_mass));
    }
    // [CLS] a b , c [SEP] d: one separator, so the last one's mass is all of it; a causal row 0
    // sees no separator and is left out of that mean, not counted as 0.
    using enum TokenRole;
    const std::vector<TokenRole> roles = {start, other, other, punctuation, other, separator, other};
    for (bool causal : {false, true}) {
        const LayerResult layer = random_layer({2, 7, 7, 4, causal, 0.0});
        for (int64_t h = 0; h < 2; ++h) {
            const HeadStats s = compute_head_stats(layer, {}, 1, roles)[size_t(h)];
            CHECK(s.sep_mass == doctest::Approx(s.last_sep_mass).epsilon(1e-12));
            CHECK(s.cls_mass > 0);
            CHECK(s.punctuation_mass > 0);
            check_close(s, reference_stats(layer, h, {}, roles));
        }
    }
    const HeadStats plain = compute_head_stats(r, {}, 1, std::vector<TokenRole>(7, other))[0];
    CHECK(std::isnan(plain.cls_mass));
    CHECK(std::isnan(plain.sep_mass));
    CHECK(std::isnan(plain.punctuation_mass));
    const LayerResult cross = random_layer({2, 4, 7, 4, false, 0.0});
    CHECK(std::isnan(compute_head_stats(cross, {}, 1, std::vector<TokenRole>(4, separator))[0].sep_mass));
    CHECK_THROWS_AS(compute_head_stats(r, {}, 1, std::vector<TokenRole>(5, separator)), Error);
    // T = 1, one head: the one key is [CLS], all of the mass.
    const LayerResult one = random_layer({1, 1, 1, 3, false, 0.0});
    CHECK(compute_head_stats(one, {}, 1, {start})[0].cls_mass == doctest::Approx(1.0));
}

TEST_CASE("an encoder's labels are Clark et al.'s; a decoder's are unchanged") {
    HeadStats s = compute_head_stats(random_layer({1, 6, 6, 3, false, 0.0}))[0];
    LabelThresholds t;
    s.induction = NAN, s.previous_token_mass = 0.1, s.next_token_mass = 0.1, s.self_mass = 0.1;
    s.first_token_mass = 0.1, s.normalized_entropy = 0.3, s.mean_distance = 3.5;
    s.cls_mass = 0.1, s.sep_mass = 0.1, s.last_sep_mass = 0.05, s.punctuation_mass = 0.1;
    const LabelContext encoder{true};
    CHECK(label_head(s, t, encoder) == "mixed");
    const std::vector<std::tuple<double HeadStats::*, double, const char*>> steps = {
        {&HeadStats::mean_distance, 1.5, "local"},
        {&HeadStats::normalized_entropy, 0.9, "broad"},
        {&HeadStats::first_token_mass, 0.6, "sink"},
        {&HeadStats::cls_mass, 0.6, "[CLS]"},
        {&HeadStats::punctuation_mass, 0.45, "delimiter"},
        {&HeadStats::sep_mass, 0.55, "[SEP]"},
        {&HeadStats::self_mass, 0.6, "self"}};
    for (const auto& [member, value, label] : steps) {
        s.*member = value;
        CHECK(label_head(s, t, encoder) == label);
    }
    set_threshold(t, "self=0.7");
    CHECK(label_head(s, t, encoder) == "[SEP]");
    set_threshold(t, "sep=0.6");
    CHECK(label_head(s, t, encoder) == "delimiter");
    set_threshold(t, "delimiter=1.5");
    CHECK(label_head(s, t, encoder) == "[CLS]");
    CHECK(label_head(s, t) == "sink");  // a decoder's rules never read the special-token masses
    s.first_token_mass = 0.1, s.cls_mass = 0.1;
    CHECK(label_head(s, t) == "diffuse");
    CHECK(label_head(s, t, encoder) == "broad");
    set_threshold(t, "broad=0.95");
    CHECK(label_head(s, t, encoder) == "local");
    // A mixed encoder head's nearest pattern can be one of Clark's; a role no token has adds
    // nothing to the delimiter mass.
    const LabelThresholds defaults;
    s.self_mass = 0.1, s.normalized_entropy = 0.3, s.mean_distance = 3.5, s.sep_mass = 0.45, s.punctuation_mass = NAN;
    CHECK(label_head(s, defaults, encoder) == "mixed");
    CHECK(std::string(nearest_pattern(s, defaults, encoder).label) == "[SEP]");
    s.sep_mass = NAN, s.punctuation_mass = 0.55;
    CHECK(label_head(s, defaults, encoder) == "delimiter");
    s.punctuation_mass = NAN;
    CHECK(label_head(s, defaults, encoder) == "mixed");
    CHECK(std::string(nearest_pattern(s, defaults, encoder).label) != "delimiter");
}

TEST_CASE("labels follow the documented priority and thresholds are settable by name") {
    HeadStats s = compute_head_stats(random_layer({1, 6, 6, 3, false, 0.0}))[0];
    LabelThresholds t;
    s.induction = NAN, s.previous_token_mass = 0.1, s.next_token_mass = 0.1, s.self_mass = 0.1;
    s.first_token_mass = 0.1, s.normalized_entropy = 0.3, s.mean_distance = 3.5;
    CHECK(label_head(s, t) == "mixed");
    // Raising statistics one at a time, lowest priority first: each takes over the label.
    const std::vector<std::tuple<double HeadStats::*, double, const char*>> steps = {
        {&HeadStats::mean_distance, 1.5, "local"},        {&HeadStats::normalized_entropy, 0.9, "diffuse"},
        {&HeadStats::first_token_mass, 0.7, "sink"},      {&HeadStats::self_mass, 0.6, "self"},
        {&HeadStats::next_token_mass, 0.6, "next-token"}, {&HeadStats::previous_token_mass, 0.55, "previous-token"},
        {&HeadStats::induction, 0.45, "induction"}};
    for (const auto& [member, value, label] : steps) {
        s.*member = value;
        CHECK(label_head(s, t) == label);
    }
    set_threshold(t, "induction=0.5");
    CHECK(t.induction == 0.5);
    CHECK(label_head(s, t) == "previous-token");
    set_threshold(t, "previous_token=0.56");
    CHECK(label_head(s, t) == "next-token");
    for (const char* bad :
         {"nonsense=1", "induction", "induction=abc", "induction=nan", "top_pairs=-1", "top_pairs=1.5"}) {
        INFO(bad);
        expect_error(ErrorKind::usage, [&] { set_threshold(t, bad); }, {bad});
    }
}

}  // TEST_SUITE("analysis")
