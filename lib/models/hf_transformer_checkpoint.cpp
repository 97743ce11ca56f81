// Reading GPT-2, GPT-NeoX and BERT folders: each family's hyper-parameters, tensor names and
// orientations, checked against config.json before anything is converted.
#include "hf_transformer_checkpoint.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_tensors.hpp"
#include "error.hpp"
#include "hf_config.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "layouts.hpp"
#include "safetensors_shards.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

// The sizes every family has, from config.json under its family's key names.
// LayerNorm and a plain MLP (pre-norm unless the family says otherwise).
ModelConfig common_config(const HfConfig& hf, int64_t default_ffn_dim, double default_epsilon) {
    refuse_unimplemented(hf);
    ModelConfig c;
    c.architecture = hf.model_type;
    c.family = c.architecture;
    c.norm = NormKind::layer_norm;
    c.feed_forward = FeedForwardKind::plain;
    c.d_model = required_value(hf.d_model, hf, "hidden_size");
    c.ffn_dim = hf.intermediate_size.value_or(default_ffn_dim);
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.n_layers = required_value(hf.num_layers, hf, "num_hidden_layers");
    c.max_tokens = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.norm_epsilon = hf.norm_epsilon.value_or(default_epsilon);
    if (c.ffn_dim <= 0) fail_input(hf.path, "missing \"intermediate_size\"");
    const int64_t heads = required_value(hf.num_heads, hf, "num_attention_heads");
    c.n_heads = heads, c.n_kv_heads = heads;
    if (c.d_model % heads != 0)
        fail_input(hf.path, fmt::format("hidden size {} is not divisible by {} heads", c.d_model, heads));
    if (hf.head_dim && *hf.head_dim != c.d_model / heads)
        fail_input(hf.path, "a head size other than hidden_size / num_attention_heads is not supported");
    c.head_dim = c.d_model / heads;
    if (!hf.rope_scaling.empty())
        fail_input(hf.path, fmt::format("rope_scaling \"{}\" is not supported (only unscaled RoPE)",
                                        escape_invalid_utf8(hf.rope_scaling)));
    return c;
}

// Where a family keeps a block's tensors, after the prefix and "<layers>N.".
struct BlockNames {
    const char* layers;          // "h.", "layers.", "encoder.layer."
    const char* attention_norm;  // LayerNorm names, without ".weight"
    const char* feed_forward_norm;
    const char* mlp_in;  // the MLP's layers, without ".weight"
    const char* mlp_out;
    bool conv1d;  // MLP weights [in, out] (GPT-2's Conv1D) rather than Linear's [out, in]
};

// Every block's norms and MLP, and its attention from `attention_of(layer, block name)`.
template <typename AttentionOf>
void read_blocks(ModelWeights& w, const TensorSource& source, const std::string& prefix, const BlockNames& names,
                 AttentionOf attention_of) {
    const ModelConfig& c = w.config;
    const int64_t d = c.d_model, f = c.ffn_dim;
    // A feed-forward matrix a row per output: nn.Linear's as stored, GPT-2's Conv1D ([in, out]) transposed.
    auto matrix = [&](const std::string& name, int64_t in, int64_t out) {
        return names.conv1d ? transposed(load_of_shape(source, name, {in, out}))
                            : load_of_shape(source, name, {out, in});
    };
    std::vector<BlockWeights> blocks;
    for (int64_t l = 0; l < c.n_layers; ++l) {
        const std::string block = fmt::format("{}{}{}.", prefix, names.layers, l);
        BlockWeights b;
        b.attention = attention_of(l, block);
        b.attention_norm = layer_norm(source, fmt::format("{}{}", block, names.attention_norm), d);
        b.feed_forward_norm = layer_norm(source, fmt::format("{}{}", block, names.feed_forward_norm), d);
        b.w_in = matrix(fmt::format("{}{}.weight", block, names.mlp_in), d, f);
        b.b_in = optional_of_shape(source, fmt::format("{}{}.bias", block, names.mlp_in), {f});
        b.w_out = matrix(fmt::format("{}{}.weight", block, names.mlp_out), f, d);
        b.b_out = optional_of_shape(source, fmt::format("{}{}.bias", block, names.mlp_out), {d});
        blocks.push_back(std::move(b));
    }
    w.blocks = std::make_shared<HeldBlocks>(std::move(blocks));
}

// One attention layer through its layout preset (layouts.hpp), heads from config.json; `causal`
// (if set) overrides the preset's mask.
LayerWeights preset_attention(const TensorSource& source, const char* layout, int64_t layer, const HfConfig& hf,
                              std::optional<bool> causal = std::nullopt) {
    LayoutOptions options;
    options.num_heads = hf.num_heads;
    options.causal = causal;
    return load_layer(source, layout, static_cast<int>(layer), options, hf);
}

