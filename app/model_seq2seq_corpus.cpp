#include "model_seq2seq_corpus.hpp"

#include <array>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "corpus_fingerprint.hpp"
#include "error.hpp"
#include "model_corpus_run.hpp"
#include "model_seq2seq.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "run_output.hpp"
#include "run_steps.hpp"
#include "seq2seq_corpus.hpp"
#include "seq2seq_report.hpp"
#include "sequence_stream.hpp"
#include "weight_similarity.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz_cli {
namespace {

using namespace attn_viz;

// The forward pass over one corpus line's pair; what the model refuses (ids, context, memory) names `where`.
Seq2SeqRun forward(Seq2SeqModel& model, const SequencePair& pair, const LoadLimits& limits, const std::string& where,
                   Timings& timings) {
    Timings::Scope t(timings, "forward");
    try {
        check_seq2seq_run_memory(model.weights().config.blocks, model.weights().config.n_decoder_layers,
                                 static_cast<int64_t>(pair.source.size()), static_cast<int64_t>(pair.target.size()),
                                 limits);
        return model.run(pair.source, pair.target);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        fail_input(where, e.what());
    }
}

// Every stack's analysis of one run (analyze_seq2seq, as write_seq2seq_report's) and its cross
// heads' alignment into `corpus`; each stack's weight similarities computed on the first run, kept
// in `similarity`.
void add_run(Seq2SeqCorpusAccumulator& corpus, const Seq2SeqRun& run, const Seq2SeqWeights& weights,
             const ReportOptions& options, std::array<std::optional<WeightSimilarities>, 3>& similarity,
             OnednnBackend& backend, int64_t position) {
    Seq2SeqReportInput in;
    in.backend = &backend;
    in.run = &run;
    in.weights = &weights;
    for (size_t k = 0; k < similarity.size(); ++k) {
        if (!similarity[k])
            similarity[k] = weight_similarities(seq2seq_stack_input(in, static_cast<int>(k)).weights, false, backend);
        in.weight_similarity[k] = &*similarity[k];
    }
    corpus.add_corpus_sequence(analyze_seq2seq(in, options), token_pair_fingerprint(run.source, run.target), position);
}

}  // namespace

int run_seq2seq_corpus(const ModelOptions& o, ModelSession& session, const LoadLimits& limits) {
    if (o.report.html || !o.analyses.ablate.empty())
        throw Error(ErrorKind::usage, fmt::format("{}: not implemented over an encoder-decoder's corpus yet (its "
                                                  "statistics are in stats.json)",
                                                  o.report.html ? "--html" : "--ablate"));
    std::vector<std::string> outputs = seq2seq_dump_paths(o.report.dump_attention);
    outputs.push_back(o.corpus.save_partial);
    const std::unique_ptr<OutputDir> out_dir = open_run_output(o, {o.checkpoint, o.tokenizer, o.corpus.path}, outputs);
    OutputDir& out = *out_dir;
    Timings timings;

    // Step 1: the model and its tokenizer; each line is validated as it is read.
    {
        Timings::Scope t(timings, "load");
        session.load(o.tokenizer);
    }
    Seq2SeqModel* model = &session.seq2seq();
    const ModelTokenizer* tokenizer = &session.tokenizer();
    OnednnBackend& backend = session.backend();

    // Step 2: each pair of the corpus (or of its shard) through the model, into running moments.
    CorpusDocuments documents(o.corpus.path, limits, o.corpus.shard, CorpusLines::json_or_text);
    Seq2SeqCorpusAccumulator corpus(seq2seq_fingerprint(model->weights()), o.report.thresholds);
    std::array<std::optional<WeightSimilarities>, 3> similarity;
    nlohmann::json doc;
    std::string where;
    Progress progress = corpus_progress(o.output.quiet, documents);
    while (attn_viz::next_corpus_document(documents, doc, where, timings)) {
        const SequencePair pair = model_sequence_pair_ids(doc, *tokenizer, model->weights().config.blocks.max_tokens,
                                                          limits.memory_budget, where);
        const Seq2SeqRun run = forward(*model, pair, limits, where, timings);
        Timings::Scope t(timings, "statistics");
        add_run(corpus, run, model->weights(), o.report, similarity, backend, documents.position());
        progress.update(corpus.num_sequences());
    }
    progress.finish();

    // Step 3: the report and the partial, moved into place together; then what is printed.
    corpus.set_coverage(
        attn_viz::corpus_run_coverage(o.corpus.path, o.corpus.shard, documents, corpus.num_sequences()));
    const Seq2SeqAnalysis analysis = corpus.finish(o.report.thresholds);
    const nlohmann::json provenance = run_provenance();  // every file of the corpus is read by now
    write_seq2seq_corpus_report(out, analysis,
                                {{"corpora", corpora_json(corpus.coverage())}, {"provenance", provenance}}, o.report);
    if (!o.corpus.save_partial.empty()) corpus.save_partial(out.external_file(o.corpus.save_partial));
    RunOutput printed("model", o.json, o.output.quiet);
    for (const auto& [name, stack] : analysis.stacks)
        printed.add_analysis(stack, fmt::format("{}/", name), fmt::format("\n{}:\n", name));
    printed.add_text(corpus_run_note(o.corpus, documents, corpus.num_sequences()));
    finish_run(o, out, timings, printed, provenance, peak_memory_line());
    return 0;
}

}  // namespace attn_viz_cli
