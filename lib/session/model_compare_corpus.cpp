#include "model_compare_corpus.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "file_write.hpp"
#include "json_text.hpp"
#include "model_corpus_run.hpp"
#include "ranked_compare.hpp"

namespace attn_viz {
namespace {

// "mean 0.0123 (std 0.004)" of a measure over the sequences.
std::string mean_and_std(const RunningMoments& r) {
    return fmt::format("{:.4g} (std {:.3g})", r.mean_or_nan(), r.population_std());
}

std::string corpus_output_text(const CorpusComparison& c) {
    if (c.output.empty())
        return "output: the models have no next-token logits (encoders): compared at the heads only\n";
    const auto& o = c.output;  // corpus_output_measures: mean_kl, max_kl, loss_a, loss_b, top1_agreement
    return fmt::format(
        "output over {} sequences: mean KL(A || B) of next-token distributions {} nats (largest per sequence {}); loss "
        "A {}, loss B {} nats; top-1 next tokens agree at {}\n",
        c.num_sequences, mean_and_std(o[0]), mean_and_std(o[1]), mean_and_std(o[2]), mean_and_std(o[3]),
        mean_and_std(o[4]));
}

}  // namespace

CompareCorpusAccumulator compare_models_over_corpus(ComparedModels& models, CorpusDocuments& documents,
                                                    const std::string& path, const CorpusShard& shard,
                                                    const AnalysisOptions& options, const LoadLimits& limits,
                                                    const std::function<void(int64_t sequences)>& on_sequence) {
    const ModelSession& first = models.a;
    CompareCorpusAccumulator accumulator(first.model().fingerprint(), models.b.model().fingerprint(),
                                         options.thresholds);
    nlohmann::json doc;
    std::string where;
    while (documents.next(doc, where)) {
        const EncodedText input = model_sequence_ids(doc, first.tokenizer(), first.max_tokens(), limits, where);
        ModelComparison m;
        try {
            first.check_tokens(input.ids, "tokens");
            m = compare_on_tokens(models, input, options);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::bad_input) throw;
            fail_input(where, e.what());
        }
        accumulator.add(m.heads, m.top1, m.output ? &*m.output : nullptr);
        if (on_sequence) on_sequence(accumulator.num_sequences());
    }
    accumulator.set_coverage(corpus_run_coverage(path, shard, documents, accumulator.num_sequences()));
    return accumulator;
}

CorpusCompareReport corpus_compare_report(const CompareCorpusAccumulator& corpus, const LabelThresholds& thresholds,
                                          const std::string& metric_name, double fail_above) {
    CorpusCompareReport r{corpus.finish(thresholds), {}, {}, {}, {}};
    const HeadComparison& mean = r.comparison.mean;
    const std::vector<double> top1 = mean_top1(r.comparison);
    r.metric = comparison_metric(mean, metric_name);
    r.summary = summarize_comparison(mean, r.metric, metric_name, top1, fail_above);
    r.document = corpus_comparison_json(r.comparison);
    r.document["summary"] = compare_summary_json(r.summary, mean, r.metric, top1);
    r.document["corpora"] = corpora_json(corpus.coverage());
    r.text = fmt::format("{}{}{}", compare_summary_text(r.summary, mean, r.metric, top1),
                         corpus_output_text(r.comparison), ranked_comparison_table(mean, top1));
    return r;
}

void write_corpus_compare_outputs(OutputDir& out, const CorpusCompareReport& r, const nlohmann::json& provenance,
                                  const ComparedNames& names) {
    nlohmann::json doc = r.document;
    doc["provenance"] = provenance;
    write_file_atomically(out.file("compare.json"), fmt::format("{}\n", dump_json(doc, 1)));
    write_comparison_pictures(out, r.comparison.mean, mean_top1(r.comparison), names, " (mean over the corpus)");
}

}  // namespace attn_viz
