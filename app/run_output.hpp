// What `run` and `model` print on stdout once their outputs are in place: the per-head tables
// (the default), nothing (-q/--quiet), or with --json one JSON document (attn-viz/summary@1,
// docs/analysis.md) and nothing else, for scripts over many checkpoints.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "head_analysis.hpp"

namespace attn_viz_cli {

// Adds --json (`json`) and --stats-only (`stats_only`), which excludes --html and --svg (declare
// it after them).
void add_scripting_options(CLI::App* cmd, bool& json, bool& stats_only);

class RunOutput {
public:
    // command: "run" or "model", recorded in the JSON.
    RunOutput(const std::string& command, bool json, bool quiet);

    // One analysis, written to `folder` ("" or "seq_01/" of a batch): its table under a
    // "sequence N (folder)" line, or its summary (a batch's go in a "sequences" list).
    void add_analysis(const attn_viz::ModelAnalysis& analysis, const std::string& folder,
                      const std::string& heading = "");
    // The whole-model analyses' entries of a run's stats.json (`stats`: their findings and tables
    // in the text form, the entries themselves in the JSON form).
    void add_analyses(const nlohmann::json& stats);
    // A line of the text form only.
    void add_text(const std::string& line) { text_ += line; }
    // A line of the text form that is a result the user asked for (--generate's continuation):
    // printed under -q too, which silences only progress and tables.
    void add_result(const std::string& line) { text_ += line, results_ += line; }
    // Keys of the JSON form beside the summary (a model's tokens and generation).
    nlohmann::json& json() { return document_; }

    // Prints the text and "wrote OUT" (under -q only the results), or the JSON with `out` (null
    // when "": nothing was written) and `provenance`.
    void print(const std::string& out, const nlohmann::json& provenance);

private:
    bool json_, quiet_;
    std::string text_, results_;
    nlohmann::json document_;
};

}  // namespace attn_viz_cli