ModelWeights read_gpt2(const HfConfig& hf, const TensorSource& source) {
    if (hf.scale_attn_by_inverse_layer_idx.value_or(false) || !hf.scale_attn_weights.value_or(true))
        fail_input(hf.path,
                   "scale_attn_by_inverse_layer_idx / scale_attn_weights: only scores scaled by 1/sqrt(head size) are "
                   "supported");
    ModelWeights w;
    w.config = common_config(hf, 4 * hf.d_model.value_or(0), 1e-5);
    w.config.activation = parse_activation(hf, "gelu_new");
    w.config.shared_classifier = hf.tie_word_embeddings.value_or(true);
    const ModelConfig& c = w.config;
    const int64_t d = c.d_model;
    const std::string prefix = find_prefix(source, {"", "transformer."}, "wte.weight");
    read_blocks(w, source, prefix, {"h.", "ln_1", "ln_2", "mlp.c_fc", "mlp.c_proj", true},
                [&](int64_t layer, const std::string&) { return preset_attention(source, "gpt2", layer, hf); });
    w.token_embedding = load_of_shape(source, fmt::format("{}wte.weight", prefix), {c.vocab_size, d});
    w.position_embedding = load_of_shape(source, fmt::format("{}wpe.weight", prefix), {c.max_tokens, d});
    w.final_norm = layer_norm(source, fmt::format("{}ln_f", prefix), d);
    if (!c.shared_classifier) w.classifier = load_of_shape(source, "lm_head.weight", {c.vocab_size, d});
    return w;
}

// GPT-NeoX's attention: query_key_value.weight [3D, D] holds, for head h, rows
// [3 h d_h, 3 h d_h + d_h) of q, the next d_h of k, then d_h of v (its bias [3D] likewise);
// dense is [out, in]. Rotary on the first int(d_h * rotary_pct) features, half-split.
LayerWeights neox_attention(const TensorSource& source, const std::string& block, const HfConfig& hf,
                            const ModelConfig& c) {
    const int64_t d = c.d_model, heads = *hf.num_heads, d_h = d / heads;
    LayerWeights w;
    w.d_model = d, w.num_heads = heads, w.num_kv_heads = heads, w.d_head = d_h, w.causal = true;
    w.rope_base = hf.rope_base.value_or(10000.0);
    w.rope_dims = static_cast<int64_t>(static_cast<double>(d_h) * hf.rotary_fraction.value_or(0.25));  // Python's int()
    if (w.rope_dims % 2 != 0)
        fail_input(hf.path,
                   fmt::format("rotary_pct gives {} rotary features per head; an even count is needed", w.rope_dims));
    w.rope = w.rope_dims > 0 ? RopeStyle::half_split : RopeStyle::none;
    const Tensor qkv = load_of_shape(source, fmt::format("{}attention.query_key_value.weight", block), {3 * d, d});
    const Tensor qkv_bias = optional_of_shape(source, fmt::format("{}attention.query_key_value.bias", block), {3 * d});
    Tensor* weights[3] = {&w.w_q, &w.w_k, &w.w_v};
    Tensor* biases[3] = {&w.b_q, &w.b_k, &w.b_v};
    for (int64_t part = 0; part < 3; ++part) {
        Tensor rows({d, d});  // [H*d_h out, D in]
        Tensor bias = qkv_bias.empty() ? Tensor{} : Tensor({d});
        for (int64_t h = 0; h < heads; ++h) {
            const int64_t from = (3 * h + part) * d_h;
            std::copy_n(qkv.ptr() + from * d, d_h * d, rows.ptr() + h * d_h * d);
            if (!bias.empty()) std::copy_n(qkv_bias.ptr() + from, d_h, bias.ptr() + h * d_h);
        }
        *weights[part] = transposed(rows);
        *biases[part] = std::move(bias);
    }
    w.w_o = transposed(load_of_shape(source, fmt::format("{}attention.dense.weight", block), {d, d}));
    w.b_o = optional_of_shape(source, fmt::format("{}attention.dense.bias", block), {d});
    validate_layer(w, fmt::format("{}: {}", source.path(), block));
    return w;
}

