// attn-viz merge: combines corpus partial results (attn-viz/partial@1) into one report:
// stats.json with mean and std per statistic, heads.csv, pairs.csv and the head-by-head figures.
#include <cstdio>

#include "commands.hpp"
#include "corpus_stats.hpp"
#include "error.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "report.hpp"
#include "stats_report.hpp"

namespace attn_viz_cli {
namespace {

struct MergeOptions {
    std::vector<std::string> partials, thresholds;
    std::string save_partial;
    OutputOptionValues output;
    bool allow_partial = false;
};

void declare_options(CLI::App* cmd, MergeOptions& o) {
    cmd->description("Combine corpus partial results (attn-viz/partial@1) into stats.json (mean and std per statistic), "
                     "heads.csv and pairs.csv.");
    cmd->add_option("partials", o.partials, "Partial result files written by a corpus run")->required()->check(CLI::ExistingFile);
    add_output_options(cmd, o.output, {"Output directory"});
    add_threshold_option(cmd, o.thresholds);
    cmd->add_option("--save-partial", o.save_partial, "Also write the merged partial result here (to merge further)");
    cmd->add_flag("--allow-partial", o.allow_partial,
                  "Merge even when shards of a corpus (run with --shard I/N) are missing; the report says which");
}

int merge(const MergeOptions& o) {
    using namespace attn_viz;
    // Step 1: validate options and every partial before writing anything.
    parse_thresholds(o.thresholds);  // a bad --threshold fails here, before any partial is read
    check_output_files({o.save_partial}, o.partials, o.output.out);
    CorpusAccumulator corpus;
    for (const std::string& path : o.partials) {
        const CorpusAccumulator partial = CorpusAccumulator::load_partial(path);
        if (partial.num_fingerprinted() < partial.num_sequences())
            std::fprintf(stderr, "attn-viz: warning: %s: %lld of its %lld sequences have no fingerprint (an earlier attn-viz "
                                 "wrote it): sequences counted twice and other weights cannot be detected\n",
                         path.c_str(), static_cast<long long>(partial.num_sequences() - partial.num_fingerprinted()),
                         static_cast<long long>(partial.num_sequences()));
        corpus.merge(partial, path);
    }
    const std::string missing = corpus.coverage().missing();
    if (!missing.empty() && !o.allow_partial)
        fail_input(missing, "give the missing shards' partials, or --allow-partial to merge what is there");
    if (!missing.empty()) std::fprintf(stderr, "attn-viz: warning: %s (--allow-partial)\n", missing.c_str());
    // The runs' thresholds (all the same, or merge() refused), then --threshold on top.
    const LabelThresholds thresholds = parse_thresholds(o.thresholds, corpus.thresholds());
    const ModelAnalysis report = corpus.finish(thresholds);

    // Step 2: stage the outputs, then move them into place together.
    OutputDir out(o.output.out, o.output.force);
    write_analysis_outputs(out, "", report, {{"corpora", corpora_json(corpus.coverage())}}, ReportOptions{});
    if (!o.save_partial.empty()) corpus.save_partial(out.external_file(o.save_partial));
    out.commit();
    if (!o.output.quiet) {
        std::fputs(stats_table(report).c_str(), stdout);
        std::printf("merged %lld sequences from %zu partial files; wrote %s\n",
                    static_cast<long long>(corpus.num_sequences()), o.partials.size(), o.output.out.c_str());
        if (!corpus.coverage().empty()) std::printf("coverage: %s\n", corpus.coverage().summary().c_str());
    }
    return 0;
}

}  // namespace

void add_merge_command(CLI::App& app, CommandAction& action) { add_command(app, action, "merge", declare_options, merge); }

}  // namespace attn_viz_cli
