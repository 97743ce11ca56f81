#include "model_analyses_summary.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "head_names.hpp"
#include "short_number.hpp"
#include "text_codecs.hpp"

namespace attn_viz {
namespace {

// The analyses in the order they are shown: stats.json key and heading.
struct Shown {
    const char* key;
    const char* heading;
};
constexpr Shown shown_analyses[] = {{"ablation", "Ablation"},
                                    {"logit_attribution", "Direct logit attribution"},
                                    {"activation_patching", "Activation patching"},
                                    {"composition", "Composition scores"},
                                    {"attention_rollout", "Attention rollout"},
                                    {"attention_flow", "Attention flow"},
                                    {"qk_attribution", "QK attribution"}};

// A number of a stats entry with `format` ("-" when null).
std::string number_text(const nlohmann::json& value, fmt::format_string<double> format) {
    return value.is_number() ? short_number(value.get<double>(), format) : "-";
}

// An entry's "findings", or for a list of entries (QK attribution's, one per head) each one's "finding".
std::vector<std::string> findings_of(const nlohmann::json& entry) {
    std::vector<std::string> findings;
    if (entry.is_array())
        for (const nlohmann::json& e : entry)
            if (e.is_object() && e.contains("finding") && e["finding"].is_string())
                findings.push_back(e["finding"].get<std::string>());
    if (entry.is_object() && entry.contains("findings") && entry["findings"].is_array())
        for (const nlohmann::json& f : entry["findings"])
            if (f.is_string()) findings.push_back(f.get<std::string>());
    return findings;
}

// entry[name], or over a corpus its mean: entry[name + "_mean"], or entry[name]["mean"].
const nlohmann::json& mean_value(const nlohmann::json& entry, const std::string& name) {
    static const nlohmann::json none;
    if (entry.contains(name)) return entry[name].is_object() ? mean_value(entry[name], "mean") : entry[name];
    return entry.contains(name + "_mean") ? entry[name + "_mean"] : none;
}

// A column of the "ablation" entry's table: its stats.json field, heading and format.
struct AblationColumn {
    const char* field;
    const char* heading;
    fmt::format_string<double> format;
    int width;  // of the terminal table's column
};

// A decoder's ablation is measured on the next-token loss; an encoder's ("measured_on":
// "final_hidden_states") on the final hidden states, and on a masked-LM head's loss when it has one.
bool on_hidden_states(const nlohmann::json& ablation) {
    return ablation.value("measured_on", "") == "final_hidden_states";
}

std::vector<AblationColumn> ablation_columns(const nlohmann::json& ablation) {
    if (!on_hidden_states(ablation))
        return {{"delta_loss", "delta loss", "{:+.4f}", 12}, {"kl", "KL (nats)", "{:.4f}", 10}};
    std::vector<AblationColumn> columns = {{"cosine_distance", "cosine distance", "{:.4g}", 15},
                                           {"relative_l2", "relative L2", "{:.4g}", 11}};
    if (ablation.contains("clean_mlm_loss")) columns.push_back({"delta_mlm_loss", "delta MLM loss", "{:+.4f}", 14});
    return columns;
}

// The first ablation_heads_shown ranked heads of the "ablation" entry: rank, head, then each of
// ablation_columns (their means over a corpus).
std::vector<std::vector<std::string>> ablation_rows(const nlohmann::json& ablation) {
    std::vector<std::vector<std::string>> rows;
    for (const nlohmann::json& h : ablation["heads"]) {
        if (rows.size() == ablation_heads_shown) break;
        std::vector<std::string> row = {fmt::to_string(h["rank"].get<int64_t>()),
                                        head_name(h["layer"].get<int64_t>(), h["head"].get<int64_t>())};
        for (const AblationColumn& column : ablation_columns(ablation))
            row.push_back(number_text(mean_value(h, column.field), column.format));
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string ablation_heading(const nlohmann::json& ablation) {
    const size_t count = ablation["heads"].size();
    const std::string measure =
        !on_hidden_states(ablation) ? fmt::format("clean next-token loss {} nats; the heads that change it most",
                                                  number_text(mean_value(ablation, "clean_loss"), "{:.4f}"))
        : ablation.contains("clean_mlm_loss")
            ? fmt::format("on the final hidden states, clean masked-LM loss {} nats; the heads that change them most",
                          number_text(ablation["clean_mlm_loss"], "{:.4f}"))
            : std::string("on the final hidden states; the heads that change them most");
    return fmt::format(
        "ablation ({}, {}{}): {}{}{}:", ablation["mode"].get<std::string>(), count, count == 1 ? " head" : " heads",
        measure,
        ablation.contains("sequences") ? fmt::format(" (means over {} sequences)", ablation["sequences"].get<int64_t>())
                                       : "",
        count > ablation_heads_shown ? fmt::format(" (first {}, all in ablation.csv)", ablation_heads_shown) : "");
}

// rank, head, and the headings of ablation_columns.
std::vector<std::string> ablation_headings(const nlohmann::json& ablation) {
    std::vector<std::string> headings = {"rank", "head"};
    for (const AblationColumn& column : ablation_columns(ablation)) headings.push_back(column.heading);
    return headings;
}

// A ranked table of an analysis for report.html: its caption, column names and rows.
struct AnalysisTable {
    std::string caption;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

// The first ablation_heads_shown heads of a ranked "heads" list: rank, head, then `fields`
// (stats.json names) printed with `format`.
std::vector<std::vector<std::string>> ranked_head_rows(const nlohmann::json& heads,
                                                       const std::vector<std::string>& fields,
                                                       fmt::format_string<double> format) {
    std::vector<std::vector<std::string>> rows;
    for (const nlohmann::json& h : heads) {
        if (rows.size() == ablation_heads_shown) break;
        std::vector<std::string> row = {fmt::to_string(h["rank"].get<int64_t>()),
                                        head_name(h["layer"].get<int64_t>(), h["head"].get<int64_t>())};
        for (const std::string& field : fields) row.push_back(number_text(h[field], format));
        rows.push_back(std::move(row));
    }
    return rows;
}

// The strongest pairs of each kind of the "composition" entry: kind, earlier head, later head, score.
std::vector<std::vector<std::string>> composition_rows(const nlohmann::json& composition) {
    std::vector<std::vector<std::string>> rows;
    for (const char* kind : {"q", "k", "v"}) {
        if (!composition.contains(kind)) continue;
        const nlohmann::json& top = composition[kind]["top"];
        for (size_t n = 0; n < top.size() && n < composition_pairs_shown; ++n)
            rows.push_back({std::string(1, static_cast<char>(kind[0] - 'a' + 'A')),
                            head_name(top[n]["earlier_layer"].get<int64_t>(), top[n]["earlier_head"].get<int64_t>()),
                            head_name(top[n]["later_layer"].get<int64_t>(), top[n]["later_head"].get<int64_t>()),
                            number_text(top[n]["score"], "{:.4f}")});
    }
    return rows;
}

// QK attribution's rows, one per head: the head, its query and key, its weight and score, and each
// side's largest component.
std::vector<std::vector<std::string>> qk_rows(const nlohmann::json& entries) {
    const auto largest = [](const nlohmann::json& totals) {
        const nlohmann::json* best = nullptr;
        for (const nlohmann::json& t : totals)
            if (!best || std::abs(t["total"].get<double>()) > std::abs((*best)["total"].get<double>())) best = &t;
        return best ? fmt::format("{} ({})", (*best)["component"].get<std::string>(),
                                  number_text((*best)["total"], "{:+.3f}"))
                    : std::string("-");
    };
    std::vector<std::vector<std::string>> rows;
    for (const nlohmann::json& e : entries)
        rows.push_back({e["name"].get<std::string>(),
                        fmt::format("{} {}", e["query_position"].get<int64_t>(), e["query_token"].get<std::string>()),
                        fmt::format("{} {}", e["key_position"].get<int64_t>(), e["key_token"].get<std::string>()),
                        number_text(e["attention"], "{:.3f}"), number_text(e["score"], "{:+.3f}"),
                        largest(e["key_totals"]), largest(e["query_totals"])});
    return rows;
}

// The table report.html shows of the analysis stored under `key` (no columns: none).
AnalysisTable analysis_table(const std::string& key, const nlohmann::json& entry) {
    if (key == "ablation") return {ablation_heading(entry), ablation_headings(entry), ablation_rows(entry)};
    if (key == "logit_attribution")
        return {fmt::format(
                    "the heads that write most toward the {} (mean over {} positions; all in logit_attribution.csv):",
                    entry["target"].get<std::string>(), entry["positions"].size()),
                {"rank", "head", "mean contribution", "last position"},
                ranked_head_rows(entry["heads"], {"mean", "last"}, "{:+.4f}")};
    if (key == "activation_patching")
        return {fmt::format("activation patching ({}): clean {}, corrupted {}; the heads whose patching moves it most "
                            "(all in patching.csv):",
                            entry["metric"].get<std::string>(), number_text(entry["clean"], "{:.4f}"),
                            number_text(entry["corrupted"], "{:.4f}")),
                {"rank", "head", "delta", "fraction", "KL (nats)"},
                ranked_head_rows(entry["heads"], {"delta", "fraction", "kl"}, "{:+.4f}")};
    if (key == "composition")
        return {"the strongest compositions of each kind (all in composition.csv):",
                {"kind", "earlier head", "later head", "score"},
                composition_rows(entry)};
    if (key == "qk_attribution")
        return {"each head's score from the query to the key in component terms (every pair in qk_attribution.csv):",
                {"head", "query", "key", "attention", "score", "largest key-side part", "largest query-side part"},
                qk_rows(entry)};
    return {};
}

}  // namespace

std::string model_analyses_text(const nlohmann::json& stats) {
    std::string text;
    for (const Shown& analysis : shown_analyses) {
        if (!stats.contains(analysis.key)) continue;
        const nlohmann::json& entry = stats[analysis.key];
        if (std::string(analysis.key) == "ablation") {
            text += fmt::format("{}\n", ablation_heading(entry));
            const std::vector<AblationColumn> columns = ablation_columns(entry);
            const auto line = [&](const std::vector<std::string>& cells) {
                std::string out = fmt::format("  {:>4}  {:<8}", cells[0], cells[1]);
                for (size_t c = 0; c < columns.size(); ++c)
                    out += fmt::format(" {:>{}}", cells[c + 2], columns[c].width);
                return out + "\n";
            };
            text += line(ablation_headings(entry));
            for (const std::vector<std::string>& row : ablation_rows(entry)) text += line(row);
        }
        for (const std::string& finding : findings_of(entry)) text += fmt::format("  {}\n", finding);
    }
    return text;
}

nlohmann::json model_analyses_entries(const nlohmann::json& stats) {
    nlohmann::json entries = nlohmann::json::object();
    for (const Shown& analysis : shown_analyses)
        if (stats.contains(analysis.key)) entries[analysis.key] = stats[analysis.key];
    return entries;
}

std::string model_analyses_html(const nlohmann::json& stats) {
    std::string html;
    for (const Shown& analysis : shown_analyses) {
        if (!stats.contains(analysis.key)) continue;
        const nlohmann::json& entry = stats[analysis.key];
        html += fmt::format("<section class=\"analysis\" id=\"{}\"><h2>{}</h2>\n", analysis.key, analysis.heading);
        const AnalysisTable table = analysis_table(analysis.key, entry);
        if (!table.columns.empty()) {
            html += fmt::format("<p>{}</p>\n<table><thead><tr>", xml_escape(table.caption));
            for (const std::string& column : table.columns) html += fmt::format("<th>{}</th>", xml_escape(column));
            html += "</tr></thead><tbody>\n";
            for (const std::vector<std::string>& row : table.rows) {
                html += "<tr>";
                for (const std::string& cell : row) html += fmt::format("<td>{}</td>", xml_escape(cell));
                html += "</tr>\n";
            }
            html += "</tbody></table>\n";
        }
        html += "<ul>\n";
        for (const std::string& finding : findings_of(entry)) html += fmt::format("<li>{}</li>\n", xml_escape(finding));
        html += "</ul></section>\n";
    }
    return html;
}

}  // namespace attn_viz
