// The whole-model forward pass of every family, each block run by its norm kind, feed-forward
// kind and residual layout.
#include "whole_model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "block_ops.hpp"
#include "dense_ops.hpp"
#include "error.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz {

std::string model_description(const std::string& path, const ModelDescription& model) {
    return fmt::format("{} ({}, {} layers x {} heads)", path, model.architecture, model.n_layers, model.n_heads);
}

WholeModel::WholeModel(OnednnBackend& backend, ModelWeights weights) : backend_(backend), weights_(std::move(weights)) {
    const ModelConfig& c = weights_.config;
    description_ = {
        c.architecture, c.n_layers,   c.n_heads,
        c.n_kv_heads,   c.d_model,    c.vocab_size,
        c.head_dim,     c.max_tokens, weights_.token_type_embedding.empty() ? 0 : weights_.token_type_embedding.dim(0)};
    if (!weights_.blocks || weights_.blocks->n_layers() != c.n_layers)
        throw Error(ErrorKind::internal, fmt::format("WholeModel: the weights hold {} blocks, the configuration {}",
                                                     weights_.blocks ? weights_.blocks->n_layers() : 0, c.n_layers));
    if (weights_.blocks->streams()) {
        streamed_attention_.resize(static_cast<size_t>(c.n_layers));
        return;
    }
    for (int64_t l = 0; l < c.n_layers; ++l)
        attention_.push_back(std::make_unique<AttentionLayer>(backend_, weights_.blocks->held(l)->attention));
}

std::vector<const LayerWeights*> WholeModel::attention_weights() const {
    std::vector<const LayerWeights*> result;
    for (int64_t l = 0; l < description_.n_layers; ++l) {
        if (const BlockWeights* held = weights_.blocks->held(l)) {
            result.push_back(&held->attention);
            continue;
        }
        std::optional<LayerWeights>& kept = streamed_attention_[static_cast<size_t>(l)];
        if (!kept) kept = weights_.blocks->load(l).attention;
        result.push_back(&*kept);
    }
    return result;
}

uint64_t WholeModel::fingerprint(const BlockObserver& on_block) const { return model_fingerprint(weights_, on_block); }

ModelRun WholeModel::run(const std::vector<int>& tokens, const ForwardRequest& request, const StepCallback& on_layer) {
    std::vector<LayerResult> layers;
    std::vector<Tensor> residual;
    ModelRun run =
        run_blocks(tokens, request, [&](size_t l, LayerResult& result, Tensor& entering, const LayerWeights&) {
            // A streamed model's results kept for every layer would keep every
            // block's W_O Gram too ([H d_h]^2 each), which its layer drops.
            if (weights_.blocks->streams()) result.output_gram.reset();
            layers.push_back(std::move(result));
            residual.push_back(std::move(entering));
            if (on_layer) on_layer(static_cast<int64_t>(l) + 1, description().n_layers);
        });
    run.layers = std::move(layers);
    run.residual = std::move(residual);
    return run;
}

ModelRun WholeModel::run_blocks(const std::vector<int>& tokens, const ForwardRequest& request,
                                const BlockVisitor& visit) {
    const ModelConfig& c = weights_.config;
    check_model_tokens(tokens, c.vocab_size, c.max_tokens);

    // Step 1: the embeddings of the tokens (with positions, token type and norm where the model has them).
    ModelRun run;
    run.tokens = tokens;
    run.token_types = request.token_types;
    Tensor x = embedded(tokens, request.token_types);

    // Step 2: the blocks, each in its residual layout. A streamed model loads each block here,
    // replacing the previous one. The map a visitor leaves in its result is the next block's map
    // memory: a fresh [H, T, T] buffer per block cost 131k page faults at H = 32, T = 2047.
    Tensor spare_map;
    for (size_t l = 0; l < static_cast<size_t>(c.n_layers); ++l) {
        Tensor entering = x;
        attention_layer(l).recycle(std::move(spare_map));
        LayerResult result = run_block(l, x, request.contributions, request.value_norms);
        visit(l, result, entering, block(l).attention);
        spare_map = std::move(result.attention);
    }

    // Step 3: the final norm and the classifier, where the model has them (and logits are asked).
    run.final_residual = x;  // what direct logit attribution decomposes
    run.hidden_states = final_hidden_states(std::move(x));
    if (has_logits() && request.logits) run.logits = logits_of(run.hidden_states);
    return run;
}

Tensor WholeModel::logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) {
    if (!has_logits())
        throw Error(ErrorKind::internal,
                    fmt::format("logits_from: a {} model has no next-token logits", weights_.config.architecture));
    return logits_of(hidden_states_from(run, layer, attention_output));
}

Tensor WholeModel::hidden_states_from(const ModelRun& run, size_t layer, const Tensor& attention_output) {
    if (layer >= run.residual.size() || attention_output.shape != run.residual[layer].shape)
        throw Error(ErrorKind::internal,
                    fmt::format("hidden_states_from: no block {} of that shape in the run", layer));
    Tensor x = run.residual[layer];
    finish_block(layer, x, attention_output);
    for (size_t l = layer + 1; l < static_cast<size_t>(weights_.config.n_layers); ++l) {
        const Tensor input = attention_input(l, x);
        AttentionRequest request;
        request.input = &input;
        request.with_contributions = false;
        AttentionLayer& attention = attention_layer(l);
        LayerResult result = attention.run(request);
        finish_block(l, x, result.output);
        attention.recycle(std::move(result));
    }
    return final_hidden_states(std::move(x));
}

