#include "composition_scores.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.hpp"
#include "gram_matrix.hpp"

namespace attn_viz {
namespace {

// One layer's weights with its norm folded in: W_Q, W_K, W_V [D, n d_h] with row i times
// weight_i, then (center) each column's mean over D removed; W_O [H d_h, D] with (center) each
// row's mean removed.
struct FoldedLayer {
    Tensor q, k, v, o;
    Tensor gram_q, gram_k, gram_v, gram_o;  // columns' inner products of q, k, v; rows' of o
    int64_t heads = 0, group = 1, d_head = 0;
    int64_t kv_col(int64_t h) const { return (h / group) * d_head; }
};

// m: [R, C] -> each column's mean over the rows removed (columns), or each row's mean over the
// columns, in place.
void remove_means(Tensor& m, bool columns) {
    const int64_t R = m.dim(0), C = m.dim(1);
    const int64_t vectors = columns ? C : R, length = columns ? R : C, step = columns ? C : 1, next = columns ? 1 : C;
    for (int64_t v = 0; v < vectors; ++v) {
        float* first = m.ptr() + v * next;
        double mean = 0;
        for (int64_t i = 0; i < length; ++i) mean += first[i * step];
        mean /= static_cast<double>(length);
        for (int64_t i = 0; i < length; ++i) first[i * step] = static_cast<float>(first[i * step] - mean);
    }
}

// w: [D, n] -> diag(weight) w, columns centred when `center`.
Tensor folded_reader(const Tensor& w, const Tensor* weight, bool center) {
    Tensor out = w;
    const int64_t D = w.dim(0), n = w.dim(1);
    if (weight)
        for (int64_t i = 0; i < D; ++i)
            for (int64_t j = 0; j < n; ++j) out.data[i * n + j] *= weight->data[i];
    if (center) remove_means(out, true);
    return out;
}

// w_o: [H d_h, D] -> each row centred when `center`.
Tensor folded_writer(const Tensor& w_o, bool center) {
    Tensor out = w_o;
    if (center) remove_means(out, false);
    return out;
}

FoldedLayer fold(const LayerWeights& w, const Tensor* weight, bool center, OnednnBackend& backend) {
    FoldedLayer f;
    f.q = folded_reader(w.w_q, weight, center), f.k = folded_reader(w.w_k, weight, center);
    f.v = folded_reader(w.w_v, weight, center), f.o = folded_writer(w.w_o, center);
    f.gram_q = gram(backend, f.q, false), f.gram_k = gram(backend, f.k, false);
    f.gram_v = gram(backend, f.v, false), f.gram_o = gram(backend, f.o, true);
    f.heads = w.num_heads, f.group = w.num_heads / w.num_kv_heads, f.d_head = w.d_head;
    return f;
}

// A head's D x D circuit A S as its factors' Gram blocks: left = A^T A, right = S S^T (d_h x d_h
// blocks of the layer's Gram matrices at the given first rows/columns).
struct Circuit {
    const Tensor* left;
    int64_t left_at;
    const Tensor* right;
    int64_t right_at;
};

double squared_norm(const Circuit& c, int64_t d_head) {
    return block_inner(*c.left, c.left_at, c.left_at, *c.right, c.right_at, c.right_at, d_head);
}

// gl: A^T A block at gl_at, m: M's d_h x d_h block at (row, col) of `m`, gr: S S^T block at
// gr_at -> ||A M S||_F^2 = <(A^T A) M, M (S S^T)>_F, in double.
double squared_product_norm(const Tensor& gl, int64_t gl_at, const Tensor& m, int64_t row, int64_t col,
                            const Tensor& gr, int64_t gr_at, int64_t d) {
    const int64_t nl = gl.dim(1), nm = m.dim(1), nr = gr.dim(1);
    std::vector<double> left(static_cast<size_t>(d * d), 0.0), right(left);
    for (int64_t x = 0; x < d; ++x)
        for (int64_t z = 0; z < d; ++z) {
            const double g = gl.data[(gl_at + x) * nl + gl_at + z];
            const double mm = m.data[(row + x) * nm + col + z];
            for (int64_t y = 0; y < d; ++y) {
                left[x * d + y] += g * m.data[(row + z) * nm + col + y];         // (A^T A M)[x, y]
                right[x * d + y] += mm * gr.data[(gr_at + z) * nr + gr_at + y];  // (M S S^T)[x, y]
            }
        }
    double sum = 0;
    for (size_t i = 0; i < left.size(); ++i) sum += left[i] * right[i];
    return sum;
}

}  // namespace

const char* composition_kind_name(CompositionKind kind) {
    return kind == CompositionKind::q ? "q" : kind == CompositionKind::k ? "k" : "v";
}

double composition_chance(int64_t d_model, bool centred) {
    return 1.0 / std::sqrt(static_cast<double>(d_model - (centred ? 1 : 0)));
}

NormFolding attention_norm_folding(const ModelWeights& model) {
    NormFolding folding;
    if (model.config.residual == ResidualLayout::post_norm)
        throw Error(ErrorKind::internal, "attention_norm_folding: a post-norm model has no norm before its attention");
    folding.center = model.config.norm == NormKind::layer_norm;
    std::optional<BlockWeights> streamed;
    for (int64_t l = 0; l < model.config.n_layers; ++l)
        folding.weights.push_back(model.block(l, streamed).attention_norm.weight);
    return folding;
}

std::string composition_obstacle(const ModelWeights& model, const std::vector<const LayerWeights*>& layers) {
    for (const LayerWeights* layer : layers)
        if (!layer->q_norm.empty() || !layer->k_norm.empty())
            return layer->qk_norm_across_heads ? "q/k norms across heads make its W_QK nonlinear"
                                               : "per-head q/k norms make its W_QK nonlinear";
    if (model.config.residual == ResidualLayout::sandwich || model.config.residual == ResidualLayout::post_sublayer)
        return "a norm rescales each attention output before the residual add";
    if (model.config.residual == ResidualLayout::post_norm)
        return "a norm after each block rescales what its heads write, with the residual stream, before a later head "
               "reads it";
    return "";
}

std::string norm_folding_description(const NormFolding& folding) {
    if (folding.weights.empty()) return "no norm weights folded";
    return folding.center ? "LayerNorm weights folded into W_Q, W_K, W_V; readers and W_O centred"
                          : "RMSNorm weights folded into W_Q, W_K, W_V";
}

CompositionScores composition_scores(const std::vector<const LayerWeights*>& layers, const NormFolding& folding,
                                     OnednnBackend& backend) {
    CompositionScores result;
    result.layers = static_cast<int64_t>(layers.size());
    result.heads = layers.empty() ? 0 : layers[0]->num_heads;
    std::vector<FoldedLayer> folded;
    for (size_t l = 0; l < layers.size(); ++l) {
        if (layers[l]->num_heads != result.heads || layers[l]->d_head != layers[0]->d_head)
            throw Error(ErrorKind::internal, "composition_scores: layers differ in heads or d_head");
        const Tensor* weight =
            l < folding.weights.size() && !folding.weights[l].empty() ? &folding.weights[l] : nullptr;
        folded.push_back(fold(*layers[l], weight, folding.center, backend));
    }
    const int64_t L = result.layers, H = result.heads, N = L * H, d = layers.empty() ? 0 : layers[0]->d_head;
    if (!layers.empty()) result.chance = composition_chance(layers[0]->d_model, folding.center);
    for (Tensor& s : result.scores) {
        s = Tensor({N, N});
        std::fill(s.data.begin(), s.data.end(), std::numeric_limits<float>::quiet_NaN());
    }
    for (int64_t l2 = 1; l2 < L; ++l2) {
        const FoldedLayer& b = folded[static_cast<size_t>(l2)];
        for (CompositionKind kind : {CompositionKind::q, CompositionKind::k, CompositionKind::v}) {
            // R's reading factor [D, n d_h] of every head of layer l2, and where head h's block is.
            const Tensor& reader = kind == CompositionKind::q ? b.q : kind == CompositionKind::k ? b.k : b.v;
            const auto reader_at = [&](int64_t h) { return kind == CompositionKind::q ? h * d : b.kv_col(h); };
            const auto right_circuit = [&](int64_t h) {  // R_h = reader S: {reader^T reader, S S^T}
                switch (kind) {
                    case CompositionKind::q:
                        return Circuit{&b.gram_q, h * d, &b.gram_k, b.kv_col(h)};
                    case CompositionKind::k:
                        return Circuit{&b.gram_k, b.kv_col(h), &b.gram_q, h * d};
                    default:
                        return Circuit{&b.gram_v, b.kv_col(h), &b.gram_o, h * d};
                }
            };
            for (int64_t l1 = 0; l1 < l2; ++l1) {
                const FoldedLayer& a = folded[static_cast<size_t>(l1)];
                // M = W_O(l1) reader: [H d_h, n d_h], block (a, b) is head a's W_O^a times head b's reader.
                const int64_t D = a.o.dim(1), width = reader.dim(1);
                Tensor m({H * d, width});
                backend.matmul(dense_matmul(H * d, D, width), a.o.ptr(), reader.ptr(), nullptr, m.ptr());
                for (int64_t ha = 0; ha < H; ++ha) {
                    const double ov = std::sqrt(squared_norm({&a.gram_v, a.kv_col(ha), &a.gram_o, ha * d}, d));
                    for (int64_t hb = 0; hb < H; ++hb) {
                        const Circuit right = right_circuit(hb);
                        const double product = squared_product_norm(a.gram_v, a.kv_col(ha), m, ha * d, reader_at(hb),
                                                                    *right.right, right.right_at, d);
                        const double score =
                            std::sqrt(std::max(product, 0.0)) / (ov * std::sqrt(squared_norm(right, d)));
                        result.scores[static_cast<int>(kind)].data[(l1 * H + ha) * N + l2 * H + hb] =
                            static_cast<float>(score);
                    }
                }
            }
        }
    }
    return result;
}

}  // namespace attn_viz
