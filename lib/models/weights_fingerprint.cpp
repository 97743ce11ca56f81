#include "weights_fingerprint.hpp"

#include <optional>

#include "fingerprint.hpp"

namespace attn_viz {

uint64_t layer_fingerprint(const LayerWeights& w) {
    Fingerprint f;
    for (int64_t v :
         {w.d_model, w.num_heads, w.num_kv_heads, w.d_head, int64_t{w.causal}, static_cast<int64_t>(w.rope)})
        f.add_int(v);
    f.add_bytes(&w.rope_base, sizeof w.rope_base);
    if (w.rope_dims != 0) f.add_int(w.rope_dims);  // only when set: whole-head layers keep their fingerprints
    if (w.sliding_window != 0) f.add_int(-w.sliding_window);  // likewise (negative: never read as a rope_dims)
    if (w.rope_scaling.kind != RopeScaling::Kind::none) {     // likewise
        const RopeScaling& s = w.rope_scaling;
        f.add_int(static_cast<int64_t>(s.kind));
        for (double v : {s.factor, s.low_freq_factor, s.high_freq_factor, s.original_max_positions})
            f.add_bytes(&v, sizeof v);
    }
    for (const Tensor* t : {&w.w_q, &w.w_k, &w.w_v, &w.w_o, &w.b_q, &w.b_k, &w.b_v, &w.b_o}) f.add_tensor(*t);
    if (!w.q_norm.empty() || !w.k_norm.empty()) {  // likewise: layers without q/k norms keep their fingerprints
        f.add_tensor(w.q_norm);
        f.add_tensor(w.k_norm);
        for (double v : {w.qk_norm_epsilon, double{w.qk_norm_offset}}) f.add_bytes(&v, sizeof v);
        if (w.qk_norm_across_heads) f.add_int(-1);  // likewise
    }
    for (double v : {w.score_scale, w.logit_softcap})  // likewise
        if (v != 0.0) f.add_bytes(&v, sizeof v);
    return f.value();
}

namespace {

// The Llama family's byte order (RMSNorm models).
uint64_t rms_model_fingerprint(const ModelWeights& w, const BlockObserver& on_block) {
    Fingerprint f;
    const ModelConfig& c = w.config;
    for (int64_t v : {c.d_model, c.ffn_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.max_tokens,
                      int64_t{c.shared_classifier}})
        f.add_int(v);
    std::optional<BlockWeights> streamed;
    for (int64_t l = 0; l < c.n_layers; ++l) {
        const BlockWeights& b = w.block(l, streamed);
        f.add_int(static_cast<int64_t>(layer_fingerprint(b.attention)));
        for (const Tensor* t : {&b.attention_norm.weight, &b.feed_forward_norm.weight}) f.add_tensor(*t);
        for (const Tensor* t : {&b.w_in, &b.w_out, &b.w_up}) f.add_transposed(*t);
        for (const Tensor* t :
             {&b.b_in, &b.b_out, &b.b_up, &b.attention_output_norm.weight, &b.feed_forward_output_norm.weight})
            if (!t->empty()) f.add_tensor(*t);  // only when present: models without keep their fingerprints
        if (on_block) on_block(l, b);
    }
    for (const Tensor* t : {&w.token_embedding, &w.final_norm.weight}) f.add_tensor(*t);
    f.add_transposed(w.classifier_matrix());
    if (c.activation != Activation::silu) f.add_int(static_cast<int64_t>(c.activation) + 1000);            // likewise
    if (c.feed_forward != FeedForwardKind::gated) f.add_int(static_cast<int64_t>(c.feed_forward) + 2000);  // likewise
    if (c.residual != ResidualLayout::pre_norm) f.add_int(static_cast<int64_t>(c.residual) + 3000);        // likewise
    if (c.norm != NormKind::rms) f.add_int(static_cast<int64_t>(c.norm) + 4000);                           // likewise
    for (double v : {double{c.embedding_scale} - 1.0, c.final_logit_softcap, c.residual_scale - 1.0,
                     c.logits_scaling - 1.0})  // likewise
        if (v != 0.0) f.add_bytes(&v, sizeof v);
    return f.value();
}

// GPT-2's, GPT-NeoX's and BERT's byte order (LayerNorm models).
uint64_t layer_norm_model_fingerprint(const ModelWeights& w, const BlockObserver& on_block) {
    Fingerprint f;
    const ModelConfig& c = w.config;
    f.add_bytes(c.architecture.data(), c.architecture.size());
    for (int64_t v : {c.d_model, c.ffn_dim, c.vocab_size, c.n_layers, c.max_tokens,
                      int64_t{c.residual == ResidualLayout::post_norm}, int64_t{c.residual == ResidualLayout::parallel},
                      static_cast<int64_t>(c.activation)})
        f.add_int(v);
    f.add_bytes(&c.norm_epsilon, sizeof c.norm_epsilon);
    std::optional<BlockWeights> streamed;
    for (int64_t l = 0; l < c.n_layers; ++l) {
        const BlockWeights& b = w.block(l, streamed);
        f.add_int(static_cast<int64_t>(layer_fingerprint(b.attention)));
        for (const Tensor* t :
             {&b.attention_norm.weight, &b.attention_norm.bias, &b.feed_forward_norm.weight, &b.feed_forward_norm.bias})
            f.add_tensor(*t);
        f.add_transposed(b.w_in), f.add_tensor(b.b_in), f.add_transposed(b.w_out), f.add_tensor(b.b_out);
        if (!b.w_up.empty())  // only when present: plain feed-forwards keep their fingerprints
            f.add_transposed(b.w_up), f.add_tensor(b.b_up);
        if (on_block) on_block(l, b);
    }
    for (const Tensor* t : {&w.token_embedding, &w.position_embedding, &w.token_type_embedding,
                            &w.embedding_norm.weight, &w.embedding_norm.bias, &w.final_norm.weight, &w.final_norm.bias})
        f.add_tensor(*t);
    f.add_transposed(w.classifier_matrix());
    return f.value();
}

// One block of an encoder-decoder: its attention layer's fingerprint and every tensor.
void add_seq2seq_block(Fingerprint& f, const BlockWeights& b) {
    f.add_int(static_cast<int64_t>(layer_fingerprint(b.attention)));
    for (const Tensor* t :
         {&b.attention_norm.weight, &b.attention_norm.bias, &b.feed_forward_norm.weight, &b.feed_forward_norm.bias})
        f.add_tensor(*t);
    f.add_transposed(b.w_in), f.add_tensor(b.b_in), f.add_transposed(b.w_up), f.add_tensor(b.b_up);
    f.add_transposed(b.w_out), f.add_tensor(b.b_out);
}

}  // namespace

uint64_t model_fingerprint(const ModelWeights& w, const BlockObserver& on_block) {
    return w.config.norm == NormKind::layer_norm ? layer_norm_model_fingerprint(w, on_block)
                                                 : rms_model_fingerprint(w, on_block);
}

uint64_t seq2seq_fingerprint(const Seq2SeqWeights& w) {
    Fingerprint f;
    const ModelConfig& c = w.config.blocks;
    f.add_bytes(c.architecture.data(), c.architecture.size());
    for (int64_t v : {c.d_model, c.ffn_dim, c.vocab_size, c.n_layers, w.config.n_decoder_layers, c.n_heads, c.head_dim,
                      c.max_tokens, static_cast<int64_t>(c.norm), static_cast<int64_t>(c.residual),
                      static_cast<int64_t>(c.feed_forward), static_cast<int64_t>(c.activation),
                      int64_t{w.config.decoder_start_token_id}})
        f.add_int(v);
    for (double v : {c.norm_epsilon, double{c.embedding_scale}, double{w.config.classifier_scale}})
        f.add_bytes(&v, sizeof v);
    for (const BlockWeights& b : w.encoder) add_seq2seq_block(f, b);
    for (const DecoderBlockWeights& b : w.decoder) {
        add_seq2seq_block(f, b.block);
        f.add_int(static_cast<int64_t>(layer_fingerprint(b.cross_attention)));
        f.add_tensor(b.cross_attention_norm.weight);
        f.add_tensor(b.cross_attention_norm.bias);
    }
    f.add_tensor(w.token_embedding);
    for (const StackWeights* s : {&w.encoder_stack, &w.decoder_stack}) {
        for (const Tensor* t : {&s->positions, &s->embedding_norm.weight, &s->embedding_norm.bias,
                                &s->final_norm.weight, &s->final_norm.bias, &s->relative_positions.table})
            f.add_tensor(*t);
        f.add_int(s->relative_positions.max_distance);
    }
    f.add_transposed(w.classifier);
    f.add_tensor(w.classifier_bias);
    return f.value();
}

}  // namespace attn_viz