ModelWeights read_gpt_neox(const HfConfig& hf, const TensorSource& source) {
    ModelWeights w;
    w.config = common_config(hf, 0, 1e-5);
    w.config.activation = parse_activation(hf, "gelu");
    w.config.residual = hf.parallel_residual.value_or(true) ? ResidualLayout::parallel : ResidualLayout::pre_norm;
    w.config.shared_classifier = hf.tie_word_embeddings.value_or(false);
    const ModelConfig& c = w.config;
    const int64_t d = c.d_model;
    const std::string prefix = find_prefix(source, {"gpt_neox.", ""}, "embed_in.weight");
    read_blocks(
        w, source, prefix,
        {"layers.", "input_layernorm", "post_attention_layernorm", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h", false},
        [&](int64_t, const std::string& block) { return neox_attention(source, block, hf, c); });
    w.token_embedding = load_of_shape(source, fmt::format("{}embed_in.weight", prefix), {c.vocab_size, d});
    w.final_norm = layer_norm(source, fmt::format("{}final_layer_norm", prefix), d);
    if (!c.shared_classifier) w.classifier = load_of_shape(source, "embed_out.weight", {c.vocab_size, d});
    return w;
}

// BertForMaskedLM's cls.predictions.* (transform dense + activation + LayerNorm; the decoder tied
// to the word embeddings unless the folder has its own), or empty when the folder has none.
MaskedLmHead read_masked_lm_head(const TensorSource& source, const ModelConfig& c) {
    const std::string head = "cls.predictions.";
    MaskedLmHead m;
    if (!source.contains(head + "transform.dense.weight")) return m;
    const int64_t d = c.d_model;
    m.transform = load_of_shape(source, head + "transform.dense.weight", {d, d});
    m.transform_bias = load_of_shape(source, head + "transform.dense.bias", {d});
    m.norm = layer_norm(source, head + "transform.LayerNorm", d);
    m.decoder = optional_of_shape(source, head + "decoder.weight", {c.vocab_size, d});
    m.bias =
        load_of_shape(source, source.contains(head + "bias") ? head + "bias" : head + "decoder.bias", {c.vocab_size});
    return m;
}

ModelWeights read_bert(const HfConfig& hf, const TensorSource& source) {
    if (!hf.position_embedding_type.empty() && hf.position_embedding_type != "absolute")
        fail_input(hf.path, fmt::format("position_embedding_type \"{}\" is not supported (only \"absolute\")",
                                        escape_invalid_utf8(hf.position_embedding_type)));
    ModelWeights w;
    w.config = common_config(hf, 0, 1e-12);
    w.config.activation = parse_activation(hf, "gelu");
    w.config.residual = ResidualLayout::post_norm;
    const ModelConfig& c = w.config;
    const int64_t d = c.d_model;
    const std::string prefix = find_prefix(source, {"", "bert."}, "embeddings.word_embeddings.weight");
    read_blocks(w, source, prefix,
                {"encoder.layer.", "attention.output.LayerNorm", "output.LayerNorm", "intermediate.dense",
                 "output.dense", false},
                [&](int64_t layer, const std::string&) {
                    return preset_attention(source, "bert", layer, hf, hf.is_decoder.value_or(false));
                });
    const std::string embeddings = fmt::format("{}embeddings.", prefix);
    w.token_embedding = load_of_shape(source, fmt::format("{}word_embeddings.weight", embeddings), {c.vocab_size, d});
    w.position_embedding =
        load_of_shape(source, fmt::format("{}position_embeddings.weight", embeddings), {c.max_tokens, d});
    w.token_type_embedding = load_of_shape(source, fmt::format("{}token_type_embeddings.weight", embeddings),
                                           {hf.type_vocab_size.value_or(2), d});
    w.embedding_norm = layer_norm(source, fmt::format("{}LayerNorm", embeddings), d);
    w.masked_lm = read_masked_lm_head(source, c);
    return w;
}

}  // namespace

const std::vector<std::string>& hf_transformer_model_types() {
    static const std::vector<std::string> types = {"gpt2", "gpt_neox", "bert"};
    return types;
}

std::vector<std::string> hf_model_types() {
    std::vector<std::string> types = hf_llama_model_types();
    types.insert(types.end(), hf_transformer_model_types().begin(), hf_transformer_model_types().end());
    types.insert(types.end(), hf_seq2seq_model_types().begin(), hf_seq2seq_model_types().end());
    return types;
}

ModelWeights read_hf_transformer_folder(const std::string& folder, const LoadLimits& limits) {
    return read_hf_transformer_folder(folder, read_hf_config((std::filesystem::path(folder) / "config.json").string()),
                                      limits);
}

ModelWeights read_hf_transformer_folder(const std::string& folder, const HfConfig& hf, const LoadLimits& limits) {
    const auto& types = hf_transformer_model_types();
    if (std::find(types.begin(), types.end(), hf.model_type) == types.end()) {
        const auto& llama_types = hf_llama_model_types();
        if (std::find(llama_types.begin(), llama_types.end(), hf.model_type) != llama_types.end())
            throw Error(ErrorKind::internal,
                        fmt::format("{}: model_type \"{}\" is read by read_hf_llama_folder", hf.path, hf.model_type));
        if (is_seq2seq_model_type(hf.model_type)) refuse_encoder_decoder(hf.path, hf.model_type);
        fail_input(hf.path, fmt::format("model_type \"{}\" is not supported (supported: {})",
                                        escape_invalid_utf8(hf.model_type), fmt::join(hf_model_types(), ", ")));
    }
    const SafetensorsShards source(folder, limits);
    if (hf.model_type == "gpt2") return read_gpt2(hf, source);
    if (hf.model_type == "gpt_neox") return read_gpt_neox(hf, source);
    return read_bert(hf, source);
}

}  // namespace attn_viz
