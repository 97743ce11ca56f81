// Two whole models on one token sequence, head by head.
#include "compare_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "error.hpp"
#include "gguf.hpp"
#include "heatmap.hpp"
#include "model_tokenizer.hpp"
#include "onednn_backend.hpp"
#include "ranked_compare.hpp"
#include "token_file.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

bool is_whole_model_path(const std::string& path) {
    return std::filesystem::is_directory(path) || attn_viz::is_gguf_file(path) ||
           (path.size() > 4 && path.compare(path.size() - 4, 4, ".bin") == 0);
}

ModelComparison compare_whole_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                     const attn_viz::AnalysisOptions& options, int threads, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    // Step 1: both models of one shape, the tokenizer and the token ids.
    OnednnBackend backend(threads);
    const std::unique_ptr<WholeModel> model_a = open_whole_model(backend, a, limits), model_b = open_whole_model(backend, b, limits);
    const ModelDescription &ca = model_a->description(), &cb = model_b->description();
    if (ca.dim != cb.dim || ca.n_layers != cb.n_layers || ca.n_heads != cb.n_heads || ca.n_kv_heads != cb.n_kv_heads ||
        ca.vocab_size != cb.vocab_size)
        fail_input(b, "a different architecture from " + a + " (dim, layers, heads, KV heads or vocabulary)");
    const std::unique_ptr<ModelTokenizer> tokenizer = read_model_tokenizer(a, input.tokenizer, ca.vocab_size, limits);
    const std::vector<int> ids = input.token_ids ? parse_token_ids(*input.token_ids, "--tokens")
                                                 : encode_within_context(*tokenizer, input.text, ca.max_tokens, "--text");

    // Step 2: both forward passes, then every head compared.
    ModelComparison result;
    result.run_a = model_a->run(ids);
    result.run_b = model_b->run(ids);
    std::vector<const LayerResult*> layers_a, layers_b;
    for (size_t l = 0; l < result.run_a.layers.size(); ++l)
        layers_a.push_back(&result.run_a.layers[l]), layers_b.push_back(&result.run_b.layers[l]);
    result.heads = compare_runs(layers_a, model_a->attention_weights(), layers_b, model_b->attention_weights(),
                                std::vector<int64_t>(ids.begin(), ids.end()), options);
    result.top1 = top1_agreement(layers_a, layers_b);
    result.token_labels = tokenizer->labels(ids);

    // Step 3: the outputs: next-token distributions and, if asked, both greedy continuations.
    if (input.generate > 0) check_model_has_logits(*model_a, "--generate");
    if (!model_a->has_logits() || !model_b->has_logits()) return result;
    result.output = compare_outputs(result.run_a.logits, result.run_b.logits, ids, tokenizer->vocab_size());
    if (input.generate > 0) {
        result.generation_a = generate(*model_a, *tokenizer, ids, input.generate, {});
        result.generation_b = generate(*model_b, *tokenizer, ids, input.generate, {});
        result.generation = compare_generations(input.generate, result.generation_a->ids, result.generation_b->ids);
    }
    return result;
}

std::string output_comparison_text(const ModelComparison& m) {
    if (!m.output) return "output: the models have no next-token logits (encoders): compared at the heads only\n";
    const attn_viz::OutputComparison& o = *m.output;
    char line[512];
    std::snprintf(line, sizeof line,
                  "output: mean KL(A || B) of next-token distributions %.4g nats (largest %.4g at position %lld); loss A %.4f, "
                  "loss B %.4f nats; top-1 next tokens agree at %.3f of %zu positions\n",
                  o.mean_kl, o.kl[static_cast<size_t>(o.max_kl_position)], static_cast<long long>(o.max_kl_position), o.loss_a,
                  o.loss_b, o.top1_agreement, o.kl.size());
    std::string out = line;
    if (!m.generation) return out;
    const attn_viz::GenerationComparison& g = *m.generation;
    if (g.first_divergence < 0)
        out += "  greedy continuations (" + std::to_string(g.a.size()) + " tokens): identical: " + m.generation_a->text + "\n";
    else
        out += "  greedy continuations part at step " + std::to_string(g.first_divergence) + " of " + std::to_string(g.steps) +
               "\n    A: " + m.generation_a->text + "\n    B: " + m.generation_b->text + "\n";
    return out;
}

void write_head_grid_picture(const std::string& path, const attn_viz::HeadComparison& c, const std::vector<double>& values,
                             const HeadGridPicture& picture) {
    using namespace attn_viz;
    const int64_t L = c.first.num_layers, H = c.first.num_heads;
    std::vector<float> grid(static_cast<size_t>(L * H));
    float largest = 0;
    for (size_t n = 0; n < grid.size(); ++n) {
        grid[n] = std::isfinite(values[n]) ? static_cast<float>(values[n]) : picture.low;
        largest = std::max(largest, grid[n]);
    }
    Visibility all;
    all.queries = L, all.keys = H;
    std::vector<std::string> layers, heads;
    for (int64_t l = 0; l < L; ++l) layers.push_back(std::string("L").append(std::to_string(l)));
    for (int64_t h = 0; h < H; ++h) heads.push_back(std::string("H").append(std::to_string(h)));
    HeatmapStyle style;
    style.colormap = picture.colormap;
    style.vmin = picture.low;
    style.vmax = picture.high > picture.low ? picture.high : (largest > 0 ? largest : 1.0f);
    style.title = picture.title;
    style.raw_labels = true;
    style.colorbar_label = picture.measure;
    style.row_axis_label = "layer";
    style.column_axis_label = "head";
    style.max_px = 800;
    write_head_png(path, grid.data(), all, layers, heads, style);
}

}  // namespace attn_viz_cli
