// Direct logit attribution: the frozen-scale directions of the targets' logits in the residual
// stream, and each component's dot product with them (the heads' through W_O on oneDNN).
#include "logit_attribution.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "residual_components.hpp"

namespace attn_viz {
namespace {

// The directions of the targets' logits: row t is s_t center(w * U[target_t]) / c, with U[v] the
// classifier's row of token v, s_t the final norm's scale of final_residual's row t (1 and w = 1
// without a final norm) and c the logits' divisor (Granite's logits_scaling, else 1): [T, D].
// norm_bias gets b . U[target_t] / c per position.
Tensor logit_directions(const ModelWeights& weights, const Tensor& final_residual, const std::vector<int>& targets,
                        std::vector<double>& norm_bias) {
    const int64_t T = final_residual.dim(0), D = final_residual.dim(1);
    const NormWeights& norm = weights.final_norm;
    const double divisor = weights.config.logits_scaling;
    Tensor directions({T, D});
    norm_bias.assign(static_cast<size_t>(T), 0.0);
    for (int64_t t = 0; t < T; ++t) {
        const float* u = weights.classifier_matrix().ptr() + targets[static_cast<size_t>(t)] * D;  // U[target_t]
        const FrozenNorm frozen = frozen_norm(final_residual.ptr() + t * D, D, norm, weights.config);
        std::vector<double> v(static_cast<size_t>(D));
        double v_mean = 0;
        for (int64_t i = 0; i < D; ++i) {
            v[i] = frozen_norm_weight(norm, weights.config.norm, i) * u[i];
            v_mean += v[i] / static_cast<double>(D);
        }
        for (int64_t i = 0; i < D; ++i)
            directions.data[t * D + i] =
                static_cast<float>(frozen.scale * (v[i] - (frozen.centered ? v_mean : 0.0)) / divisor);
        if (!norm.bias.empty())
            for (int64_t i = 0; i < D; ++i) norm_bias[t] += double(norm.bias.data[i]) * u[i] / divisor;
    }
    return directions;
}

}  // namespace

std::string logit_attribution_obstacle(const ModelWeights& weights) {
    switch (weights.config.residual) {
        case ResidualLayout::post_norm:
            return "its norms come after each block's attention (post-norm)";
        case ResidualLayout::sandwich:
            return "a norm rescales each attention output before the residual add (pre- and post-norms)";
        case ResidualLayout::post_sublayer:
            return "a norm rescales each attention output before the residual add (post-sublayer norms)";
        case ResidualLayout::pre_norm:
        case ResidualLayout::parallel:
            break;
    }
    if (weights.config.final_logit_softcap != 0) return "its logits are soft-capped (final_logit_softcapping)";
    return "";
}

double LogitAttribution::component_sum(int64_t t) const {
    double sum = embedding[t] + norm_bias[t];
    for (int64_t l = 0; l < layers; ++l) {
        sum += attention_bias[l * tokens + t] + mlp[l * tokens + t];
        for (int64_t h = 0; h < heads; ++h) sum += head_at(l, h, t);
    }
    return sum;
}

std::vector<int> next_token_targets(const ModelRun& run) {
    const int64_t T = run.logits.dim(0), V = run.logits.dim(1);
    std::vector<int> targets(run.tokens.begin() + 1, run.tokens.end());
    const float* last = run.logits.ptr() + (T - 1) * V;
    targets.push_back(static_cast<int>(std::max_element(last, last + V) - last));
    return targets;
}

LogitAttribution attribute_logits(WholeModel& model, OnednnBackend& backend, const ModelRun& run,
                                  const std::vector<int>& targets) {
    const ModelWeights& weights = model.weights();
    if (const std::string obstacle = logit_attribution_obstacle(weights); !model.has_logits() || !obstacle.empty())
        throw Error(ErrorKind::internal, fmt::format("attribute_logits: a {} model's logits do not decompose: {}",
                                                     weights.config.architecture, obstacle));
    const int64_t T = run.final_residual.dim(0), D = run.final_residual.dim(1), V = run.logits.dim(1);
    LogitAttribution a;
    a.layers = static_cast<int64_t>(run.layers.size()), a.heads = model.description().n_heads, a.tokens = T;
    a.targets = targets;
    for (int64_t t = 0; t < T; ++t) a.logits.push_back(run.logits.data[t * V + targets[static_cast<size_t>(t)]]);
    const Tensor u = logit_directions(weights, run.final_residual, targets, a.norm_bias);  // [T, D]
    for (int64_t t = 0; t < T; ++t)
        a.embedding.push_back(dot_double(run.residual[0].ptr() + t * D, u.ptr() + t * D, D));
    const std::vector<const LayerWeights*> attention = model.attention_weights();
    const double residual_scale = weights.config.residual_scale;  // on what each block adds (Granite)
    for (int64_t l = 0; l < a.layers; ++l) {
        const LayerResult& layer = run.layers[static_cast<size_t>(l)];
        const LayerWeights& w = *attention[static_cast<size_t>(l)];
        const int64_t width = layer.context.dim(1), d_head = w.d_head;
        // g = u W_O^T: [T, H*d_h], so that head h's contribution at t is z_h,t . g_t[h d_h, (h+1) d_h).
        MatmulShape shape = dense_matmul(T, D, width);
        shape.w_strides[0] = D * width, shape.w_strides[1] = 1,
        shape.w_strides[2] = D;  // W_O [H*d_h, D] read as [D, H*d_h]
        Tensor g({T, width});
        backend.matmul(shape, u.ptr(), w.w_o.ptr(), nullptr, g.ptr());
        for (int64_t h = 0; h < a.heads; ++h)
            for (int64_t t = 0; t < T; ++t)
                a.head.push_back(residual_scale * dot_double(layer.context.ptr() + t * width + h * d_head,
                                                             g.ptr() + t * width + h * d_head, d_head));
        // Block l's feed-forward: what the block added besides its attention output.
        std::vector<float> attended(static_cast<size_t>(D)), added(static_cast<size_t>(D));
        for (int64_t t = 0; t < T; ++t) {
            a.attention_bias.push_back(w.b_o.empty() ? 0.0
                                                     : residual_scale * dot_double(w.b_o.ptr(), u.ptr() + t * D, D));
            for (int64_t i = 0; i < D; ++i)  // as finish_block adds it
                attended[i] = static_cast<float>(residual_scale) * layer.output.data[t * D + i];
            feed_forward_row(run, static_cast<size_t>(l), t, attended.data(), added.data());
            a.mlp.push_back(dot_double(added.data(), u.ptr() + t * D, D));
        }
    }
    return a;
}

}  // namespace attn_viz
