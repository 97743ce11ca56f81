#include "compare_corpus_run.hpp"

#include <fmt/format.h>

#include "compare_models.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "json_text.hpp"
#include "model_corpus_run.hpp"
#include "model_run.hpp"
#include "progress.hpp"
#include "ranked_compare.hpp"
#include "sequence_stream.hpp"

namespace attn_viz_cli {
namespace {

// "mean 0.0123 (std 0.004)" of a measure over the sequences.
std::string mean_and_std(const attn_viz::RunningMoments& r) {
    return fmt::format("{:.4g} (std {:.3g})", r.mean_or_nan(), r.population_std());
}

std::string corpus_output_text(const attn_viz::CorpusComparison& c) {
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

attn_viz::CompareCorpusAccumulator compare_models_over_corpus(
    const std::string& a, const std::string& b, const std::string& tokenizer, const CorpusOptionValues& corpus,
    const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits, bool quiet, std::string& note) {
    using namespace attn_viz;
    ComparedModels models(a, b, tokenizer, *options.backend, limits);
    const ModelDescription& description = models.a->description();
    CorpusDocuments documents(corpus.path, limits, corpus.shard, CorpusLines::json_or_text);
    CompareCorpusAccumulator accumulator(models.a->fingerprint(), models.b->fingerprint(), options.thresholds);
    nlohmann::json doc;
    std::string where;
    Progress progress = corpus_progress(quiet, documents);
    while (documents.next(doc, where)) {
        const EncodedText input = model_sequence_ids(doc, *models.tokenizer, description.max_tokens, limits, where);
        ModelComparison m;
        try {
            check_model_tokens(input.ids, description.vocab_size, description.max_tokens);
            m = compare_on_tokens(models, input, options);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::bad_input) throw;
            fail_input(where, e.what());
        }
        accumulator.add(m.heads, m.top1, m.output ? &*m.output : nullptr);
        progress.update(accumulator.num_sequences());
    }
    progress.finish();
    accumulator.set_coverage(corpus_run_coverage(corpus.path, corpus.shard, documents, accumulator.num_sequences()));
    note = corpus_run_note(corpus, documents, accumulator.num_sequences());
    return accumulator;
}

CorpusCompareReport corpus_compare_report(const attn_viz::CompareCorpusAccumulator& corpus,
                                          const attn_viz::LabelThresholds& thresholds, const std::string& metric_name,
                                          double fail_above) {
    using namespace attn_viz;
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

void write_corpus_compare_outputs(attn_viz::OutputDir& out, const CorpusCompareReport& r,
                                  const nlohmann::json& provenance, const attn_viz::ComparedNames& names) {
    nlohmann::json doc = r.document;
    doc["provenance"] = provenance;
    attn_viz::write_file_atomically(out.file("compare.json"), fmt::format("{}\n", attn_viz::dump_json(doc, 1)));
    write_comparison_pictures(out, r.comparison.mean, attn_viz::mean_top1(r.comparison), names,
                              " (mean over the corpus)");
}

}  // namespace attn_viz_cli
