// The whole-model forward pass of GPT-2, GPT-NeoX and BERT.
#include "transformer_model.hpp"

#include <cmath>

#include "dense_ops.hpp"
#include "error.hpp"
#include "weights_fingerprint.hpp"

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

// x: [T, D] -> activation(x W_in + b_in) W_out + b_out: [T, D]
Tensor mlp(OnednnBackend& backend, const Tensor& x, const TransformerBlockWeights& block, Activation activation) {
    Tensor hidden = linear(backend, x, block.w_in, block.b_in);  // [T, F]
    activate_in_place(hidden, activation);
    return linear(backend, hidden, block.w_out, block.b_out);
}

}  // namespace

TransformerModel::TransformerModel(OnednnBackend& backend, TransformerWeights weights)
    : backend_(backend), weights_(std::move(weights)) {
    const TransformerConfig& c = weights_.config;
    const LayerWeights* first = weights_.layers.empty() ? nullptr : &weights_.layers.front().attention;
    description_ = {c.model_type, c.num_layers, first ? first->num_heads : 0, first ? first->num_kv_heads : 0, c.d_model, c.vocab_size,
                    c.max_positions};
    for (const TransformerBlockWeights& block : weights_.layers)
        attention_.push_back(std::make_unique<AttentionLayer>(backend_, block.attention));
}

std::vector<const LayerWeights*> TransformerModel::attention_weights() const {
    std::vector<const LayerWeights*> result;
    for (const TransformerBlockWeights& block : weights_.layers) result.push_back(&block.attention);
    return result;
}

uint64_t TransformerModel::fingerprint() const { return model_fingerprint(weights_); }

Tensor TransformerModel::attention_input(size_t l, const Tensor& x) const {
    const TransformerConfig& c = weights_.config;
    return c.post_norm ? x : layer_norm(x, weights_.layers[l].attention_norm, c.norm_epsilon);
}

void TransformerModel::finish_block(size_t l, Tensor& x, const Tensor& attended) {
    const TransformerConfig& c = weights_.config;
    const TransformerBlockWeights& block = weights_.layers[l];
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

Tensor TransformerModel::final_hidden_states(Tensor x) const {
    return weights_.final_norm.weight.empty() ? std::move(x) : layer_norm(x, weights_.final_norm, weights_.config.norm_epsilon);
}

ModelRun TransformerModel::run_blocks(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms,
                                      const BlockVisitor& visit) {
    const TransformerConfig& c = weights_.config;
    check_model_tokens(tokens, c.vocab_size, c.max_positions);

    // Step 1: token embeddings, plus learned positions and token type 0 where the model has them.
    ModelRun run;
    run.tokens = tokens;
    Tensor x = embedding_rows(weights_.token_embedding, tokens);
    const int64_t T = x.dim(0), D = x.dim(1);
    if (!weights_.position_embedding.empty())  // rows 0..T-1 of [max_positions, D]: the same layout as x
        for (int64_t i = 0; i < T * D; ++i) x.data[i] += weights_.position_embedding.data[i];
    if (!weights_.token_type_embedding.empty())
        for (int64_t t = 0; t < T; ++t)
            for (int64_t i = 0; i < D; ++i) x.data[t * D + i] += weights_.token_type_embedding.data[i];
    if (!weights_.embedding_norm.weight.empty()) x = layer_norm(x, weights_.embedding_norm, c.norm_epsilon);

    // Step 2: the blocks, each in its variant's arrangement of norms and residuals.
    for (size_t l = 0; l < weights_.layers.size(); ++l) {
        Tensor entering = x;
        const Tensor input = attention_input(l, x);
        AttentionRequest request;
        request.input = &input;
        request.with_contributions = with_contributions;
        request.with_value_norms = with_value_norms;
        LayerResult result = attention_[l]->run(request);
        finish_block(l, x, result.output);
        visit(l, result, entering, weights_.layers[l].attention);
    }

    // Step 3: the final norm and the classifier of a decoder.
    run.hidden_states = final_hidden_states(std::move(x));
    if (has_logits()) run.logits = linear(backend_, run.hidden_states, weights_.classifier);
    return run;
}

Tensor TransformerModel::logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) {
    if (!has_logits()) throw Error(ErrorKind::internal, "logits_from: a " + weights_.config.model_type + " model has no next-token logits");
    if (layer >= run.residual.size() || attention_output.shape != run.residual[layer].shape)
        throw Error(ErrorKind::internal, "logits_from: no block " + std::to_string(layer) + " of that shape in the run");
    Tensor x = run.residual[layer];
    finish_block(layer, x, attention_output);
    for (size_t l = layer + 1; l < weights_.layers.size(); ++l) {
        const Tensor input = attention_input(l, x);
        AttentionRequest request;
        request.input = &input;
        request.with_contributions = false;
        LayerResult result = attention_[l]->run(request);
        finish_block(l, x, result.output);
        attention_[l]->recycle(std::move(result));
    }
    return linear(backend_, final_hidden_states(std::move(x)), weights_.classifier);
}

}  // namespace attn_viz
