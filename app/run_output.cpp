#include "run_output.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "json_text.hpp"
#include "model_analyses_summary.hpp"
#include "run_summary.hpp"
#include "stats_report.hpp"

namespace attn_viz_cli {

void add_scripting_options(CLI::App* cmd, bool& json, bool& stats_only) {
    cmd->add_flag("--json", json,
                  "Print one JSON document on stdout instead of the tables (attn-viz/summary@1: the per-head table, "
                  "redundant heads, provenance; docs/analysis.md), and nothing else; -q does not silence it. Without "
                  "--out, nothing is written");
    cmd->add_flag("--stats-only", stats_only,
                  "Write the statistics files only (stats.json, heads.csv, pairs.csv): no pictures")
        ->excludes("--html")
        ->excludes("--svg");
}

RunOutput::RunOutput(const std::string& command, bool json, bool quiet)
    : json_(json), quiet_(quiet), document_({{"format", attn_viz::summary_format}, {"command", command}}) {}

void RunOutput::add_analyses(const nlohmann::json& stats) {
    add_text(attn_viz::model_analyses_text(stats));
    document_.update(attn_viz::model_analyses_entries(stats));
}

void RunOutput::add_analysis(const attn_viz::ModelAnalysis& analysis, const std::string& folder,
                             const std::string& heading) {
    if (!json_) {
        text_ += heading;
        text_ += attn_viz::stats_table(analysis);
        return;
    }
    nlohmann::json summary = attn_viz::summary_json(analysis);
    if (folder.empty()) {
        document_.update(summary);
        return;
    }
    summary["folder"] = folder;
    document_["sequences"].push_back(std::move(summary));
}

void RunOutput::print(const std::string& out, const nlohmann::json& provenance) {
    if (json_) {
        document_["out"] = out.empty() ? nlohmann::json() : nlohmann::json(out);  // null: nothing written
        document_["provenance"] = provenance;
        std::fputs(fmt::format("{}\n", attn_viz::dump_json(document_, 1)).c_str(), stdout);
    } else {
        // fwrite, not printf("%s"): a decoded text may hold a NUL byte, and what follows it must still print.
        const std::string shown = quiet_ ? results_ : fmt::format("{}wrote {}\n", text_, out);
        std::fwrite(shown.data(), 1, shown.size(), stdout);
    }
}

}  // namespace attn_viz_cli
