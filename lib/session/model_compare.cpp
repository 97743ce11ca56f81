#include "model_compare.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "ranked_compare.hpp"
#include "stats_report.hpp"
#include "whole_model.hpp"

namespace attn_viz {

ComparedModels::ComparedModels(const std::string& path_a, const std::string& path_b, const std::string& tokenizer,
                               const LoadLimits& limits)
    : a(path_a, limits), b(path_b, limits) {
    for (const ModelSession* model : {&a, &b})
        if (model->encoder_decoder()) refuse_encoder_decoder(model->path(), model->model_type());
    a.load_weights();
    b.load_weights();
    check_same_shape(a, b);
    a.load_tokenizer(tokenizer);
}

void check_same_shape(const ModelSession& a, const ModelSession& b) {
    const ModelDescription &ca = a.model().description(), &cb = b.model().description();
    if (ca.dim != cb.dim || ca.n_layers != cb.n_layers || ca.n_heads != cb.n_heads || ca.n_kv_heads != cb.n_kv_heads ||
        ca.vocab_size != cb.vocab_size)
        fail_input(
            b.path(),
            fmt::format("a different architecture from {} (dim, layers, heads, KV heads or vocabulary)", a.path()));
}

ModelComparison compare_on_tokens(const ModelSession& session_a, const ModelSession& session_b,
                                  const EncodedText& input, const AnalysisOptions& options, int generate) {
    const std::vector<int>& ids = input.ids;
    WholeModel &a = session_a.model(), &b = session_b.model();
    const ModelTokenizer& tokenizer = session_a.tokenizer();
    ModelComparison result;
    result.run_a = a.run(ids, {.token_types = input.type_ids});
    result.run_b = b.run(ids, {.token_types = input.type_ids});
    std::vector<const LayerResult*> layers_a, layers_b;
    for (size_t l = 0; l < result.run_a.layers.size(); ++l)
        layers_a.push_back(&result.run_a.layers[l]), layers_b.push_back(&result.run_b.layers[l]);
    result.heads = compare_runs(layers_a, a.attention_weights(), layers_b, b.attention_weights(),
                                std::vector<int64_t>(ids.begin(), ids.end()), options);
    result.top1 = top1_agreement(layers_a, layers_b);
    result.token_labels = tokenizer.labels(ids);
    if (a.has_logits() && b.has_logits())
        result.output = compare_outputs(result.run_a.logits, result.run_b.logits, ids, tokenizer.vocab_size());
    if (generate > 0 && result.output) {
        result.generation_a = attn_viz::generate(a, tokenizer, ids, generate, {});
        result.generation_b = attn_viz::generate(b, tokenizer, ids, generate, {});
        result.generation = compare_generations(generate, result.generation_a->ids, result.generation_b->ids);
    }
    return result;
}

nlohmann::json model_comparison_json(const ModelComparison& m, const std::vector<double>& metric,
                                     const CompareSummary& summary) {
    nlohmann::json doc = comparison_json(m.heads);
    doc["summary"] = compare_summary_json(summary, m.heads, metric, m.top1);
    for (size_t n = 0; n < m.top1.size(); ++n) doc["heads"][n]["top1_agreement"] = json_number(m.top1[n]);
    if (m.output) doc["output"] = output_comparison_json(*m.output, m.generation ? &*m.generation : nullptr);
    return doc;
}

std::string output_comparison_line(const OutputComparison& o) {
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
    const GenerationComparison& g = *m.generation;
    if (g.first_divergence < 0)
        out += fmt::format("  greedy continuations ({} tokens): identical: {}\n", g.a.size(), m.generation_a->text);
    else
        out += fmt::format("  greedy continuations part at step {} of {}\n    A: {}\n    B: {}\n", g.first_divergence,
                           g.steps, m.generation_a->text, m.generation_b->text);
    return out;
}

}  // namespace attn_viz
