// attn-viz merge: combines corpus partial results (attn-viz/partial@1) into one report:
// stats.json with mean and std per statistic, heads.csv, pairs.csv and the head-by-head figures;
// or compare partials (attn-viz/compare-partial@1) into the compare.json a corpus compare writes;
// or encoder-decoder partials (attn-viz/seq2seq-partial@1) into the three stacks' report.
#include <cstdio>

#include <fmt/format.h>

#include "commands.hpp"
#include "corpus_attribution_report.hpp"
#include "corpus_maps_report.hpp"
#include "corpus_stats.hpp"
#include "error.hpp"
#include "fingerprint.hpp"
#include "model_analyses_summary.hpp"
#include "model_compare_corpus.hpp"
#include "option_checks.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "partial_json.hpp"
#include "provenance.hpp"
#include "report.hpp"
#include "seq2seq_corpus.hpp"
#include "seq2seq_report.hpp"
#include "stats_report.hpp"

namespace attn_viz_cli {
namespace {

struct MergeOptions {
    std::vector<std::string> partials, thresholds;
    std::string save_partial;
    OutputOptionValues output;
    bool allow_partial = false;
    bool html = false;
};

void declare_merge_options(CLI::App* cmd, MergeOptions& o) {
    cmd->description(
        "Combine corpus partial results (attn-viz/partial@1) into stats.json (mean and std per statistic), "
        "heads.csv and pairs.csv; or an encoder-decoder's (attn-viz/seq2seq-partial@1) into stats.json and the "
        "encoder/, "
        "decoder/ and cross/ folders; or compare partials (attn-viz/compare-partial@1, from compare --inputs "
        "--save-partial) into compare.json as the single compare run writes it.");
    cmd->add_option("partials", o.partials,
                    "Partial result files written by corpus runs (model/run --inputs), or all by corpus compares "
                    "(compare --inputs)")
        ->required()
        ->check(CLI::ExistingFile);
    add_output_options(cmd, o.output, {"Output directory"});
    add_threshold_option(cmd, o.thresholds);
    cmd->add_option("--save-partial", o.save_partial, "Also write the merged partial result here (to merge further)")
        ->check(refuse_empty("names no file"));
    cmd->add_flag("--html", o.html,
                  "Also write report.html, as the corpus run over the whole corpus does (corpus partials that keep "
                  "their mean maps)");
    cmd->add_flag("--allow-partial", o.allow_partial,
                  "Merge even when shards of a corpus (run with --shard I/N) are missing; the report says which");
}

// A partial file's "format": attn-viz/partial@1, attn-viz/compare-partial@1,
// attn-viz/seq2seq-partial@1, or anything else ("" when it has none).
std::string partial_kind(const nlohmann::json& partial) {
    return partial.is_object() && partial.contains("format") && partial["format"].is_string()
               ? partial["format"].get<std::string>()
               : "";
}

// The partial at `path`, refused (naming it) when it is of a kind other than `kind`, the first
// partial's: a compare or an encoder-decoder partial among others (any other format is refused
// by the reader).
nlohmann::json read_partial_of_kind(const std::string& path, const std::string& kind, const MergeOptions& o) {
    using attn_viz::compare_partial_format, attn_viz::seq2seq_partial_format;
    nlohmann::json partial = attn_viz::read_partial_file(path);
    const std::string its = partial_kind(partial);
    const auto special = [](const std::string& k) {
        return k == compare_partial_format || k == seq2seq_partial_format;
    };
    if (its != kind && (special(its) || special(kind))) {
        const std::string named = special(kind) ? kind : its;  // the special kind the message is about
        const bool is = its == named;
        attn_viz::fail_input(
            path, fmt::format("{} {} partial ({}) while {} is{}: merge partials of one kind", is ? "is" : "is not",
                              named == compare_partial_format ? "a compare" : "an encoder-decoder", named,
                              o.partials.front(), is ? " not" : ""));
    }
    return partial;
}

// Refuses (or with --allow-partial reports) the shards of a corpus that no partial covers.
void check_coverage(const attn_viz::CorpusCoverage& coverage, bool allow_partial) {
    const std::string missing = coverage.missing();
    if (!missing.empty() && !allow_partial)
        attn_viz::fail_input(missing, "give the missing shards' partials, or --allow-partial to merge what is there");
    if (!missing.empty()) std::fprintf(stderr, "attn-viz: warning: %s (--allow-partial)\n", missing.c_str());
}

void print_merged(const MergeOptions& o, int64_t sequences, const attn_viz::CorpusCoverage& coverage) {
    std::printf("merged %lld sequences from %zu partial files; wrote %s\n", static_cast<long long>(sequences),
                o.partials.size(), o.output.out.c_str());
    if (!coverage.empty()) std::printf("coverage: %s\n", coverage.summary().c_str());
}

// Every partial of `o` (all of `kind`) read and merged into one accumulator, its coverage checked.
template <typename Accumulator>
Accumulator merged_partials(const MergeOptions& o, const std::string& kind) {
    Accumulator corpus;
    for (const std::string& path : o.partials)
        corpus.merge(Accumulator::from_partial_json(read_partial_of_kind(path, kind, o), path), path);
    check_coverage(corpus.coverage(), o.allow_partial);
    return corpus;
}

// Compare partials: compare.json (and its pictures) as `compare --inputs` over the whole corpus.
int merge_compare_partials(const MergeOptions& o) {
    using namespace attn_viz;
    const auto corpus = merged_partials<CompareCorpusAccumulator>(o, compare_partial_format);
    const CorpusCompareReport report =
        corpus_compare_report(corpus, parse_thresholds(o.thresholds, corpus.thresholds()), "js_distance", -1);
    OutputDir out(o.output.out, o.output.force);
    // The partials know the models by their fingerprints only.
    write_corpus_compare_outputs(out, report, run_provenance(),
                                 {fmt::format("model {}", fingerprint_text(corpus.model_a())),
                                  fmt::format("model {}", fingerprint_text(corpus.model_b()))});
    if (!o.save_partial.empty()) corpus.save_partial(out.external_file(o.save_partial));
    out.commit();
    if (!o.output.quiet) {
        std::fputs(report.text.c_str(), stdout);
        print_merged(o, corpus.num_sequences(), corpus.coverage());
    }
    return 0;
}

// Encoder-decoder partials: stats.json and each stack's files as `model --inputs` over the whole corpus.
int merge_seq2seq_partials(const MergeOptions& o) {
    using namespace attn_viz;
    const auto corpus = merged_partials<Seq2SeqCorpusAccumulator>(o, seq2seq_partial_format);
    const Seq2SeqAnalysis report = corpus.finish(parse_thresholds(o.thresholds, corpus.thresholds()));
    OutputDir out(o.output.out, o.output.force);
    write_seq2seq_corpus_report(out, report, {{"corpora", corpora_json(corpus.coverage())}}, ReportOptions{});
    if (!o.save_partial.empty()) corpus.save_partial(out.external_file(o.save_partial));
    out.commit();
    if (!o.output.quiet) {
        for (const auto& [name, stack] : report.stacks)
            std::printf("\n%s:\n%s", name.c_str(), stats_table(stack).c_str());
        print_merged(o, corpus.num_sequences(), corpus.coverage());
    }
    return 0;
}

int merge(const MergeOptions& o) {
    using namespace attn_viz;
    // Step 1: validate options and every partial before writing anything.
    parse_thresholds(o.thresholds);  // a bad --threshold fails here, before any partial is read
    check_output_files({o.save_partial}, o.partials, o.output.out);
    const std::string kind = partial_kind(read_partial_file(o.partials.front()));
    if (o.html && (kind == compare_partial_format || kind == seq2seq_partial_format))
        throw Error(ErrorKind::usage, fmt::format("--html: {} partials keep no maps", kind));
    if (kind == compare_partial_format) return merge_compare_partials(o);
    if (kind == seq2seq_partial_format) return merge_seq2seq_partials(o);
    CorpusAccumulator corpus;
    for (const std::string& path : o.partials) {
        const CorpusAccumulator partial =
            CorpusAccumulator::from_partial_json(read_partial_of_kind(path, partial_format, o), path);
        if (partial.num_fingerprinted() < partial.num_sequences())
            std::fprintf(stderr,
                         "attn-viz: warning: %s: %lld of its %lld sequences have no fingerprint (an earlier attn-viz "
                         "wrote it): sequences counted twice and other weights cannot be detected\n",
                         path.c_str(), static_cast<long long>(partial.num_sequences() - partial.num_fingerprinted()),
                         static_cast<long long>(partial.num_sequences()));
        corpus.merge(partial, path);
    }
    check_coverage(corpus.coverage(), o.allow_partial);
    // The runs' thresholds (all the same, or merge() refused), then --threshold on top.
    const LabelThresholds thresholds = parse_thresholds(o.thresholds, corpus.thresholds());
    const ModelAnalysis report = corpus.finish(thresholds);
    const CorpusMeanMaps* maps = corpus.mean_maps();
    if (o.html && !maps)
        throw Error(ErrorKind::usage,
                    "--html: the partials keep no mean maps (one of them is of a --stats-only run "
                    "or of an earlier version)");

    // Step 2: stage the outputs, then move them into place together.
    OutputDir out(o.output.out, o.output.force);
    nlohmann::json extra = write_corpus_analysis_outputs(out, corpus, ReportOptions{});
    const std::string analyses_text = model_analyses_text(extra);
    extra["corpora"] = corpora_json(corpus.coverage());
    if (maps) extra["mean_maps"] = mean_maps_json(*maps);
    const nlohmann::json stats = write_analysis_outputs(out, "", report, extra, ReportOptions{});
    ReportOptions pictures;
    pictures.html = o.html;
    if (maps) write_corpus_map_pictures(out, *maps, report, stats, pictures);
    if (!o.save_partial.empty()) corpus.save_partial(out.external_file(o.save_partial));
    out.commit();
    if (!o.output.quiet) {
        std::fputs(stats_table(report).c_str(), stdout);
        std::fputs(analyses_text.c_str(), stdout);
        print_merged(o, corpus.num_sequences(), corpus.coverage());
    }
    return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "merge", declare_merge_options, merge);
}

}  // namespace attn_viz_cli
