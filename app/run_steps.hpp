// The steps `run` and `model` share: the options both take, the setup before any work (threads,
// limits, resolved options, the output directory), corpus mode's documents, moments and progress,
// and the last steps (committing the staged outputs, printing the tables and --timings).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_options.hpp"
#include "input_limits.hpp"
#include "load_limits.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "report_options.hpp"
#include "run_output.hpp"
#include "timings.hpp"

namespace attn_viz_cli {

// What `run` and `model` take alike: the report's options, the input limits, the output options,
// corpus mode, and the scripting and timing flags.
struct ReportRunOptions {
    attn_viz::ReportOptions report;
    ReportOptionValues report_values;
    InputLimitValues limit_values;
    OutputOptionValues output;
    CorpusOptionValues corpus;
    bool timings = false, json = false, stats_only = false;
};

// The setup before any work: the process's thread count set once from --threads (o.report.threads
// holds the count from then on), the report's options resolved (`run_layer`: run --layer N, which
// --svg names as LNHx), pictures drawn unless --stats-only or without --out, the corpus shard
// parsed. Returns the load limits (Error usage on a bad value).
attn_viz::LoadLimits prepare_run(ReportRunOptions& o, std::optional<int64_t> run_layer = std::nullopt);

// The output directory, staged, once no `outputs` file (dumps, --save-partial) would replace one
// of the `inputs` (check_output_files); the inputs are protected from being replaced.
std::unique_ptr<attn_viz::OutputDir> open_run_output(const ReportRunOptions& o, const std::vector<std::string>& inputs,
                                                     const std::vector<std::string>& outputs);

// Corpus mode: the documents of --inputs (or of its shard), read one at a time by the caller's
// loop (add_layer_corpus, add_model_corpus), the running moments of their analyses, and the
// sequences done as progress on stderr.
class CorpusRun {
public:
    // `fingerprint`: of the weights every sequence runs through; `lines`: how a text file's lines read.
    // With pictures, the mean maps are kept too, drawn in layer_NN/ folders when `layer_folders` (a model's).
    CorpusRun(const ReportRunOptions& o, const attn_viz::LoadLimits& limits, uint64_t fingerprint,
              attn_viz::CorpusLines lines = attn_viz::CorpusLines::json, bool layer_folders = false);

    attn_viz::CorpusDocuments documents;
    attn_viz::CorpusAccumulator corpus;

    // The loop's on_sequence hook: `sequences` done, as progress.
    void sequence_done(int64_t sequences);
    // Once every document is read: the progress line erased, then finish_corpus_run (the report,
    // --save-partial, what is printed; `analyses`: more stats.json entries). Returns the provenance.
    nlohmann::json finish(attn_viz::OutputDir& out, RunOutput& printed,
                          const nlohmann::json& analyses = nlohmann::json::object());

private:
    const ReportRunOptions& options_;
    Progress progress_;
};

// The last steps: everything moves into place together (timed as "commit"); then the tables or
// --json on stdout, and with --timings the time of each stage on stderr, then `timing_extra`.
void finish_run(const ReportRunOptions& o, attn_viz::OutputDir& out, attn_viz::Timings& timings, RunOutput& printed,
                const nlohmann::json& provenance, const std::string& timing_extra);

// "  attention rate 12.3 GFLOP/s (0.456 GFLOP)\n": `flops` over the time spent in "attention".
std::string attention_rate(const attn_viz::Timings& timings, double flops);

// "  peak RSS   12.3 MB\n": the process's peak resident memory so far.
std::string peak_memory_line();

}  // namespace attn_viz_cli
