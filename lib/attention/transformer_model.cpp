// The whole-model forward pass of GPT-2, GPT-NeoX and BERT.
#include "transformer_model.hpp"

#include <cmath>

#include "dense_ops.hpp"
#include "error.hpp"

namespace attn_viz {
namespace {

// x: [T, D] -> each row (x - mean) / sqrt(var + eps) * weight + bias (biased variance, as torch).
Tensor layer_norm(const Tensor& x, const LayerNormWeights& norm, double epsilon) {
    const int64_t T = x.dim(0), D = x.dim(1);
    Tensor y = Tensor::uninitialized({T, D});
    for (int64_t t = 0; t < T; ++t) {
        const float* row = x.ptr() + t * D;
        double sum = 0, squares = 0;
        for (int64_t i = 0; i < D; ++i) sum += row[i];
        const double mean = sum / static_cast<double>(D);
        for (int64_t i = 0; i < D; ++i) squares += (row[i] - mean) * (row[i] - mean);
        const double scale = 1.0 / std::sqrt(squares / static_cast<double>(D) + epsilon);
        for (int64_t i = 0; i < D; ++i)
            y.data[t * D + i] = static_cast<float>((row[i] - mean) * scale * norm.weight.data[i] + norm.bias.data[i]);
    }
    return y;
}

void gelu_in_place(Tensor& x, Activation activation) {
    constexpr double sqrt_half = 0.70710678118654752440, sqrt_two_over_pi = 0.79788456080286535588;
    for (float& v : x.data) {
        const double a = v;
        v = static_cast<float>(activation == Activation::gelu_erf ? 0.5 * a * (1.0 + std::erf(a * sqrt_half))
                                                                  : 0.5 * a * (1.0 + std::tanh(sqrt_two_over_pi * (a + 0.044715 * a * a * a))));
    }
}

// x: [T, D] -> GELU(x W_in + b_in) W_out + b_out: [T, D]
Tensor mlp(OnednnBackend& backend, const Tensor& x, const TransformerBlockWeights& block, Activation activation) {
    Tensor hidden = linear(backend, x, block.w_in, block.b_in);  // [T, F]
    gelu_in_place(hidden, activation);
    return linear(backend, hidden, block.w_out, block.b_out);
}

}  // namespace

TransformerModel::TransformerModel(OnednnBackend& backend, TransformerWeights weights)
    : backend_(backend), weights_(std::move(weights)) {
    for (const TransformerBlockWeights& block : weights_.layers)
        attention_.push_back(std::make_unique<AttentionLayer>(backend_, block.attention));
}

ModelRun TransformerModel::run(const std::vector<int>& tokens, bool with_contributions) {
    const TransformerConfig& c = weights_.config;
    check_model_tokens(tokens, c.vocab_size, c.max_positions);

    // Step 1: token embeddings, plus learned positions and token type 0 where the model has them.
    ModelRun run;
    run.tokens = tokens;
    Tensor x = embedding_rows(weights_.token_embedding, tokens);
    const int64_t T = x.dim(0), D = x.dim(1);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < D; ++i) {
            if (!weights_.position_embedding.empty()) x.data[t * D + i] += weights_.position_embedding.data[t * D + i];
            if (!weights_.token_type_embedding.empty()) x.data[t * D + i] += weights_.token_type_embedding.data[i];
        }
    if (!weights_.embedding_norm.weight.empty()) x = layer_norm(x, weights_.embedding_norm, c.norm_epsilon);

    // Step 2: the blocks, each in its variant's arrangement of norms and residuals.
    for (size_t l = 0; l < weights_.layers.size(); ++l) {
        const TransformerBlockWeights& block = weights_.layers[l];
        const Tensor attention_input = c.post_norm ? x : layer_norm(x, block.attention_norm, c.norm_epsilon);
        AttentionRequest request;
        request.input = &attention_input;
        request.with_contributions = with_contributions;
        run.layers.push_back(attention_[l]->run(request));
        const Tensor& attended = run.layers.back().output;
        if (c.post_norm) {
            add_in_place(x, attended);
            x = layer_norm(x, block.attention_norm, c.norm_epsilon);
            add_in_place(x, mlp(backend_, x, block, c.activation));
            x = layer_norm(x, block.mlp_norm, c.norm_epsilon);
        } else if (c.parallel_residual) {
            const Tensor mlp_output = mlp(backend_, layer_norm(x, block.mlp_norm, c.norm_epsilon), block, c.activation);
            add_in_place(x, attended);
            add_in_place(x, mlp_output);
        } else {
            add_in_place(x, attended);
            add_in_place(x, mlp(backend_, layer_norm(x, block.mlp_norm, c.norm_epsilon), block, c.activation));
        }
    }

    // Step 3: the final norm and the classifier of a decoder.
    run.hidden_states = weights_.final_norm.weight.empty() ? std::move(x) : layer_norm(x, weights_.final_norm, c.norm_epsilon);
    if (has_logits()) run.logits = linear(backend_, run.hidden_states, weights_.classifier);
    return run;
}

}  // namespace attn_viz
