#include "model_analyses_summary.hpp"

#include <cstdio>
#include <vector>

#include "head_names.hpp"
#include "text_codecs.hpp"

namespace attn_viz {
namespace {

// The analyses in the order they are shown: stats.json key and heading.
struct Shown {
    const char* key;
    const char* heading;
};
constexpr Shown shown_analyses[] = {{"ablation", "Ablation"}, {"logit_attribution", "Direct logit attribution"},
                                     {"activation_patching", "Activation patching"}, {"composition", "Composition scores"},
                                     {"attention_rollout", "Attention rollout"}, {"attention_flow", "Attention flow"}};

// A number of a stats entry ("" when null), with `format`.
std::string number_text(const nlohmann::json& value, const char* format) {
    if (!value.is_number()) return "-";
    char text[32];
    std::snprintf(text, sizeof text, format, value.get<double>());
    return text;
}

std::vector<std::string> findings_of(const nlohmann::json& entry) {
    std::vector<std::string> findings;
    if (entry.contains("findings") && entry["findings"].is_array())
        for (const nlohmann::json& f : entry["findings"])
            if (f.is_string()) findings.push_back(f.get<std::string>());
    return findings;
}

// The first ablation_heads_shown ranked heads of the "ablation" entry: {rank, head, delta_loss, kl}.
std::vector<std::vector<std::string>> ablation_rows(const nlohmann::json& ablation) {
    std::vector<std::vector<std::string>> rows;
    for (const nlohmann::json& h : ablation["heads"]) {
        if (rows.size() == ablation_heads_shown) break;
        rows.push_back({std::to_string(h["rank"].get<int64_t>()), head_name(h["layer"].get<int64_t>(), h["head"].get<int64_t>()),
                        number_text(h["delta_loss"], "%+.4f"), number_text(h["kl"], "%.4f")});
    }
    return rows;
}

std::string ablation_heading(const nlohmann::json& ablation) {
    const size_t count = ablation["heads"].size();
    return "ablation (" + ablation["mode"].get<std::string>() + ", " + std::to_string(count) + (count == 1 ? " head" : " heads") +
           "): clean next-token loss " + number_text(ablation["clean_loss"], "%.4f") + " nats; the heads that change it most" +
           (count > ablation_heads_shown ? " (first " + std::to_string(ablation_heads_shown) + ", all in ablation.csv)" : "") + ":";
}

}  // namespace

std::string model_analyses_text(const nlohmann::json& stats) {
    std::string text;
    for (const Shown& analysis : shown_analyses) {
        if (!stats.contains(analysis.key)) continue;
        const nlohmann::json& entry = stats[analysis.key];
        if (std::string(analysis.key) == "ablation") {
            text += ablation_heading(entry) + "\n";
            char line[128];
            std::snprintf(line, sizeof line, "  %4s  %-8s %12s %10s\n", "rank", "head", "delta loss", "KL (nats)");
            text += line;
            for (const std::vector<std::string>& row : ablation_rows(entry)) {
                std::snprintf(line, sizeof line, "  %4s  %-8s %12s %10s\n", row[0].c_str(), row[1].c_str(), row[2].c_str(), row[3].c_str());
                text += line;
            }
        }
        for (const std::string& finding : findings_of(entry)) text += "  " + finding + "\n";
    }
    return text;
}

std::string model_analyses_html(const nlohmann::json& stats) {
    std::string html;
    for (const Shown& analysis : shown_analyses) {
        if (!stats.contains(analysis.key)) continue;
        const nlohmann::json& entry = stats[analysis.key];
        html += std::string("<section class=\"analysis\" id=\"") + analysis.key + "\"><h2>" + analysis.heading + "</h2>\n";
        if (std::string(analysis.key) == "ablation") {
            html += "<p>" + xml_escape(ablation_heading(entry)) + "</p>\n<table><thead><tr><th>rank</th><th>head</th>"
                    "<th>delta loss (nats)</th><th>KL (nats)</th></tr></thead><tbody>\n";
            for (const std::vector<std::string>& row : ablation_rows(entry)) {
                html += "<tr>";
                for (const std::string& cell : row) html += "<td>" + xml_escape(cell) + "</td>";
                html += "</tr>\n";
            }
            html += "</tbody></table>\n";
        }
        html += "<ul>\n";
        for (const std::string& finding : findings_of(entry)) html += "<li>" + xml_escape(finding) + "</li>\n";
        html += "</ul></section>\n";
    }
    return html;
}

}  // namespace attn_viz
