#include "model_analyses_summary.hpp"

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
                                    {"attention_flow", "Attention flow"}};

// A number of a stats entry with `format` ("-" when null).
std::string number_text(const nlohmann::json& value, fmt::format_string<double> format) {
    return value.is_number() ? short_number(value.get<double>(), format) : "-";
}

std::vector<std::string> findings_of(const nlohmann::json& entry) {
    std::vector<std::string> findings;
    if (entry.contains("findings") && entry["findings"].is_array())
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

// The first ablation_heads_shown ranked heads of the "ablation" entry: {rank, head, delta_loss, kl}
// (their means over a corpus).
std::vector<std::vector<std::string>> ablation_rows(const nlohmann::json& ablation) {
    std::vector<std::vector<std::string>> rows;
    for (const nlohmann::json& h : ablation["heads"]) {
        if (rows.size() == ablation_heads_shown) break;
        rows.push_back(
            {fmt::to_string(h["rank"].get<int64_t>()), head_name(h["layer"].get<int64_t>(), h["head"].get<int64_t>()),
             number_text(mean_value(h, "delta_loss"), "{:+.4f}"), number_text(mean_value(h, "kl"), "{:.4f}")});
    }
    return rows;
}

std::string ablation_heading(const nlohmann::json& ablation) {
    const size_t count = ablation["heads"].size();
    return fmt::format(
        "ablation ({}, {}{}): clean next-token loss {} nats{}; the heads that change it most{}:",
        ablation["mode"].get<std::string>(), count, count == 1 ? " head" : " heads",
        number_text(mean_value(ablation, "clean_loss"), "{:.4f}"),
        ablation.contains("sequences") ? fmt::format(" (means over {} sequences)", ablation["sequences"].get<int64_t>())
                                       : "",
        count > ablation_heads_shown ? fmt::format(" (first {}, all in ablation.csv)", ablation_heads_shown) : "");
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

// The table report.html shows of the analysis stored under `key` (no columns: none).
AnalysisTable analysis_table(const std::string& key, const nlohmann::json& entry) {
    if (key == "ablation")
        return {ablation_heading(entry), {"rank", "head", "delta loss (nats)", "KL (nats)"}, ablation_rows(entry)};
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
            text += fmt::format("  {:>4}  {:<8} {:>12} {:>10}\n", "rank", "head", "delta loss", "KL (nats)");
            for (const std::vector<std::string>& row : ablation_rows(entry))
                text += fmt::format("  {:>4}  {:<8} {:>12} {:>10}\n", row[0], row[1], row[2], row[3]);
        }
        for (const std::string& finding : findings_of(entry)) text += fmt::format("  {}\n", finding);
    }
    return text;
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
