#include "head_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "error.hpp"
#include "fast_log.hpp"
#include "head_similarity.hpp"
#include "keys_for_mass.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

constexpr double undefined = std::numeric_limits<double>::quiet_NaN();
constexpr double mass_fraction = 0.9;  // keys_for_90 counts keys up to this share of a row's mass

// Sums over one attention row in 16 independent float lanes, so the compiler vectorizes the loop
// without reassociating a single accumulator.
struct RowSums {
    double entropy = 0;   // -sum a ln a
    double maximum = 0;   // max a
    double distance = 0;  // sum a |i - j|
    double mass = 0;      // sum a
};

// row: [S]; query: the row's index i.
[[gnu::target_clones("avx512f", "avx2", "default")]] RowSums sum_row(const float* row, int64_t keys, int64_t query) {
    constexpr int lanes = 16;
    // Key positions per lane, as floats (exact below 2^24): |i - j| written with a lane-invariant
    // offset kept the compiler from vectorizing the loop.
    const float position_of_query = static_cast<float>(query);
    float position[lanes];
    for (int l = 0; l < lanes; ++l) position[l] = static_cast<float>(l);
    float entropy[lanes] = {}, maximum[lanes] = {}, distance[lanes] = {}, mass[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            const float a = row[j + l];
            entropy[l] -= a * fast_ln(a);
            maximum[l] = std::max(maximum[l], a);
            distance[l] += a * std::fabs(position_of_query - position[l]);
            mass[l] += a;
            position[l] += lanes;
        }
    RowSums sums;
    for (; j < keys; ++j) {
        const float a = row[j];
        sums.entropy -= a * fast_ln(a);
        sums.maximum = std::max<double>(sums.maximum, a);
        sums.distance += static_cast<double>(a) * static_cast<double>(std::abs(query - j));
        sums.mass += a;
    }
    for (int l = 0; l < lanes; ++l) {
        sums.entropy += entropy[l];
        sums.maximum = std::max<double>(sums.maximum, maximum[l]);
        sums.distance += distance[l];
        sums.mass += mass[l];
    }
    return sums;
}

// For each query i, the earlier positions p < i holding the same token (CSR layout).
struct EarlierCopies {
    std::vector<int64_t> start;      // [T + 1]
    std::vector<int64_t> positions;  // concatenated lists
};

EarlierCopies find_earlier_copies(const std::vector<int64_t>& tokens) {
    EarlierCopies copies;
    std::unordered_map<int64_t, std::vector<int64_t>> seen;
    copies.start.push_back(0);
    for (size_t i = 0; i < tokens.size(); ++i) {
        std::vector<int64_t>& earlier = seen[tokens[i]];
        copies.positions.insert(copies.positions.end(), earlier.begin(), earlier.end());
        copies.start.push_back(static_cast<int64_t>(copies.positions.size()));
        earlier.push_back(static_cast<int64_t>(i));
    }
    return copies;
}

// A mean that is NaN when nothing was added.
struct Mean {
    double sum = 0;
    int64_t count = 0;
    void add(double x) { sum += x, ++count; }
    double value() const { return count > 0 ? sum / static_cast<double>(count) : undefined; }
};

// The key positions of each role of the special-token masses.
struct RoleKeys {
    std::vector<int64_t> start, separator, last_separator, punctuation;
};

RoleKeys role_keys(const std::vector<TokenRole>& roles) {
    RoleKeys keys;
    for (size_t j = 0; j < roles.size(); ++j) {
        const auto at = static_cast<int64_t>(j);
        if (roles[j] == TokenRole::start) keys.start.push_back(at);
        if (roles[j] == TokenRole::separator) keys.separator.push_back(at), keys.last_separator = {at};
        if (roles[j] == TokenRole::punctuation) keys.punctuation.push_back(at);
    }
    return keys;
}

// Checks the shapes compute_head_stats was given; returns the number of heads H.
int64_t checked_head_count(const LayerResult& r, const std::vector<int64_t>& tokens,
                           const std::vector<TokenRole>& roles) {
    const Visibility& vis = r.visibility;
    const int64_t H = r.attention.rank() == 3 ? r.attention.dim(0) : 0, T = vis.queries, S = vis.keys;
    if (H > 0 && (r.attention.dim(1) != T || r.attention.dim(2) != S))
        throw Error(ErrorKind::internal,
                    fmt::format("compute_head_stats: attention shape {} does not match the visibility's queries/keys",
                                shape_string(r.attention.shape)));
    if (!tokens.empty() && static_cast<int64_t>(tokens.size()) != T)
        fail_input("tokens", fmt::format("{} token ids for {} queries", tokens.size(), T));
    if (!roles.empty() && static_cast<int64_t>(roles.size()) != T)
        throw Error(ErrorKind::internal,
                    fmt::format("compute_head_stats: {} token roles for {} queries", roles.size(), T));
    return H;
}

