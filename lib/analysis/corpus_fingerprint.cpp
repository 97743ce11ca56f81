#include "corpus_fingerprint.hpp"

#include "fingerprint.hpp"

namespace attn_viz {

uint64_t layer_fingerprint(const LayerWeights& w) {
    Fingerprint f;
    for (int64_t v : {w.d_model, w.num_heads, w.num_kv_heads, w.d_head, int64_t{w.causal}, static_cast<int64_t>(w.rope)})
        f.add_int(v);
    f.add_bytes(&w.rope_base, sizeof w.rope_base);
    for (const Tensor* t : {&w.w_q, &w.w_k, &w.w_v, &w.w_o, &w.b_q, &w.b_k, &w.b_v, &w.b_o}) f.add_tensor(*t);
    return f.value();
}

uint64_t sequence_fingerprint(const Tensor& embeddings, const std::vector<uint8_t>& key_excluded) {
    Fingerprint f;
    f.add_tensor(embeddings);
    std::vector<uint8_t> mask(static_cast<size_t>(embeddings.dim(0)), 0);
    for (size_t i = 0; i < key_excluded.size() && i < mask.size(); ++i) mask[i] = key_excluded[i] ? 1 : 0;
    f.add_bytes(mask.data(), mask.size());
    return f.value();
}

}  // namespace attn_viz
