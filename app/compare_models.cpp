// Two whole models on one token sequence, head by head.
#include "compare_models.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "model_analyses.hpp"
#include "model_tokenizer.hpp"
#include "model_tokenizer_file.hpp"
#include "onednn_backend.hpp"
#include "ranked_compare.hpp"
#include "token_file.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

ComparedModels::ComparedModels(const std::string& path_a, const std::string& path_b, const std::string& tokenizer_path,
                               attn_viz::OnednnBackend& backend, const attn_viz::LoadLimits& limits)
    : backend(backend) {
    const attn_viz::ModelFiles files_a = attn_viz::open_model_files(path_a, limits);
    a = attn_viz::open_whole_model(backend, files_a, limits);
    b = attn_viz::open_whole_model(backend, path_b, limits);
    const attn_viz::ModelDescription &ca = a->description(), &cb = b->description();
    if (ca.dim != cb.dim || ca.n_layers != cb.n_layers || ca.n_heads != cb.n_heads || ca.n_kv_heads != cb.n_kv_heads ||
        ca.vocab_size != cb.vocab_size)
        attn_viz::fail_input(
            path_b,
            fmt::format("a different architecture from {} (dim, layers, heads, KV heads or vocabulary)", path_a));
    tokenizer = attn_viz::read_model_tokenizer(files_a, tokenizer_path, ca.vocab_size, limits);
}

ModelComparison compare_on_tokens(ComparedModels& models, const attn_viz::EncodedText& input,
                                  const attn_viz::AnalysisOptions& options) {
    using namespace attn_viz;
    const std::vector<int>& ids = input.ids;
    ModelComparison result;
    result.run_a = models.a->run(ids, {.token_types = input.type_ids});
    result.run_b = models.b->run(ids, {.token_types = input.type_ids});
    std::vector<const LayerResult*> layers_a, layers_b;
    for (size_t l = 0; l < result.run_a.layers.size(); ++l)
        layers_a.push_back(&result.run_a.layers[l]), layers_b.push_back(&result.run_b.layers[l]);
    result.heads = compare_runs(layers_a, models.a->attention_weights(), layers_b, models.b->attention_weights(),
                                std::vector<int64_t>(ids.begin(), ids.end()), options);
    result.top1 = top1_agreement(layers_a, layers_b);
    result.token_labels = models.tokenizer->labels(ids);
    if (models.a->has_logits() && models.b->has_logits())
        result.output = compare_outputs(result.run_a.logits, result.run_b.logits, ids, models.tokenizer->vocab_size());
    return result;
}

ModelComparison compare_whole_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                     const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    // Step 1: both models of one shape, the tokenizer and the token ids.
    ComparedModels models(a, b, input.tokenizer, *options.backend, limits);
    const char* option = input.token_ids ? "--tokens" : "--text";
    const ModelDescription& description = models.a->description();
    const std::vector<int> ids =
        input.token_ids ? parse_token_ids(*input.token_ids, option)
                        : encode_within_context(*models.tokenizer, input.text, description.max_tokens, option);
    check_model_tokens(ids, description.vocab_size, description.max_tokens, option);
    check_generate(*models.a, input.generate);

    // Step 2: both forward passes, every head and the outputs compared; then, if asked, both
    // greedy continuations.
    ModelComparison result = compare_on_tokens(models, {ids, {}}, options);
    if (input.generate > 0 && result.output) {
        result.generation_a = attn_viz::generate(*models.a, *models.tokenizer, ids, input.generate, {});
        result.generation_b = attn_viz::generate(*models.b, *models.tokenizer, ids, input.generate, {});
        result.generation = compare_generations(input.generate, result.generation_a->ids, result.generation_b->ids);
    }
    return result;
}

std::string output_comparison_line(const attn_viz::OutputComparison& o) {
    return fmt::format(
        "output: mean KL(A || B) of next-token distributions {:.4g} nats (largest {:.4g} at position {}); "
        "loss A {:.4f}, loss B {:.4f} nats; top-1 next tokens agree at {:.3f} of {} positions\n",
        o.mean_kl, o.kl[static_cast<size_t>(o.max_kl_position)], o.max_kl_position, o.loss_a, o.loss_b,
        o.top1_agreement, o.kl.size());
}

std::string output_comparison_text(const ModelComparison& m) {
    if (!m.output) return "output: the models have no next-token logits (encoders): compared at the heads only\n";
    std::string out = output_comparison_line(*m.output);
    if (!m.generation) return out;
    const attn_viz::GenerationComparison& g = *m.generation;
    if (g.first_divergence < 0)
        out += fmt::format("  greedy continuations ({} tokens): identical: {}\n", g.a.size(), m.generation_a->text);
    else
        out += fmt::format("  greedy continuations part at step {} of {}\n    A: {}\n    B: {}\n", g.first_divergence,
                           g.steps, m.generation_a->text, m.generation_b->text);
    return out;
}

}  // namespace attn_viz_cli
