// Reading BART and T5 folders: their hyper-parameters under their own key names, tensor names
// and orientations ([out, in] Linear weights, transposed), as transformers' modeling_bart and
// modeling_t5 define them.
#include "hf_seq2seq_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_tensors.hpp"
#include "error.hpp"
#include "safetensors_shards.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

// The four projections of an attention module, under its prefix ("...self_attn.", "...SelfAttention.").
struct AttentionNames {
    const char* q;
    const char* k;
    const char* v;
    const char* o;
};

// One attention module: `heads` heads of d_h, Linear weights [out, in] (biases where the family
// has them), no RoPE; score_scale 0 is 1/sqrt(d_h).
LayerWeights attention_module(const TensorSource& source, const std::string& prefix, const AttentionNames& names,
                              const ModelConfig& c, bool causal, bool with_bias, double score_scale) {
    const int64_t d = c.d_model, inner = c.n_heads * c.head_dim;
    LayerWeights w;
    w.d_model = d, w.num_heads = c.n_heads, w.num_kv_heads = c.n_heads, w.d_head = c.head_dim, w.causal = causal;
    w.score_scale = score_scale;
    auto matrix = [&](const char* name, int64_t in, int64_t out) {
        return transposed(load_of_shape(source, fmt::format("{}{}.weight", prefix, name), {out, in}));
    };
    auto bias = [&](const char* name, int64_t size) {
        return with_bias ? load_of_shape(source, fmt::format("{}{}.bias", prefix, name), {size}) : Tensor{};
    };
    w.w_q = matrix(names.q, d, inner), w.b_q = bias(names.q, inner);
    w.w_k = matrix(names.k, d, inner), w.b_k = bias(names.k, inner);
    w.w_v = matrix(names.v, d, inner), w.b_v = bias(names.v, inner);
    w.w_o = matrix(names.o, inner, d), w.b_o = bias(names.o, d);
    validate_layer(w, fmt::format("{}: {}", source.path(), prefix));
    return w;
}

// A plain (`in` -> `out`) or gated (`in`, `up` -> `out`) feed-forward of width f, with biases
// where the family has them.
void feed_forward_module(const TensorSource& source, const std::string& prefix, const char* in, const char* up,
                         const char* out, int64_t d, int64_t f, bool with_bias, BlockWeights& b) {
    b.w_in = load_of_shape(source, fmt::format("{}{}.weight", prefix, in), {f, d});
    if (up) b.w_up = load_of_shape(source, fmt::format("{}{}.weight", prefix, up), {f, d});
    b.w_out = load_of_shape(source, fmt::format("{}{}.weight", prefix, out), {d, f});
    if (with_bias)
        b.b_in = load_of_shape(source, fmt::format("{}{}.bias", prefix, in), {f}),
        b.b_out = load_of_shape(source, fmt::format("{}{}.bias", prefix, out), {d});
}

void refuse_if_true(const HfConfig& hf, const std::optional<bool>& value, const char* key) {
    if (value.value_or(false))
        fail_input(hf.path, fmt::format("{} = true is not supported (attn-viz reads BART without it)", key));
}

// The sizes both families name alike (width, vocabulary, heads) and the encoder's depth, under
// the family's key names.
Seq2SeqConfig common_sizes(const HfConfig& hf, const char* architecture, const std::optional<int64_t>& encoder_layers,
                           const char* layers_key, const char* heads_key) {
    refuse_unimplemented(hf);
    Seq2SeqConfig s;
    ModelConfig& c = s.blocks;
    c.architecture = architecture;
    c.family = c.architecture;
    c.d_model = required_value(hf.d_model, hf, "d_model");
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.n_layers = required_value(encoder_layers, hf, layers_key);
    c.n_heads = c.n_kv_heads = required_value(hf.num_heads, hf, heads_key);
    return s;
}

