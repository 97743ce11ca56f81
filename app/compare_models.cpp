#include "compare_models.hpp"

#include "model_analyses.hpp"
#include "progress.hpp"
#include "token_file.hpp"

namespace attn_viz_cli {

attn_viz::ModelComparison compare_whole_models(const std::string& a, const std::string& b,
                                               const ModelCompareInput& input, const attn_viz::AnalysisOptions& options,
                                               const attn_viz::LoadLimits& limits) {
    // Step 1: both models of one shape, the tokenizer and the token ids.
    attn_viz::ComparedModels models(a, b, input.tokenizer, limits);
    const char* option = input.token_ids ? "--tokens" : "--text";
    attn_viz::ModelInput model_input;
    if (input.token_ids)
        model_input.ids = attn_viz::parse_token_ids(*input.token_ids, option);
    else
        model_input.text = input.text;
    const std::vector<int> ids = models.a.encode(model_input, {"--text", "", "--tokens"}).ids;
    models.a.check_tokens(ids, option);
    check_generate(models.a.model(), input.generate);

    // Step 2: both forward passes, every head and the outputs compared; then, if asked, both
    // greedy continuations.
    return attn_viz::compare_on_tokens(models, {ids, {}}, options, input.generate);
}

attn_viz::CompareCorpusAccumulator compare_models_over_corpus(
    const std::string& a, const std::string& b, const std::string& tokenizer, const CorpusOptionValues& corpus,
    const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits, bool quiet, std::string& note) {
    attn_viz::ComparedModels models(a, b, tokenizer, limits);
    attn_viz::CorpusDocuments documents(corpus.path, limits, corpus.shard, attn_viz::CorpusLines::json_or_text);
    Progress progress = corpus_progress(quiet, documents);
    attn_viz::CompareCorpusAccumulator accumulator =
        attn_viz::compare_models_over_corpus(models, documents, corpus.path, corpus.shard, options, limits,
                                             [&progress](int64_t sequences) { progress.update(sequences); });
    progress.finish();
    note = corpus_run_note(corpus, documents, accumulator.num_sequences());
    return accumulator;
}

}  // namespace attn_viz_cli