// What every head's rows share: visible key counts, earlier copies of each token, the norm of
// the layer output, and which optional inputs the layer result holds.
struct SharedFacts {
    int64_t heads = 0;
    std::vector<int64_t> seen;  // [T] visible keys of each query
    bool token_scores = false;  // duplicate-token and induction scores: tokens given, self-attention
    EarlierCopies copies;       // when token_scores
    bool role_masses = false;   // the special-token masses: roles given, self-attention
    RoleKeys role_keys;         // when role_masses
    double output_norm = 0;     // ||output||_F
    bool with_margins = false, with_contributions = false;
};

SharedFacts shared_facts(const LayerResult& r, const std::vector<int64_t>& tokens, const std::vector<TokenRole>& roles,
                         int64_t H) {
    const Visibility& vis = r.visibility;
    const int64_t T = vis.queries, S = vis.keys;
    SharedFacts facts;
    facts.heads = H;
    facts.seen.resize(static_cast<size_t>(T));
    for (int64_t i = 0; i < T; ++i) facts.seen[static_cast<size_t>(i)] = vis.visible_count(i);
    facts.token_scores = !tokens.empty() && static_cast<int64_t>(tokens.size()) == T && S == T;
    if (facts.token_scores) facts.copies = find_earlier_copies(tokens);
    facts.role_masses = !roles.empty() && static_cast<int64_t>(roles.size()) == T && S == T;
    if (facts.role_masses) facts.role_keys = role_keys(roles);
    for (float x : r.output.data) facts.output_norm += static_cast<double>(x) * x;
    facts.output_norm = std::sqrt(facts.output_norm);
    facts.with_margins = r.logit_margin.size() == H * T;
    facts.with_contributions = r.contribution_norms.size() == H * T && r.contribution_gram.size() == H * H;
    return facts;
}

// One head's running means over its query rows (rows with no visible key are left out of all).
struct HeadMeans {
    Mean entropy, normalized, confidence, distance, previous, next, self, first, keys90, margin, contribution;
    Mean duplicate, induction;
    Mean start, separator, last_separator, punctuation;
    KeysForMass keys_for_mass;

    // row: [S] the weights of query i, which sees `visible` keys. One pass for the sums, then
    // the positional entries read directly. Keys past the diagonal of a causal map are zero:
    // the sums stop there. Cross attention has no positions in common: its distance, previous,
    // next and self means stay empty (undefined); the first key is still the first source token.
    void add_row(const float* row, int64_t i, int64_t visible, const Visibility& vis) {
        const int64_t S = vis.keys;
        const int64_t row_end = vis.causal ? std::min(S, i + 1) : S;
        const RowSums sums = sum_row(row, row_end, i);
        entropy.add(sums.entropy);
        normalized.add(visible > 1 ? sums.entropy / std::log(static_cast<double>(visible)) : 0.0);
        confidence.add(sums.maximum);
        if (vis.shared_positions) {
            distance.add(sums.distance);
            if (i >= 1 && i - 1 < S && vis.visible(i, i - 1)) previous.add(row[i - 1]);
            if (i + 1 < S && vis.visible(i, i + 1)) next.add(row[i + 1]);
            if (i < S && vis.visible(i, i)) self.add(row[i]);
        }
        if (vis.visible(i, 0)) first.add(row[0]);
        keys90.add(static_cast<double>(
            keys_for_mass.count(row, row_end, sums.mass, static_cast<float>(sums.maximum), mass_fraction)));
    }

    // Detection patterns (TransformerLens): duplicate D[i,p] for earlier copies p of token i,
    // induction D[i,p+1]; only rows with at least one visible target count. Key 0 (BOS, where
    // sink heads park their weight) is never a target, as TransformerLens's exclude_bos: a sink
    // head is not a duplicate-token head because the first token happens to repeat.
    void add_copies(const float* row, int64_t i, const EarlierCopies& copies, const Visibility& vis) {
        double duplicate_mass = 0, induction_mass = 0;
        bool duplicate_target = false, induction_target = false;
        for (int64_t n = copies.start[static_cast<size_t>(i)]; n < copies.start[static_cast<size_t>(i) + 1]; ++n) {
            const int64_t p = copies.positions[static_cast<size_t>(n)];
            if (p > 0 && vis.visible(i, p)) duplicate_mass += row[p], duplicate_target = true;
            if (vis.visible(i, p + 1)) induction_mass += row[p + 1], induction_target = true;  // p + 1 <= i
        }
        if (duplicate_target) duplicate.add(duplicate_mass);
        if (induction_target) induction.add(induction_mass);
    }

    // The mass of row i on each role's keys; a row that sees none of a role's keys is left out of its mean.
    void add_roles(const float* row, int64_t i, const RoleKeys& keys, const Visibility& vis) {
        const auto add_mass = [&](Mean& mean, const std::vector<int64_t>& positions) {
            double mass = 0;
            bool seen = false;
            for (int64_t j : positions)
                if (vis.visible(i, j)) mass += row[j], seen = true;
            if (seen) mean.add(mass);
        };
        add_mass(start, keys.start);
        add_mass(separator, keys.separator);
        add_mass(last_separator, keys.last_separator);
        add_mass(punctuation, keys.punctuation);
    }
};