// BART's sizes; the options of mBART and older BART forms refused by name.
Seq2SeqConfig bart_config(const HfConfig& hf) {
    refuse_if_true(hf, hf.normalize_before, "normalize_before");
    refuse_if_true(hf, hf.add_final_layer_norm, "add_final_layer_norm");
    refuse_if_true(hf, hf.add_bias_logits, "add_bias_logits");
    refuse_if_true(hf, hf.static_position_embeddings, "static_position_embeddings");
    Seq2SeqConfig s = common_sizes(hf, "bart", hf.encoder_layers, "encoder_layers", "encoder_attention_heads");
    ModelConfig& c = s.blocks;
    s.n_decoder_layers = required_value(hf.decoder_layers, hf, "decoder_layers");
    if (required_value(hf.decoder_heads, hf, "decoder_attention_heads") != c.n_heads)
        fail_input(hf.path, fmt::format("decoder_attention_heads ({}) differs from encoder_attention_heads ({}); "
                                        "attn-viz needs one head count for both stacks",
                                        *hf.decoder_heads, c.n_heads));
    if (c.d_model % c.n_heads != 0)
        fail_input(hf.path, fmt::format("d_model {} is not divisible by {} heads", c.d_model, c.n_heads));
    c.head_dim = c.d_model / c.n_heads;
    c.ffn_dim = required_value(hf.encoder_ffn_dim, hf, "encoder_ffn_dim");
    required_value(hf.decoder_ffn_dim, hf, "decoder_ffn_dim");
    c.max_tokens = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.norm = NormKind::layer_norm;
    c.norm_epsilon = 1e-5;  // torch.nn.LayerNorm's default: BART has no epsilon key
    c.feed_forward = FeedForwardKind::plain;
    c.activation = parse_activation(hf, "gelu");
    c.residual = ResidualLayout::post_norm;
    c.embedding_scale =
        hf.scale_embedding.value_or(false) ? static_cast<float>(std::sqrt(static_cast<double>(c.d_model))) : 1.0f;
    s.decoder_start_token_id = static_cast<int>(hf.decoder_start_token_id.value_or(2));
    return s;
}

// BART's learned positions [max_tokens + 2, D], without the first two rows (offset 2).
Tensor bart_positions(const TensorSource& source, const std::string& name, const ModelConfig& c) {
    const Tensor table = load_of_shape(source, name, {c.max_tokens + 2, c.d_model});
    return rows_of(table, 2, c.max_tokens);
}

Seq2SeqWeights read_bart(const HfConfig& hf, const TensorSource& source) {
    Seq2SeqWeights w;
    w.config = bart_config(hf);
    const ModelConfig& c = w.config.blocks;
    const int64_t d = c.d_model, v = c.vocab_size;
    const std::string prefix = find_prefix(source, {"model.", ""}, "shared.weight");
    const AttentionNames names{"q_proj", "k_proj", "v_proj", "out_proj"};
    w.token_embedding = load_of_shape(source, fmt::format("{}shared.weight", prefix), {v, d});
    for (int64_t l = 0; l < c.n_layers; ++l) {
        const std::string block = fmt::format("{}encoder.layers.{}.", prefix, l);
        BlockWeights b;
        b.attention = attention_module(source, fmt::format("{}self_attn.", block), names, c, false, true, 0.0);
        b.attention_norm = layer_norm(source, fmt::format("{}self_attn_layer_norm", block), d);
        feed_forward_module(source, block, "fc1", nullptr, "fc2", d, c.ffn_dim, true, b);
        b.feed_forward_norm = layer_norm(source, fmt::format("{}final_layer_norm", block), d);
        w.encoder.push_back(std::move(b));
    }
    for (int64_t l = 0; l < w.config.n_decoder_layers; ++l) {
        const std::string block = fmt::format("{}decoder.layers.{}.", prefix, l);
        DecoderBlockWeights b;
        b.block.attention = attention_module(source, fmt::format("{}self_attn.", block), names, c, true, true, 0.0);
        b.block.attention_norm = layer_norm(source, fmt::format("{}self_attn_layer_norm", block), d);
        b.cross_attention = attention_module(source, fmt::format("{}encoder_attn.", block), names, c, false, true, 0.0);
        b.cross_attention_norm = layer_norm(source, fmt::format("{}encoder_attn_layer_norm", block), d);
        feed_forward_module(source, block, "fc1", nullptr, "fc2", d, *hf.decoder_ffn_dim, true, b.block);
        b.block.feed_forward_norm = layer_norm(source, fmt::format("{}final_layer_norm", block), d);
        w.decoder.push_back(std::move(b));
    }
    for (const auto& [stack, name] :
         {std::pair{&w.encoder_stack, "encoder."}, std::pair{&w.decoder_stack, "decoder."}}) {
        stack->positions = bart_positions(source, fmt::format("{}{}embed_positions.weight", prefix, name), c);
        stack->embedding_norm = layer_norm(source, fmt::format("{}{}layernorm_embedding", prefix, name), d);
    }
    const bool tied = hf.tie_word_embeddings.value_or(true);
    w.classifier = tied ? w.token_embedding : load_of_shape(source, "lm_head.weight", {v, d});
    w.classifier_bias = optional_of_shape(source, "final_logits_bias", {1, v});
    if (!w.classifier_bias.empty()) w.classifier_bias.shape = {v};
    return w;
}

