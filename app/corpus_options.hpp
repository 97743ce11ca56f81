// Corpus mode's options, shared by run and model: --inputs, --save-partial and --shard.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "corpus_stats.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "report_options.hpp"
#include "run_output.hpp"
#include "sequence_stream.hpp"

namespace attn_viz_cli {

struct CorpusOptionValues {
    std::string path;             // --inputs; "" outside corpus mode
    std::string save_partial;     // --save-partial
    std::string shard_text;       // --shard "I/N"; "" for the whole corpus
    attn_viz::CorpusShard shard;  // --shard, parsed by resolve_corpus_options
};

// Adds --inputs (described by `inputs_help`), --save-partial (a file of `partial_format`, for
// attn-viz merge) and --shard; returns --inputs.
CLI::Option* add_corpus_options(CLI::App* cmd, CorpusOptionValues& values, const std::string& inputs_help,
                                const std::string& partial_format = attn_viz::partial_format);

// Parses --shard into values.shard (Error usage, "--shard: ...", on a bad one).
void resolve_corpus_options(CorpusOptionValues& values);

// Refuses what corpus mode does not do (CLI::ValidationError, exit 2, saying why): `other` (e.g.
// "--context") when `other_given`, --dump-* (one input's arrays), --svg and --map norm.
void check_corpus_mode(const attn_viz::ReportOptions& report, const ReportOptionValues& report_values, bool other_given,
                       const std::string& other);

// The options of run and model that write files besides --out (check_out_or_json): --dump-attention,
// --dump-output, --save-partial, --html and --svg, each with whether it was given.
std::vector<std::pair<std::string, bool>> written_files(const attn_viz::ReportOptions& report,
                                                        const ReportOptionValues& report_values,
                                                        const CorpusOptionValues& corpus);

// "12 sequences from c.jsonl" or, with --shard, "3 sequences from c.jsonl (shard 1/4; the corpus
// holds 12)", and a newline.
std::string corpus_run_note(const CorpusOptionValues& values, const attn_viz::CorpusDocuments& documents,
                            int64_t num_sequences);

// The end of a corpus run whose `documents` have been read to the end: records which shard of
// which corpus `corpus` covers, writes the report (stats.json with "corpora" and "provenance", CSV
// tables, figures) and --save-partial, and adds to what is printed the analysis, then "12
// sequences from c.jsonl" or, with --shard, "3 sequences from c.jsonl (shard 1/4; the corpus holds
// 12)". `analyses`: more stats.json entries (model's --composition), printed with the corpus's
// own (its logit attribution: write_corpus_analysis_outputs). Returns the run's provenance. Throws
// Error(bad_input) when the run took no sequence.
nlohmann::json finish_corpus_run(const CorpusOptionValues& values, attn_viz::CorpusAccumulator& corpus,
                                 const attn_viz::CorpusDocuments& documents, const attn_viz::ReportOptions& report,
                                 attn_viz::OutputDir& out, RunOutput& printed,
                                 const nlohmann::json& analyses = nlohmann::json::object());

}  // namespace attn_viz_cli