Tensor WholeModel::masked_lm_logits(const Tensor& hidden_states) {
    const MaskedLmHead& m = weights_.masked_lm;
    if (m.empty()) throw Error(ErrorKind::internal, "masked_lm_logits: the model has no masked-LM head");
    Tensor x = linear_out_in(backend_, hidden_states, m.transform, m.transform_bias);
    activate_in_place(x, weights_.config.activation);
    return linear_out_in(backend_, normalized_by(x, m.norm), m.decoder.empty() ? weights_.token_embedding : m.decoder,
                         m.bias);
}

Tensor WholeModel::logits_of(const Tensor& hidden_states) {
    Tensor logits = linear_out_in(backend_, hidden_states, weights_.classifier_matrix());
    if (const auto divisor = static_cast<float>(weights_.config.logits_scaling); divisor != 1.0f)
        for (float& v : logits.data) v /= divisor;
    const double cap = weights_.config.final_logit_softcap;
    if (cap > 0)
        for (float& v : logits.data) v = static_cast<float>(cap * std::tanh(v / cap));
    return logits;
}

Tensor WholeModel::embedded(const std::vector<int>& tokens, const std::vector<int>& token_types) const {
    Tensor x = embedding_rows(weights_.token_embedding, tokens);
    const int64_t T = x.dim(0), D = x.dim(1);
    if (weights_.config.embedding_scale != 1.0f)
        for (float& v : x.data) v *= weights_.config.embedding_scale;
    if (!weights_.position_embedding.empty())  // rows 0..T-1 of [max_tokens, D]: the same layout as x
        for (int64_t i = 0; i < T * D; ++i) x.data[i] += weights_.position_embedding.data[i];
    if (!weights_.token_type_embedding.empty()) {
        const Tensor& rows = weights_.token_type_embedding;  // [types, D]
        const int64_t types = rows.dim(0);
        if (!token_types.empty() && static_cast<int64_t>(token_types.size()) != T)
            throw Error(ErrorKind::internal, fmt::format("{} token types for {} tokens", token_types.size(), T));
        for (int64_t t = 0; t < T; ++t) {
            const int type = types > 1 && !token_types.empty() ? token_types[t] : 0;
            if (type < 0 || type >= types)
                throw Error(ErrorKind::bad_input,
                            fmt::format("token {} is of type {}, but the model has token types 0..{} only", t, type,
                                        types - 1));
            const float* row = rows.ptr() + type * D;
            for (int64_t i = 0; i < D; ++i) x.data[t * D + i] += row[i];
        }
    }
    if (!weights_.embedding_norm.weight.empty()) x = normalized_by(x, weights_.embedding_norm);
    return x;
}

Tensor WholeModel::attention_input(size_t l, const Tensor& x) {
    const ResidualLayout residual = weights_.config.residual;
    const bool unnormalized = residual == ResidualLayout::post_norm || residual == ResidualLayout::post_sublayer;
    return unnormalized ? x : normalized_by(x, block(l).attention_norm);
}

void WholeModel::finish_block(size_t l, Tensor& x, const Tensor& attended) {
    const ModelConfig& c = weights_.config;
    const BlockWeights& b = block(l);
    const auto scale = static_cast<float>(c.residual_scale);  // each sublayer's output, before its add (Granite)
    switch (c.residual) {
        case ResidualLayout::pre_norm:
            add_in_place(x, attended, scale);
            add_in_place(x, feed_forward(backend_, normalized_by(x, b.feed_forward_norm), b, c), scale);
            break;
        case ResidualLayout::parallel: {
            const Tensor ffn_output = feed_forward(backend_, normalized_by(x, b.feed_forward_norm), b, c);
            add_in_place(x, attended, scale);
            add_in_place(x, ffn_output, scale);
            break;
        }
        case ResidualLayout::sandwich:
            add_in_place(x, normalized_by(attended, b.attention_output_norm), scale);
            add_in_place(x,
                         normalized_by(feed_forward(backend_, normalized_by(x, b.feed_forward_norm), b, c),
                                       b.feed_forward_output_norm),
                         scale);
            break;
        case ResidualLayout::post_sublayer:
            add_in_place(x, normalized_by(attended, b.attention_output_norm), scale);
            add_in_place(x, normalized_by(feed_forward(backend_, x, b, c), b.feed_forward_output_norm), scale);
            break;
        case ResidualLayout::post_norm:
            add_in_place(x, attended, scale);
            x = normalized_by(x, b.attention_norm);
            add_in_place(x, feed_forward(backend_, x, b, c), scale);
            x = normalized_by(x, b.feed_forward_norm);
            break;
    }
}

Tensor WholeModel::final_hidden_states(Tensor x) const {
    return weights_.final_norm.weight.empty() ? std::move(x) : normalized_by(x, weights_.final_norm);
}

Tensor WholeModel::normalized_by(const Tensor& x, const NormWeights& norm) const {
    return normalized(x, norm, weights_.config.norm, weights_.config.norm_epsilon);
}

const BlockWeights& WholeModel::block(size_t l) {
    if (const BlockWeights* held = weights_.blocks->held(static_cast<int64_t>(l))) return *held;
    if (streamed_index_ != l || !streamed_block_) {
        streamed_layer_.reset();  // it refers to the block it replaces
        weights_.block(static_cast<int64_t>(l), streamed_block_);
        streamed_layer_ = std::make_unique<AttentionLayer>(backend_, streamed_block_->attention);
        streamed_index_ = l;
        if (keep_attention_ && !streamed_attention_[l]) streamed_attention_[l] = streamed_block_->attention;
    }
    return *streamed_block_;
}

AttentionLayer& WholeModel::attention_layer(size_t l) {
    if (!weights_.blocks->streams()) return *attention_[l];
    block(l);
    return *streamed_layer_;
}

}  // namespace attn_viz
