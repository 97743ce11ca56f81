// Writing a ModelAnalysis out: stats.json ("attn-viz/stats@1"), heads.csv and pairs.csv, and a
// short fixed-width table for the terminal. Schemas: docs/analysis.md. NaN is never written:
// undefined numbers are JSON null and empty CSV fields.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"
#include "running_moments.hpp"

namespace attn_viz {

inline constexpr const char* stats_format = "attn-viz/stats@1";

nlohmann::json stats_json(const ModelAnalysis& analysis);

// A finite number as itself, NaN or infinity as null.
nlohmann::json json_number(double x);
// {"mean", "std"} of a corpus statistic (the population std), each a json_number.
nlohmann::json mean_and_std_json(const RunningMoments& m);
// Shortest text that reads back to the same double; "" for NaN/inf (an empty CSV field).
std::string csv_number(double x);
// `text` as one CSV field, always in double quotes (a quote inside doubled, RFC 4180): a token's
// text may hold commas, quotes and line breaks.
std::string csv_text(const std::string& text);

// heads.csv (one row per head) and pairs.csv (one row per pair a < b) as text, for writers that
// stage their files (OutputDir).
std::string heads_csv(const ModelAnalysis& analysis);
std::string pairs_csv(const ModelAnalysis& analysis);

// The terminal table (stats_table.cpp): one line per head (layer, head, label, the main
// statistics; corpus reports add a line of stds under each head), the redundant groups, a legend
// of the columns, then the findings in words.
std::string stats_table(const ModelAnalysis& analysis);

}  // namespace attn_viz
