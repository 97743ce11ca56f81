#include "seq2seq_report.hpp"

#include <fmt/format.h>

#include "color_range.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "html_report.hpp"
#include "json_text.hpp"
#include "npy.hpp"
#include "report_columns.hpp"
#include "seq2seq_stats.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

constexpr const char* stack_headings[3] = {"encoder self-attention (source tokens down and across)",
                                           "decoder self-attention (target tokens down and across, causal)",
                                           "cross attention (target tokens down, source tokens across)"};

}  // namespace

ReportInput seq2seq_stack_input(const Seq2SeqReportInput& in, int k) {
    const Seq2SeqRun& run = *in.run;
    const std::vector<LayerResult>& layers = k == 0 ? run.encoder : k == 1 ? run.decoder : run.cross;
    ReportInput r;
    for (const LayerResult& layer : layers) r.layers.push_back(&layer);
    for (const BlockWeights& b : in.weights->encoder)
        if (k == 0) r.weights.push_back(&b.attention);
    for (const DecoderBlockWeights& b : in.weights->decoder)
        if (k > 0) r.weights.push_back(k == 1 ? &b.block.attention : &b.cross_attention);
    r.query_tokens = k == 0 ? in.source_tokens : in.target_tokens;
    r.key_tokens = k == 1 ? in.target_tokens : in.source_tokens;
    const std::vector<int>& ids = k == 0 ? run.source : run.target;
    if (k < 2) r.token_ids.assign(ids.begin(), ids.end());  // duplicate-token / induction scores: self-attention only
    r.backend = in.backend;
    r.weight_similarity = in.weight_similarity[static_cast<size_t>(k)];
    r.layer_folders = true;
    r.folder = fmt::format("{}/", seq2seq_stack_names[k]);
    r.model_description = fmt::format("{} {}", in.model_description, seq2seq_stack_names[k]);
    r.input_text = k == 0 ? in.source_text : in.target_text;
    return r;
}

namespace {

// The page's statistics: stats.json's, and its cross heads' alignment as a table of its own
// ("cross_alignment": layer, head and the alignment statistics; nested objects are not table columns).
nlohmann::json page_stats(const nlohmann::json& stats) {
    nlohmann::json shown = stats;
    shown["cross_alignment"] = nlohmann::json::array();
    for (const nlohmann::json& head : stats["heads"])
        if (head.contains("alignment")) {
            nlohmann::json row = {{"layer", head["layer"]}, {"head", head["head"]}};
            row.update(head["alignment"]);
            shown["cross_alignment"].push_back(std::move(row));
        }
    return shown;
}

// report.html: the three stacks' maps as three sets of one page (encoder, decoder, cross), one
// colour range over all three under --scale global.
void write_seq2seq_html(OutputDir& out, const Seq2SeqReportInput& in, const ReportOptions& options,
                        const nlohmann::json& stats) {
    HtmlReportInput html;
    ValueRange all{1, 0};
    for (int k = 0; k < 3; ++k) {
        const ReportInput stack = seq2seq_stack_input(in, k);
        HtmlMaps& set = k == 0 ? html : html.more_maps.emplace_back();
        set.name = seq2seq_stack_names[k];
        set.heading = stack_headings[k];
        set.query_tokens = stack.query_tokens, set.key_tokens = stack.key_tokens;
        for (const LayerResult* layer : stack.layers) set.layers.push_back(&layer->attention);
        set.visibility = stack.layers.front()->visibility;
        const ValueRange range = global_value_range(stack, stack.layers.front()->attention.dim(0));
        all.vmin = std::min(all.vmin, range.vmin), all.vmax = std::max(all.vmax, range.vmax);
    }
    html.style = options.style;
    const ValueRange shared = map_color_range(color_rule(options), all, all);
    html.style.vmin = shared.vmin, html.style.vmax = shared.vmax;
    html.scale = options.scale;
    html.stats = page_stats(stats);
    html.column_order = report_column_order();
    html.column_order["cross_alignment"] = {"layer",    "head",         "entropy", "confidence",
                                            "diagonal", "monotonicity", "coverage"};
    html.table_notes = report_table_notes(stats);
    html.table_notes["cross_alignment"] =
        "One row per cross-attention head: how it aligns the target tokens (rows) to the source tokens "
        "(columns); formulas in docs/metrics.md.";
    html.model = in.model_description;
    html.input_text = fmt::format("source: {} | target: {}", in.source_text, in.target_text);
    write_html_report(out.file("report.html"), html);
}

}  // namespace

