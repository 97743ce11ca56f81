#include "weight_similarity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.hpp"
#include "gram_matrix.hpp"

namespace attn_viz {
namespace {

// matrices[l]: [rows, n_l] -> their columns side by side, [rows, sum n_l].
Tensor columns_side_by_side(const std::vector<const Tensor*>& matrices) {
    const int64_t rows = matrices[0]->dim(0);
    int64_t total = 0;
    for (const Tensor* m : matrices) total += m->dim(1);
    Tensor out({rows, total});
    int64_t first = 0;
    for (const Tensor* m : matrices) {
        for (int64_t r = 0; r < rows; ++r)
            std::copy_n(m->ptr() + r * m->dim(1), m->dim(1), out.ptr() + r * total + first);
        first += m->dim(1);
    }
    return out;
}

// matrices[l]: [n_l, cols] -> one below the other, [sum n_l, cols].
Tensor rows_stacked(const std::vector<const Tensor*>& matrices) {
    int64_t total = 0;
    for (const Tensor* m : matrices) total += m->dim(0);
    Tensor out({total, matrices[0]->dim(1)});
    auto at = out.data.begin();
    for (const Tensor* m : matrices) at = std::copy(m->data.begin(), m->data.end(), at);
    return out;
}

// The Gram matrix of one group of layers' matrices: used in place for one layer, joined first
// for several (columns side by side, or rows stacked for W_O).
Tensor group_gram(OnednnBackend& backend, const std::vector<const Tensor*>& matrices, bool of_rows) {
    if (matrices.size() == 1) return gram(backend, *matrices[0], of_rows);
    return gram(backend, of_rows ? rows_stacked(matrices) : columns_side_by_side(matrices), of_rows);
}

// The Gram matrices of one group of layers (one layer, or all with across_layers), and where each
// head's d_h columns sit in them.
struct CircuitGrams {
    Tensor q, k, v;                      // over the columns of W_Q, W_K and W_V
    const Tensor* known_o = nullptr;     // over the rows of W_O: a run's, or else
    Tensor own_o;                        // computed here
    std::vector<int64_t> q_col, kv_col;  // per head (of the group): first column of its block

    const Tensor& o() const { return known_o ? *known_o : own_o; }
};

// known_o: the group's W_O Gram if already computed, or null.
CircuitGrams grams_for(OnednnBackend& backend, const std::vector<const LayerWeights*>& layers, const Tensor* known_o) {
    std::vector<const Tensor*> q, k, v, o;
    CircuitGrams g;
    g.known_o = known_o;
    int64_t q_offset = 0, kv_offset = 0;
    for (const LayerWeights* w : layers) {
        q.push_back(&w->w_q), k.push_back(&w->w_k), v.push_back(&w->w_v), o.push_back(&w->w_o);
        const int64_t group = w->num_heads / w->num_kv_heads;
        for (int64_t h = 0; h < w->num_heads; ++h) {
            g.q_col.push_back(q_offset + h * w->d_head);
            g.kv_col.push_back(kv_offset + (h / group) * w->d_head);
        }
        q_offset += w->num_heads * w->d_head, kv_offset += w->num_kv_heads * w->d_head;
    }
    g.q = group_gram(backend, q, false);
    g.k = group_gram(backend, k, false);
    g.v = group_gram(backend, v, false);
    if (!known_o) g.own_o = group_gram(backend, o, true);
    return g;
}

}  // namespace

std::vector<const Tensor*> output_grams_of(const std::vector<const LayerResult*>& layers) {
    std::vector<const Tensor*> grams;
    for (const LayerResult* r : layers) {
        if (!r->output_gram) return {};
        grams.push_back(r->output_gram.get());
    }
    return grams;
}

WeightSimilarities weight_similarities(const std::vector<const LayerWeights*>& layers, bool across_layers,
                                       OnednnBackend& backend, const std::vector<const Tensor*>& output_grams) {
    if (!output_grams.empty() && (across_layers || output_grams.size() != layers.size()))
        throw Error(ErrorKind::internal, "weight_similarities: W_O Grams must be one per layer, without across_layers");
    int64_t N = 0;
    for (const LayerWeights* w : layers) {
        if (w->d_head != layers[0]->d_head || w->d_model != layers[0]->d_model)
            throw Error(ErrorKind::internal, "weight_similarities: layers differ in d_model or d_head");
        N += w->num_heads;
    }
    const int64_t r = layers.empty() ? 0 : layers[0]->d_head;
    HeadMatrix qk_inner(N), ov_inner(N);
    // Step 1: per group of layers (each layer alone, or all together), its Gram matrices, then
    // the inner products of every pair of its heads from d_h x d_h blocks.
    std::vector<std::vector<const LayerWeights*>> groups;
    if (across_layers)
        groups.push_back(layers);
    else
        for (const LayerWeights* w : layers) groups.push_back({w});
    int64_t first_head = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        const CircuitGrams g = grams_for(backend, groups[i], output_grams.empty() ? nullptr : output_grams[i]);
        const int64_t n = static_cast<int64_t>(g.q_col.size());
        for (int64_t a = 0; a < n; ++a)
            for (int64_t b = a; b < n; ++b) {
                const size_t ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
                qk_inner.at(first_head + a, first_head + b) =
                    block_inner(g.q, g.q_col[ia], g.q_col[ib], g.k, g.kv_col[ia], g.kv_col[ib], r);
                ov_inner.at(first_head + a, first_head + b) =
                    block_inner(g.v, g.kv_col[ia], g.kv_col[ib], g.o(), g.q_col[ia], g.q_col[ib], r);
            }
        first_head += n;
    }

    // Step 2: cosines (NaN where a circuit is zero or the pair was skipped).
    WeightSimilarities out{HeadMatrix(N), HeadMatrix(N)};
    auto cosine = [](const HeadMatrix& inner, int64_t a, int64_t b) {
        const double norms = std::sqrt(inner.at(a, a) * inner.at(b, b));
        return norms > 0 ? std::clamp(inner.at(a, b) / norms, -1.0, 1.0) : std::numeric_limits<double>::quiet_NaN();
    };
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) {
            out.qk_cosine.at(a, b) = out.qk_cosine.at(b, a) = cosine(qk_inner, a, b);
            out.ov_cosine.at(a, b) = out.ov_cosine.at(b, a) = cosine(ov_inner, a, b);
        }
    return out;
}

void add_layer_weight_similarities(WeightSimilarities& into, int64_t first_head, const LayerWeights& w,
                                   OnednnBackend& backend) {
    const int64_t H = w.num_heads;
    if (first_head < 0 || first_head + H > into.qk_cosine.size || into.ov_cosine.size != into.qk_cosine.size)
        throw Error(ErrorKind::internal, "add_layer_weight_similarities: the layer's heads are outside the matrices");
    const WeightSimilarities layer = weight_similarities({&w}, false, backend);
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = 0; b < H; ++b) {
            into.qk_cosine.at(first_head + a, first_head + b) = layer.qk_cosine.at(a, b);
            into.ov_cosine.at(first_head + a, first_head + b) = layer.ov_cosine.at(a, b);
        }
}

}  // namespace attn_viz