// T5's feed_forward_proj as T5Config reads it: "[gated-]ACT", "gated-gelu" meaning gelu_new.
void t5_feed_forward(const HfConfig& hf, ModelConfig& c) {
    const std::string proj = hf.feed_forward_proj.value_or("relu");
    const size_t dash = proj.find('-');
    const bool gated = dash != std::string::npos;
    // transformers takes the part after the last dash as the activation: "" and "gated-" name none
    // (ACT2FN refuses them), so they are refused here, not run as relu.
    if ((gated && (proj.substr(0, dash) != "gated" || proj.find('-', dash + 1) != std::string::npos)) ||
        proj.substr(gated ? dash + 1 : 0).empty())
        fail_input(hf.path, fmt::format("feed_forward_proj \"{}\" is not of the form ACT or gated-ACT",
                                        escape_invalid_utf8(proj)));
    c.feed_forward = gated ? FeedForwardKind::gated : FeedForwardKind::plain;
    c.activation = proj == "gated-gelu" ? Activation::gelu_tanh
                                        : activation_named(gated ? proj.substr(dash + 1) : proj, hf, "relu");
}

Seq2SeqConfig t5_config(const HfConfig& hf) {
    Seq2SeqConfig s = common_sizes(hf, "t5", hf.num_layers, "num_layers", "num_heads");
    ModelConfig& c = s.blocks;
    s.n_decoder_layers = hf.decoder_layers.value_or(c.n_layers);
    c.head_dim = required_value(hf.key_value_dim, hf, "d_kv");
    c.ffn_dim = required_value(hf.encoder_ffn_dim, hf, "d_ff");
    c.max_tokens = hf.max_positions.value_or(512);  // relative positions have no limit; n_positions where set
    c.norm = NormKind::rms;
    c.norm_epsilon = hf.norm_epsilon.value_or(1e-6);
    c.residual = ResidualLayout::pre_norm;
    t5_feed_forward(hf, c);
    s.decoder_start_token_id = static_cast<int>(hf.decoder_start_token_id.value_or(0));
    // The decoder's output is scaled by d_model^-0.5 before the classifier as transformers says:
    // by scale_decoder_outputs where config.json has it (transformers >= 5), else when the
    // classifier is the tied embedding (original T5; v1.1 unties it and does not scale).
    if (hf.scale_decoder_outputs.value_or(hf.tie_word_embeddings.value_or(true)))
        s.classifier_scale = static_cast<float>(std::pow(static_cast<double>(c.d_model), -0.5));
    return s;
}

