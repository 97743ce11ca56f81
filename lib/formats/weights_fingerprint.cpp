#include "weights_fingerprint.hpp"

#include <optional>

#include "fingerprint.hpp"

namespace attn_viz {

uint64_t layer_fingerprint(const LayerWeights& w) {
    Fingerprint f;
    for (int64_t v : {w.d_model, w.num_heads, w.num_kv_heads, w.d_head, int64_t{w.causal}, static_cast<int64_t>(w.rope)})
        f.add_int(v);
    f.add_bytes(&w.rope_base, sizeof w.rope_base);
    if (w.rope_dims != 0) f.add_int(w.rope_dims);  // only when set: whole-head layers keep their fingerprints
    if (w.sliding_window != 0) f.add_int(-w.sliding_window);  // likewise (negative: never read as a rope_dims)
    if (w.rope_scaling.kind != RopeScaling::Kind::none) {  // likewise
        const RopeScaling& s = w.rope_scaling;
        f.add_int(static_cast<int64_t>(s.kind));
        for (double v : {s.factor, s.low_freq_factor, s.high_freq_factor, s.original_max_positions}) f.add_bytes(&v, sizeof v);
    }
    for (const Tensor* t : {&w.w_q, &w.w_k, &w.w_v, &w.w_o, &w.b_q, &w.b_k, &w.b_v, &w.b_o}) f.add_tensor(*t);
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
        for (const Tensor* t : {&b.b1, &b.b2, &b.b3})
            if (!t->empty()) f.add_tensor(*t);  // only when present: models without keep their fingerprints
    }
    for (const Tensor* t : {&w.token_embedding, &w.rms_final, &w.classifier}) f.add_tensor(*t);
    if (c.activation != Activation::silu) f.add_int(static_cast<int64_t>(c.activation) + 1000);  // likewise
    return f.value();
}

uint64_t model_fingerprint(const TransformerWeights& w) {
    Fingerprint f;
    const TransformerConfig& c = w.config;
    f.add_bytes(c.model_type.data(), c.model_type.size());
    for (int64_t v : {c.d_model, c.ffn_dim, c.vocab_size, c.num_layers, c.max_positions, int64_t{c.post_norm},
                      int64_t{c.parallel_residual}, static_cast<int64_t>(c.activation)})
        f.add_int(v);
    f.add_bytes(&c.norm_epsilon, sizeof c.norm_epsilon);
    for (const TransformerBlockWeights& b : w.layers) {
        f.add_int(static_cast<int64_t>(layer_fingerprint(b.attention)));
        for (const Tensor* t : {&b.attention_norm.weight, &b.attention_norm.bias, &b.mlp_norm.weight, &b.mlp_norm.bias, &b.w_in, &b.b_in,
                                &b.w_out, &b.b_out})
            f.add_tensor(*t);
    }
    for (const Tensor* t : {&w.token_embedding, &w.position_embedding, &w.token_type_embedding, &w.embedding_norm.weight,
                            &w.embedding_norm.bias, &w.final_norm.weight, &w.final_norm.bias, &w.classifier})
        f.add_tensor(*t);
    return f.value();
}

}  // namespace attn_viz
