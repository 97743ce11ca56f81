#include "corpus_fingerprint.hpp"

#include <optional>

#include "fingerprint.hpp"

namespace attn_viz {

uint64_t layer_fingerprint(const LayerWeights& w) {
    Fingerprint f;
    for (int64_t v : {w.d_model, w.num_heads, w.num_kv_heads, w.d_head, int64_t{w.causal}, static_cast<int64_t>(w.rope)})
        f.add_int(v);
    f.add_bytes(&w.rope_base, sizeof w.rope_base);
    if (w.rope_dims != 0) f.add_int(w.rope_dims);  // only when set: whole-head layers keep their fingerprints
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

uint64_t model_fingerprint(const LlamaWeights& w) {
    Fingerprint f;
    const Llama2cConfig& c = w.config;
    for (int64_t v : {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len, int64_t{c.shared_classifier}})
        f.add_int(v);
    for (int64_t l = 0; l < c.n_layers; ++l) {
        std::optional<LlamaBlockWeights> streamed;  // a streaming model's block, read for this
        if (w.layers.empty() && w.load_block) streamed = w.load_block(l);
        const LlamaBlockWeights& b = streamed ? *streamed : w.layers[static_cast<size_t>(l)];
        f.add_int(static_cast<int64_t>(layer_fingerprint(b.attention)));
        for (const Tensor* t : {&b.rms_attention, &b.rms_ffn, &b.w1, &b.w2, &b.w3}) f.add_tensor(*t);
    }
    for (const Tensor* t : {&w.token_embedding, &w.rms_final, &w.classifier}) f.add_tensor(*t);
    return f.value();
}

uint64_t token_sequence_fingerprint(const std::vector<int>& ids) {
    Fingerprint f;
    f.add_int(static_cast<int64_t>(ids.size()));
    for (int id : ids) f.add_int(id);
    return f.value();
}

}  // namespace attn_viz