Seq2SeqWeights read_t5(const HfConfig& hf, const TensorSource& source) {
    Seq2SeqWeights w;
    w.config = t5_config(hf);
    const ModelConfig& c = w.config.blocks;
    const int64_t d = c.d_model, v = c.vocab_size, buckets = hf.relative_buckets.value_or(32);
    const int64_t max_distance = hf.relative_max_distance.value_or(128);
    // Each half of the encoder's buckets needs an exact bucket, and the logarithmic ones a range
    // past the exact ones (else transformers divides by log(1) = 0).
    if (buckets < 4 || max_distance <= buckets / 2)
        fail_input(hf.path, fmt::format("relative_attention_num_buckets {} with relative_attention_max_distance {}: at "
                                        "least 4 buckets and a distance above half of them are needed",
                                        buckets, max_distance));
    const bool gated = c.feed_forward == FeedForwardKind::gated;
    const AttentionNames names{"q", "k", "v", "o"};
    w.token_embedding = load_of_shape(source, "shared.weight", {v, d});
    // Block l's layer `sub` (0: self-attention, 1: cross-attention in the decoder, last: feed-forward).
    auto sub = [](const std::string& stack, int64_t l, int sublayer) {
        return fmt::format("{}block.{}.layer.{}.", stack, l, sublayer);
    };
    auto feed_forward = [&](const std::string& layer, BlockWeights& b) {
        feed_forward_module(source, fmt::format("{}DenseReluDense.", layer), gated ? "wi_0" : "wi",
                            gated ? "wi_1" : nullptr, "wo", d, c.ffn_dim, false, b);
        b.feed_forward_norm = {load_of_shape(source, fmt::format("{}layer_norm.weight", layer), {d}), {}};
    };
    auto self_attention = [&](const std::string& layer, bool causal, BlockWeights& b) {
        b.attention = attention_module(source, fmt::format("{}SelfAttention.", layer), names, c, causal, false, 1.0);
        b.attention_norm = {load_of_shape(source, fmt::format("{}layer_norm.weight", layer), {d}), {}};
    };
    for (int64_t l = 0; l < c.n_layers; ++l) {
        BlockWeights b;
        self_attention(sub("encoder.", l, 0), false, b);
        feed_forward(sub("encoder.", l, 1), b);
        w.encoder.push_back(std::move(b));
    }
    for (int64_t l = 0; l < w.config.n_decoder_layers; ++l) {
        DecoderBlockWeights b;
        self_attention(sub("decoder.", l, 0), true, b.block);
        b.cross_attention = attention_module(source, fmt::format("{}EncDecAttention.", sub("decoder.", l, 1)), names, c,
                                             false, false, 1.0);
        b.cross_attention_norm = {load_of_shape(source, fmt::format("{}layer_norm.weight", sub("decoder.", l, 1)), {d}),
                                  {}};
        feed_forward(sub("decoder.", l, 2), b.block);
        w.decoder.push_back(std::move(b));
    }
    for (const auto& [stack, name] :
         {std::pair{&w.encoder_stack, "encoder."}, std::pair{&w.decoder_stack, "decoder."}}) {
        stack->final_norm = {load_of_shape(source, fmt::format("{}final_layer_norm.weight", name), {d}), {}};
        stack->relative_positions.table =
            load_of_shape(source, fmt::format("{}SelfAttention.relative_attention_bias.weight", sub(name, 0, 0)),
                          {buckets, c.n_heads});
        stack->relative_positions.max_distance = max_distance;
    }
    const bool tied = hf.tie_word_embeddings.value_or(true);
    w.classifier = tied ? w.token_embedding : load_of_shape(source, "lm_head.weight", {v, d});
    return w;
}

}  // namespace

const std::vector<std::string>& hf_seq2seq_model_types() {
    static const std::vector<std::string> types = {"bart", "t5"};
    return types;
}

bool is_seq2seq_model_type(const std::string& model_type) {
    const auto& types = hf_seq2seq_model_types();
    return std::find(types.begin(), types.end(), model_type) != types.end();
}

void refuse_encoder_decoder(const std::string& path, const std::string& model_type) {
    throw Error(ErrorKind::usage,
                fmt::format("{}: model_type \"{}\" is an encoder-decoder model, which `model` runs and `compare` "
                            "compares over one source and target; this command takes decoder or encoder models",
                            path, model_type));
}

Seq2SeqWeights read_hf_seq2seq_folder(const std::string& folder, const HfConfig& hf, const LoadLimits& limits) {
    if (!is_seq2seq_model_type(hf.model_type))
        fail_input(hf.path, fmt::format("model_type \"{}\" is not an encoder-decoder attn-viz reads (supported: {})",
                                        escape_invalid_utf8(hf.model_type), fmt::join(hf_seq2seq_model_types(), ", ")));
    const SafetensorsShards source(folder, limits);
    return hf.model_type == "bart" ? read_bart(hf, source) : read_t5(hf, source);
}

}  // namespace attn_viz