std::vector<std::string> seq2seq_dump_paths(const std::string& path) {
    if (path.empty()) return {};
    const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    const std::string stem = npy ? path.substr(0, path.size() - 4) : path;
    return {fmt::format("{}.encoder.npy", stem), fmt::format("{}.decoder.npy", stem),
            fmt::format("{}.cross.npy", stem)};
}

std::string seq2seq_model_description(const std::string& path, const Seq2SeqConfig& config) {
    const ModelConfig& c = config.blocks;
    return fmt::format("{} ({}, {} encoder + {} decoder layers x {} heads)", path, c.architecture, c.n_layers,
                       config.n_decoder_layers, c.n_heads);
}

namespace {

// The three stacks' analyses, each by `analyze` (a ReportInput -> its ModelAnalysis), and the cross
// heads' alignment.
template <class Analyze>
Seq2SeqAnalysis analyze_stacks(const Seq2SeqReportInput& in, const Analyze& analyze) {
    Seq2SeqAnalysis result;
    for (int k = 0; k < 3; ++k) {
        const ReportInput stack = seq2seq_stack_input(in, k);
        result.stacks.emplace_back(seq2seq_stack_names[k], analyze(stack));
        if (k == 2) result.alignment = stack_alignment(stack.layers);
    }
    return result;
}

}  // namespace

Seq2SeqAnalysis analyze_seq2seq(const Seq2SeqReportInput& in, const ReportOptions& options) {
    return analyze_stacks(in, [&](const ReportInput& stack) { return analyze_report(stack, options); });
}

nlohmann::json seq2seq_stats(const Seq2SeqReportInput& in, const Seq2SeqAnalysis& analysis) {
    nlohmann::json stats = seq2seq_stats_json(analysis);
    stats.update({{"source_tokens", in.source_tokens}, {"target_tokens", in.target_tokens}});
    stats.update(in.extra_stats);
    return stats;
}

Tensor seq2seq_stacked_attention(const Seq2SeqRun& run, const std::string& stack) {
    const std::vector<LayerResult>* layers = stack == "encoder"   ? &run.encoder
                                             : stack == "decoder" ? &run.decoder
                                             : stack == "cross"   ? &run.cross
                                                                  : nullptr;
    if (!layers) throw Error(ErrorKind::internal, fmt::format("no stack '{}' in an encoder-decoder run", stack));
    std::vector<const LayerResult*> pointers;
    for (const LayerResult& layer : *layers) pointers.push_back(&layer);
    return stacked_attention(pointers, true);
}

Seq2SeqAnalysis write_seq2seq_report(OutputDir& out, const Seq2SeqReportInput& in, const ReportOptions& options,
                                     Timings& timings, PictureNotes* notes) {
    ReportOptions stack_options = options;
    stack_options.dump_attention.clear();
    stack_options.dump_output.clear();
    stack_options.html = false;  // one page for the three stacks, below
    const Seq2SeqAnalysis result = analyze_stacks(
        in, [&](const ReportInput& stack) { return write_report(out, stack, stack_options, timings, notes); });
    const nlohmann::json stats = seq2seq_stats(in, result);
    write_file_bytes(out.file("stats.json"), json_file_text(stats, 2));
    if (options.html && options.pictures) write_seq2seq_html(out, in, options, stats);
    Timings::Scope t(timings, "dumps");
    const std::vector<std::string> dumps = seq2seq_dump_paths(options.dump_attention);
    for (size_t k = 0; k < dumps.size(); ++k)
        write_npy(out.external_file(dumps[k]), seq2seq_stacked_attention(*in.run, seq2seq_stack_names[k]));
    return result;
}

nlohmann::json write_seq2seq_corpus_report(OutputDir& out, const Seq2SeqAnalysis& analysis, const nlohmann::json& extra,
                                           const ReportOptions& options) {
    for (const auto& [name, stack] : analysis.stacks)
        write_analysis_outputs(out, fmt::format("{}/", name), stack, nlohmann::json::object(), options);
    nlohmann::json stats = seq2seq_stats_json(analysis);
    stats.update(extra);
    write_file_bytes(out.file("stats.json"), json_file_text(stats, 2));
    return stats;
}

}  // namespace attn_viz
