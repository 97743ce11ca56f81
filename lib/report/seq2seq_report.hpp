// The outputs of an encoder-decoder run (seq2seq_model.hpp): each stack's pictures and
// statistics files in its folder (encoder/, decoder/, cross/: layer_NN/head_NN.png, stats.json,
// heads.csv, ... as write_report writes a model's; cross maps have the target tokens down and the
// source tokens across), the top-level stats.json holding every head of the three stacks with
// its "stack" ("encoder" | "decoder" | "cross"; cross heads also with their "alignment",
// cross_alignment.hpp), and --dump-attention's P.npy as P.encoder.npy [L_enc, H, S, S],
// P.decoder.npy [L_dec, H, T, T] and P.cross.npy [L_dec, H, T, S]. With --html, one report.html
// at the top shows the three stacks as BertViz does: an attention view, an overview and the heads
// of each (#view-encoder, #view-decoder, #view-cross), and the statistics of all heads with a
// table of the cross heads' alignment.
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report.hpp"
#include "seq2seq_model.hpp"
#include "seq2seq_stats.hpp"

namespace attn_viz {

struct Seq2SeqReportInput {
    OnednnBackend* backend = nullptr;  // the caller's, for the analysis's products (required)
    const Seq2SeqRun* run = nullptr;
    const Seq2SeqWeights* weights = nullptr;
    std::vector<std::string> source_tokens;                 // S labels
    std::vector<std::string> target_tokens;                 // T labels
    nlohmann::json extra_stats = nlohmann::json::object();  // more top-level stats.json keys (provenance)
    std::string model_description;                          // report.html's "Model"
    std::string source_text,
        target_text;  // report.html's "Input": the source and target texts (decoded ids when given as ids)
    // Each stack's weight similarities when computed once for many runs (corpus mode); null: computed by the analysis.
    std::array<const WeightSimilarities*, 3> weight_similarity{};
};

// Stack k (0 encoder, 1 decoder, 2 cross: seq2seq_stack_names)'s maps, weights, token labels and
// ids as a model report in its own folder ("encoder/", ...); what write_seq2seq_report writes and
// what corpus mode analyses (analyze_report) for each stack.
ReportInput seq2seq_stack_input(const Seq2SeqReportInput& input, int k);

// The three dump paths of --dump-attention `path`: P.encoder.npy, P.decoder.npy, P.cross.npy for
// P.npy (or for P without the extension); none for "".
std::vector<std::string> seq2seq_dump_paths(const std::string& path);

// "path (bart, 2 encoder + 2 decoder layers x 4 heads)": the model at `path` as report.html names it.
std::string seq2seq_model_description(const std::string& path, const Seq2SeqConfig& config);

// The three stacks' analyses (analyze_report of each with `options`), as write_seq2seq_report makes them.
Seq2SeqAnalysis analyze_seq2seq(const Seq2SeqReportInput& input, const ReportOptions& options);

// The top-level stats.json document of `analysis` (analyze_seq2seq of `input`): every head of the
// three stacks with its "stack" (cross heads with their "alignment"), the tokens, "stacks" and
// input.extra_stats.
nlohmann::json seq2seq_stats(const Seq2SeqReportInput& input, const Seq2SeqAnalysis& analysis);

// The attention of stack `stack` ("encoder", "decoder" or "cross") as --dump-attention writes it:
// [L_enc, H, S, S], [L_dec, H, T, T] or [L_dec, H, T, S]. Error(internal) for another name.
Tensor seq2seq_stacked_attention(const Seq2SeqRun& run, const std::string& stack);

// Writes every output into `out` (staged; the caller commits); options.dump_attention is split as
// above, options.dump_output is not supported here (the caller refuses it).
Seq2SeqAnalysis write_seq2seq_report(OutputDir& out, const Seq2SeqReportInput& input, const ReportOptions& options,
                                     Timings& timings, PictureNotes* notes = nullptr);

// Corpus mode (seq2seq_corpus.hpp, its finish()): each stack's statistics files in its folder
// (write_analysis_outputs: stats.json, heads.csv, pairs.csv and the head-by-head figures, means
// and stds) and the top-level stats.json (seq2seq_stats_json with `extra` merged in), staged.
// Returns that stats.json.
nlohmann::json write_seq2seq_corpus_report(OutputDir& out, const Seq2SeqAnalysis& analysis, const nlohmann::json& extra,
                                           const ReportOptions& options);

}  // namespace attn_viz
