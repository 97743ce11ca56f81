// The terminal table of an analysis: per-head statistics, redundant groups, a legend of the
// columns and the findings in words (see stats_report.hpp).
#include <fmt/format.h>

#include "findings.hpp"
#include "short_number.hpp"
#include "stats_report.hpp"

namespace attn_viz {

namespace {

// One row: the three leading columns, then the statistics' columns (the same for the header).
constexpr const char* row_format =
    "{:>5} {:>4} {:<15} {:>7} {:>6} {:>6} {:>7} {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} {:>7} {:>6} {:>6}\n";

// What each column means, printed under the table (docs/analysis.md#terminal-table).
constexpr const char* legend =
    "columns: entropy = attention entropy (nats); norm = entropy / ln(visible keys); conf = largest weight;\n"
    "  dist = mean |query - key| distance; prev/next/self/first = weight on the previous/next/same/first token;\n"
    "  keys90 = keys holding 90% of the weight; margin = top-1 minus top-2 score; share = the head's share of the\n"
    "  layer output (not an ablation effect: see the model ablation); dup = weight on earlier copies of the token;\n"
    "  induct = weight on the tokens after earlier copies (both leave out the first token).\n"
    "  Each is a mean over query rows; - = undefined (docs/metrics.md).\n";

// One row of the table: the three leading columns, then the statistics of s.
std::string table_row(const std::string& layer, const std::string& head, const std::string& label, const HeadStats& s) {
    return fmt::format(row_format, layer, head, label, short_number(s.entropy, "{:.3f}"),
                       short_number(s.normalized_entropy, "{:.3f}"), short_number(s.confidence, "{:.3f}"),
                       short_number(s.mean_distance, "{:.2f}"), short_number(s.previous_token_mass, "{:.3f}"),
                       short_number(s.next_token_mass, "{:.3f}"), short_number(s.self_mass, "{:.3f}"),
                       short_number(s.first_token_mass, "{:.3f}"), short_number(s.keys_for_90, "{:.2f}"),
                       short_number(s.logit_margin, "{:.2f}"), short_number(s.ablation_importance, "{:.3f}"),
                       short_number(s.duplicate_token, "{:.3f}"), short_number(s.induction, "{:.3f}"));
}

}  // namespace

std::string stats_table(const ModelAnalysis& a) {
    const bool corpus = !a.heads_std.empty();
    const bool guessed = too_short_to_label(a);
    std::string out;
    if (corpus)
        out += fmt::format(
            "means over {} sequences; the std line under each head is the standard deviation over the sequences\n",
            a.num_sequences);
    out += fmt::format(row_format, "layer", "head", "label", "entropy", "norm", "conf", "dist", "prev", "next", "self",
                       "first", "keys90", "margin", "share", "dup", "induct");
    for (size_t n = 0; n < a.heads.size(); ++n) {
        // On inputs too short to tell, a label is a guess: "sink?".
        out += table_row(fmt::to_string(a.head_ids[n].layer), fmt::to_string(a.head_ids[n].head),
                         fmt::format("{}{}", a.labels[n], guessed ? "?" : ""), a.heads[n]);
        if (corpus) out += table_row("", "", "  std", a.heads_std[n]);
    }
    for (const auto& group : a.redundant_groups) {
        out += fmt::format("{}{}:", group_claim(a, group), guessed ? " (a guess)" : "");
        for (int64_t index : group) (out += ' ') += head_tag(a.head_ids[static_cast<size_t>(index)]);
        out += "\n";
    }
    out += legend;
    out += findings_text(find_findings(a));
    return out;
}

}  // namespace attn_viz
