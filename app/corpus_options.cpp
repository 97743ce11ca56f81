#include "corpus_options.hpp"

#include <fmt/format.h>

#include "corpus_attribution_report.hpp"
#include "corpus_maps_report.hpp"
#include "error.hpp"
#include "model_analyses_summary.hpp"
#include "model_corpus_run.hpp"
#include "option_checks.hpp"
#include "option_parsing.hpp"
#include "provenance.hpp"
#include "stats_report.hpp"

namespace attn_viz_cli {

CLI::Option* add_corpus_options(CLI::App* cmd, CorpusOptionValues& v, const std::string& inputs_help,
                                const std::string& partial_format) {
    const std::string maps_help =
        "; pictures of the mean maps (not of an encoder-decoder's): offsets.png, each head's mean attention by "
        "offset d = query - key, and while every sequence has the same length T (and layers x heads x T x T is at "
        "most 2^21) each head's mean map and overview.png; --html adds report.html with each statistic's std";
    CLI::Option* inputs = cmd->add_option("--inputs", v.path, inputs_help + maps_help)->check(CLI::ExistingPath);
    cmd->add_option("--save-partial", v.save_partial,
                    fmt::format("Corpus mode: also write the running sums ({}) for attn-viz merge", partial_format))
        ->needs(inputs)
        ->check(refuse_empty("names no file"));
    cmd->add_option("--shard", v.shard_text,
                    "Corpus mode: take only shard I of N, the sequences i with i mod N = I (0-based, in corpus order), "
                    "to merge with the other shards' partials")
        ->needs(inputs)
        ->check(refuse_empty("names no shard"));
    return inputs;
}

void resolve_corpus_options(CorpusOptionValues& v) {
    if (!v.shard_text.empty())
        v.shard = parse_option("--shard", [&] { return attn_viz::parse_corpus_shard(v.shard_text); });
}

void check_corpus_mode(const attn_viz::ReportOptions& report, const ReportOptionValues& report_values, bool other_given,
                       const std::string& other) {
    if (other_given)
        throw CLI::ValidationError("--inputs",
                                   fmt::format("{}: not implemented over a corpus yet, only on one input", other));
    if (!report.dump_attention.empty() || !report.dump_output.empty())
        throw CLI::ValidationError("--inputs",
                                   "--dump-attention and --dump-output write one input's arrays; over a "
                                   "corpus the mean maps are in stats.json (mean_maps) and the pictures");
    if (!report_values.svg.empty() || report_values.map != "weights")
        throw CLI::ValidationError("--inputs",
                                   "--svg and --map norm are not implemented for a corpus's mean maps "
                                   "(PNG, of the attention weights)");
}

std::vector<std::pair<std::string, bool>> written_files(const attn_viz::ReportOptions& report,
                                                        const ReportOptionValues& report_values,
                                                        const CorpusOptionValues& corpus) {
    return {{"--dump-attention", !report.dump_attention.empty()},
            {"--dump-output", !report.dump_output.empty()},
            {"--save-partial", !corpus.save_partial.empty()},
            {"--html", report.html},
            {"--svg", !report_values.svg.empty()}};
}

std::string corpus_run_note(const CorpusOptionValues& v, const attn_viz::CorpusDocuments& documents,
                            int64_t num_sequences) {
    return fmt::format("{} sequences from {}{}\n", num_sequences, v.path,
                       v.shard_text.empty() ? ""
                                            : fmt::format(" (shard {}; the corpus holds {})", v.shard.text(),
                                                          documents.corpus_sequences()));
}

nlohmann::json finish_corpus_run(const CorpusOptionValues& v, attn_viz::CorpusAccumulator& corpus,
                                 const attn_viz::CorpusDocuments& documents, const attn_viz::ReportOptions& report,
                                 attn_viz::OutputDir& out, RunOutput& printed, const nlohmann::json& analyses) {
    using namespace attn_viz;
    corpus.set_coverage(corpus_run_coverage(v.path, v.shard, documents, corpus.num_sequences()));
    const ModelAnalysis analysis = corpus.finish(report.thresholds);
    const nlohmann::json provenance = run_provenance();  // every file of the corpus is read by now
    nlohmann::json extra = analyses;
    extra.update(write_corpus_analysis_outputs(out, corpus, report));
    extra.update({{"corpora", corpora_json(corpus.coverage())}, {"provenance", provenance}});
    const CorpusMeanMaps* maps = corpus.mean_maps();
    if (maps) extra["mean_maps"] = mean_maps_json(*maps);
    const nlohmann::json stats = write_analysis_outputs(out, "", analysis, extra, report);
    if (maps) write_corpus_map_pictures(out, *maps, analysis, stats, report);
    if (!v.save_partial.empty()) corpus.save_partial(out.external_file(v.save_partial));
    printed.add_analysis(analysis, "");
    printed.add_analyses(extra);
    printed.add_text(corpus_run_note(v, documents, corpus.num_sequences()));
    return provenance;
}

}  // namespace attn_viz_cli
