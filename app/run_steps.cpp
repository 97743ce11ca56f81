#include "run_steps.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "memory_budget.hpp"
#include "parallel_for.hpp"

namespace attn_viz_cli {

attn_viz::LoadLimits prepare_run(ReportRunOptions& o, std::optional<int64_t> run_layer) {
    o.report.threads = attn_viz::use_threads(o.report.threads);
    const attn_viz::LoadLimits limits = load_limits(o.limit_values);
    resolve_report_options(o.report, o.report_values, run_layer);
    o.report.pictures = !o.stats_only && !o.output.out.empty();
    resolve_corpus_options(o.corpus);
    return limits;
}

std::unique_ptr<attn_viz::OutputDir> open_run_output(const ReportRunOptions& o, const std::vector<std::string>& inputs,
                                                     const std::vector<std::string>& outputs) {
    attn_viz::check_output_files(outputs, inputs, o.output.out);
    std::unique_ptr<attn_viz::OutputDir> out = open_output_dir(o.output);
    out->protect_inputs(inputs);
    return out;
}

CorpusRun::CorpusRun(const ReportRunOptions& o, const attn_viz::LoadLimits& limits, uint64_t fingerprint,
                     attn_viz::CorpusLines lines, bool layer_folders)
    : documents(o.corpus.path, limits, o.corpus.shard, lines),
      corpus(fingerprint, o.report.thresholds),
      options_(o),
      progress_(corpus_progress(o.output.quiet, documents)) {
    if (o.report.pictures) corpus.keep_mean_maps(attn_viz::CorpusMeanMaps(layer_folders));
}

void CorpusRun::sequence_done(int64_t sequences) { progress_.update(sequences); }

nlohmann::json CorpusRun::finish(attn_viz::OutputDir& out, RunOutput& printed, const nlohmann::json& analyses) {
    progress_.finish();
    return finish_corpus_run(options_.corpus, corpus, documents, options_.report, out, printed, analyses);
}

void finish_run(const ReportRunOptions& o, attn_viz::OutputDir& out, attn_viz::Timings& timings, RunOutput& printed,
                const nlohmann::json& provenance, const std::string& timing_extra) {
    {
        attn_viz::Timings::Scope t(timings, "commit");
        out.commit();
    }
    printed.print(o.output.out, provenance);
    if (!o.timings) return;
    std::fflush(stdout);
    std::fprintf(stderr, "timings:\n%s%s", timings.table().c_str(), timing_extra.c_str());
}

std::string attention_rate(const attn_viz::Timings& timings, double flops) {
    return fmt::format("  attention rate {:.1f} GFLOP/s ({:.3f} GFLOP)\n", flops / timings.seconds("attention") * 1e-9,
                       flops * 1e-9);
}

std::string peak_memory_line() {
    return fmt::format("  peak RSS          {:10.1f} MB\n",
                       static_cast<double>(attn_viz::peak_resident_bytes()) / (1 << 20));
}

}  // namespace attn_viz_cli
