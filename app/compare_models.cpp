// Two whole models on one token sequence, head by head.
#include "compare_models.hpp"

#include <algorithm>
#include <cmath>
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
    const ModelRun run_a = model_a->run(ids), run_b = model_b->run(ids);
    std::vector<const LayerResult*> layers_a, layers_b;
    for (size_t l = 0; l < run_a.layers.size(); ++l) layers_a.push_back(&run_a.layers[l]), layers_b.push_back(&run_b.layers[l]);
    ModelComparison result;
    result.heads = compare_runs(layers_a, model_a->attention_weights(), layers_b, model_b->attention_weights(),
                                std::vector<int64_t>(ids.begin(), ids.end()), options);
    result.top1 = top1_agreement(layers_a, layers_b);
    return result;
}

void write_distance_picture(const std::string& path, const attn_viz::HeadComparison& c) {
    using namespace attn_viz;
    const int64_t L = c.first.num_layers, H = c.first.num_heads;
    std::vector<float> grid(static_cast<size_t>(L * H));
    float largest = 0;
    for (size_t n = 0; n < grid.size(); ++n) {
        grid[n] = std::isfinite(c.maps.js_distance[n]) ? static_cast<float>(c.maps.js_distance[n]) : 0.0f;
        largest = std::max(largest, grid[n]);
    }
    Visibility all;
    all.queries = L, all.keys = H;
    std::vector<std::string> layers, heads;
    for (int64_t l = 0; l < L; ++l) layers.push_back(std::string("L").append(std::to_string(l)));
    for (int64_t h = 0; h < H; ++h) heads.push_back(std::string("H").append(std::to_string(h)));
    HeatmapStyle style;
    style.colormap = "magma";
    style.vmax = largest > 0 ? largest : 1.0f;
    style.title = "JS distance between the two models' maps, per head";
    style.raw_labels = true;
    style.colorbar_label = "JS distance";
    style.row_axis_label = "layer";
    style.column_axis_label = "head";
    style.max_px = 800;
    write_head_png(path, grid.data(), all, layers, heads, style);
}

}  // namespace attn_viz_cli
