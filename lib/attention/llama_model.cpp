// The whole-model forward pass of a Llama-style decoder and greedy decoding.
#include "llama_model.hpp"

#include <algorithm>
#include <cmath>

#include "dense_ops.hpp"
#include "error.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz {
namespace {

// x: [T, D]; weight: [D] -> x_t / sqrt(mean(x_t^2) + rms_epsilon) * weight, row by row.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double rms_epsilon) {
    const int64_t T = x.dim(0), D = x.dim(1);
    Tensor y({T, D});
    for (int64_t t = 0; t < T; ++t) {
        const float* row = x.ptr() + t * D;
        double sum = 0;
        for (int64_t i = 0; i < D; ++i) sum += double(row[i]) * row[i];
        const double scale = 1.0 / std::sqrt(sum / static_cast<double>(D) + rms_epsilon);
        for (int64_t i = 0; i < D; ++i) y.data[t * D + i] = static_cast<float>(row[i] * scale * weight.data[i]);
    }
    return y;
}

// x: [T, D] -> w2(act(x w1 + b1) * (x w3 + b3)) + b2: [T, D]
Tensor gated_feed_forward(OnednnBackend& backend, const Tensor& x, const LlamaBlockWeights& block, Activation activation) {
    Tensor gate = linear(backend, x, block.w1, block.b1);  // [T, F]
    const Tensor up = linear(backend, x, block.w3, block.b3);
    activate_in_place(gate, activation);
    for (size_t i = 0; i < gate.data.size(); ++i) gate.data[i] *= up.data[i];
    return linear(backend, gate, block.w2, block.b2);
}

}  // namespace

LlamaModel::LlamaModel(OnednnBackend& backend, LlamaWeights weights) : backend_(backend), weights_(std::move(weights)) {
    const Llama2cConfig& c = weights_.config;
    description_ = {"llama", c.n_layers, c.n_heads, c.n_kv_heads, c.dim, c.vocab_size, c.seq_len};
    if (weights_.load_block) {
        streamed_attention_.resize(static_cast<size_t>(weights_.config.n_layers));
        return;
    }
    for (const LlamaBlockWeights& block : weights_.layers)
        attention_.push_back(std::make_unique<AttentionLayer>(backend_, block.attention));
}

std::vector<const LayerWeights*> LlamaModel::attention_weights() const {
    std::vector<const LayerWeights*> result;
    for (const LlamaBlockWeights& block : weights_.layers) result.push_back(&block.attention);
    for (size_t l = 0; l < streamed_attention_.size(); ++l) {
        if (!streamed_attention_[l]) streamed_attention_[l] = weights_.load_block(static_cast<int64_t>(l)).attention;
        result.push_back(&*streamed_attention_[l]);
    }
    return result;
}

uint64_t LlamaModel::fingerprint() const { return model_fingerprint(weights_); }

const LlamaBlockWeights& LlamaModel::block(size_t l) {
    if (!weights_.load_block) return weights_.layers[l];
    if (streamed_index_ != l || !streamed_block_) {
        streamed_layer_.reset();  // it refers to the block it replaces
        streamed_block_.reset();
        streamed_block_ = weights_.load_block(static_cast<int64_t>(l));
        streamed_layer_ = std::make_unique<AttentionLayer>(backend_, streamed_block_->attention);
        streamed_index_ = l;
        if (keep_attention_ && !streamed_attention_[l]) streamed_attention_[l] = streamed_block_->attention;
    }
    return *streamed_block_;
}

AttentionLayer& LlamaModel::attention_layer(size_t l) {
    if (!weights_.load_block) return *attention_[l];
    block(l);
    return *streamed_layer_;
}

ModelRun LlamaModel::run_blocks(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms,
                                const BlockVisitor& visit) {
    const Llama2cConfig& c = weights_.config;
    check_model_tokens(tokens, c.vocab_size, c.seq_len);

    // Step 1: embeddings of the tokens.
    ModelRun run;
    run.tokens = tokens;
    Tensor x = embedding_rows(weights_.token_embedding, tokens);

    // Step 2: each block adds its attention output, then its feed-forward output, to the residual stream.
    // A streamed model loads each block here, replacing the previous one.
    for (size_t l = 0; l < static_cast<size_t>(c.n_layers); ++l) {
        const Tensor normed = rms_norm(x, block(l).rms_attention, weights_.config.rms_epsilon);
        AttentionRequest request;
        request.input = &normed;
        request.with_contributions = with_contributions;
        request.with_value_norms = with_value_norms;
        Tensor entering = x;
        LayerResult result = attention_layer(l).run(request);
        add_in_place(x, result.output);
        add_feed_forward(l, x);
        visit(l, result, entering, block(l).attention);
    }

    // Step 3: final norm and the classifier.
    run.hidden_states = rms_norm(x, weights_.rms_final, c.rms_epsilon);
    run.logits = linear(backend_, run.hidden_states, weights_.classifier);
    return run;
}

Tensor LlamaModel::logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) {
    if (layer >= run.residual.size() || attention_output.shape != run.residual[layer].shape)
        throw Error(ErrorKind::internal, "logits_from: no block " + std::to_string(layer) + " of that shape in the run");
    Tensor x = run.residual[layer];
    add_in_place(x, attention_output);
    add_feed_forward(layer, x);
    for (size_t l = layer + 1; l < static_cast<size_t>(weights_.config.n_layers); ++l) {
        const Tensor normed = rms_norm(x, block(l).rms_attention, weights_.config.rms_epsilon);
        AttentionRequest request;
        request.input = &normed;
        request.with_contributions = false;
        AttentionLayer& attention = attention_layer(l);
        LayerResult result = attention.run(request);
        add_in_place(x, result.output);
        attention.recycle(std::move(result));
        add_feed_forward(l, x);
    }
    return classify(x);
}

void LlamaModel::add_feed_forward(size_t l, Tensor& x) {
    const LlamaBlockWeights& weights = block(l);
    add_in_place(x, gated_feed_forward(backend_, rms_norm(x, weights.rms_ffn, weights_.config.rms_epsilon), weights, weights_.config.activation));
}

Tensor LlamaModel::classify(const Tensor& x) {
    return linear(backend_, rms_norm(x, weights_.rms_final, weights_.config.rms_epsilon), weights_.classifier);
}

}  // namespace attn_viz