// ||C_h||_F / ||output||_F = sqrt(gram[h,h]) / ||output||_F, NaN without contributions or output.
double ablation_importance(const LayerResult& r, int64_t h, const SharedFacts& facts) {
    if (!facts.with_contributions || !(facts.output_norm > 0)) return undefined;
    const float own_gram = r.contribution_gram.data[static_cast<size_t>(h * facts.heads + h)];
    return std::sqrt(std::max(0.0, static_cast<double>(own_gram))) / facts.output_norm;
}

// Head h's statistics: its means over its rows. r.attention: [H, T, S]; r.logit_margin and
// r.contribution_norms: [H, T] when facts say so.
HeadStats head_stats(const LayerResult& r, int64_t h, const SharedFacts& facts) {
    const Visibility& vis = r.visibility;
    const int64_t T = vis.queries, S = vis.keys;
    HeadMeans means;
    for (int64_t i = 0; i < T; ++i) {
        const int64_t visible = facts.seen[static_cast<size_t>(i)];
        if (visible == 0) continue;  // no visible key: left out of every mean
        const float* row = r.attention.ptr() + (h * T + i) * S;
        means.add_row(row, i, visible, vis);
        if (facts.with_margins) means.margin.add(r.logit_margin.data[static_cast<size_t>(h * T + i)]);
        if (facts.with_contributions) means.contribution.add(r.contribution_norms.data[static_cast<size_t>(h * T + i)]);
        if (facts.token_scores) means.add_copies(row, i, facts.copies, vis);
        if (facts.role_masses) means.add_roles(row, i, facts.role_keys, vis);
    }
    HeadStats s;
    s.entropy = means.entropy.value();
    s.normalized_entropy = means.normalized.value();
    s.confidence = means.confidence.value();
    s.mean_distance = means.distance.value();
    s.previous_token_mass = means.previous.value();
    s.next_token_mass = means.next.value();
    s.self_mass = means.self.value();
    s.first_token_mass = means.first.value();
    s.keys_for_90 = means.keys90.value();
    s.logit_margin = means.margin.value();
    s.contribution = means.contribution.value();
    s.ablation_importance = ablation_importance(r, h, facts);
    s.duplicate_token = means.duplicate.value();
    s.induction = means.induction.value();
    s.cls_mass = means.start.value();
    s.sep_mass = means.separator.value();
    s.last_sep_mass = means.last_separator.value();
    s.punctuation_mass = means.punctuation.value();
    return s;
}

}  // namespace

const std::array<HeadStatField, head_stat_count>& head_stat_fields() {
    static const std::array<HeadStatField, head_stat_count> fields = {{
        {"entropy", &HeadStats::entropy},
        {"normalized_entropy", &HeadStats::normalized_entropy},
        {"confidence", &HeadStats::confidence},
        {"mean_distance", &HeadStats::mean_distance},
        {"previous_token_mass", &HeadStats::previous_token_mass},
        {"next_token_mass", &HeadStats::next_token_mass},
        {"self_mass", &HeadStats::self_mass},
        {"first_token_mass", &HeadStats::first_token_mass},
        {"keys_for_90", &HeadStats::keys_for_90},
        {"logit_margin", &HeadStats::logit_margin},
        {"contribution", &HeadStats::contribution},
        {"ablation_importance", &HeadStats::ablation_importance},
        {"duplicate_token", &HeadStats::duplicate_token},
        {"induction", &HeadStats::induction},
        {"keys_needed", &HeadStats::keys_needed},
        {"window_needed", &HeadStats::window_needed},
        {"top1_mass_dropped", &HeadStats::top1_mass_dropped},
        {"top1_error", &HeadStats::top1_error},
        {"top1_mass_bound", &HeadStats::top1_mass_bound},
        {"top1_error_bound", &HeadStats::top1_error_bound},
        {"top1_bound_holds", &HeadStats::top1_bound_holds},
        {"cls_mass", &HeadStats::cls_mass},
        {"sep_mass", &HeadStats::sep_mass},
        {"last_sep_mass", &HeadStats::last_sep_mass},
        {"punctuation_mass", &HeadStats::punctuation_mass},
    }};
    return fields;
}

std::vector<HeadStats> compute_head_stats(const LayerResult& r, const std::vector<int64_t>& tokens, int threads,
                                          const std::vector<TokenRole>& roles) {
    // Step 1: check the shapes.
    const int64_t H = checked_head_count(r, tokens, roles);

    // Step 2: per-row facts shared by every head.
    const SharedFacts facts = shared_facts(r, tokens, roles, H);

    // Step 3: each head's means over its rows, heads in parallel.
    std::vector<HeadStats> stats(static_cast<size_t>(H));
    parallel_for(
        H, threads, [&](int64_t h) { stats[static_cast<size_t>(h)] = head_stats(r, h, facts); },
        r.attention.dim(1) * r.attention.dim(2));
    return stats;
}

}  // namespace attn_viz
