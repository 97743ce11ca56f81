// GPT-2, GPT-NeoX and BERT hyper-parameters and weights from a GGUF file, in the x W convention.
#include "gguf_transformer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "checkpoint_tensors.hpp"
#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

// LayerNorm (`default_epsilon` where the file has no layer_norm_epsilon) and a plain MLP, pre-norm
// unless the family says otherwise.
ModelConfig read_config(const GgufFile& file, const std::string& arch, double default_epsilon) {
    auto count = [&](const char* key) { return file.required_count(fmt::format("{}.{}", arch, key)); };
    ModelConfig c;
    c.architecture = arch == "gptneox" ? "gpt_neox" : arch;  // Hugging Face's name for the family
    c.family = c.architecture;
    c.norm = NormKind::layer_norm;
    c.feed_forward = FeedForwardKind::plain;
    c.n_layers = count("block_count");
    c.d_model = count("embedding_length");
    c.ffn_dim = count("feed_forward_length");
    c.max_tokens = count("context_length");
    const int64_t heads = count("attention.head_count");
    c.n_heads = heads, c.n_kv_heads = heads;
    const std::string& path = file.path();
    if (file.has(fmt::format("{}.attention.head_count_kv", arch)) && count("attention.head_count_kv") != heads)
        fail_input(path,
                   fmt::format("{}.attention.head_count_kv differs from the head count (grouped-query attention is "
                               "not part of {})",
                               arch, arch));
    for (const auto& [key, value] :
         {std::pair{"block_count", c.n_layers}, std::pair{"embedding_length", c.d_model},
          std::pair{"feed_forward_length", c.ffn_dim}, std::pair{"context_length", c.max_tokens},
          std::pair{"attention.head_count", heads}})
        if (value < 1 || value > (int64_t{1} << 24))
            fail_input(path, fmt::format("{}.{} is {}, outside 1..2^24", arch, key, value));
    if (c.d_model % heads != 0)
        fail_input(path, fmt::format("{}.embedding_length {} is not divisible by {} heads", arch, c.d_model, heads));
    c.head_dim = c.d_model / heads;
    c.norm_epsilon = file.get_float(fmt::format("{}.attention.layer_norm_epsilon", arch)).value_or(default_epsilon);
    if (!(c.norm_epsilon > 0 && c.norm_epsilon < 1))
        fail_input(path, fmt::format("{}.attention.layer_norm_epsilon {:f} is outside (0, 1)", arch, c.norm_epsilon));
    const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
    if (!embedding || embedding->dims.size() != 2) fail_input(path, "has no 2-D tensor \"token_embd.weight\"");
    c.vocab_size = embedding->dims[1];
    return c;
}

// Block `layer`'s attention from the fused attn_qkv (rows q, k, v) and attn_output.
LayerWeights attention(const GgufFile& file, const std::string& block, int64_t d, int64_t heads) {
    LayerWeights w;
    w.d_model = d, w.num_heads = heads, w.num_kv_heads = heads, w.d_head = d / heads, w.causal = true;
    const Tensor qkv = load_of_shape(file, fmt::format("{}attn_qkv.weight", block), {3 * d, d});
    const Tensor qkv_bias = optional_of_shape(file, fmt::format("{}attn_qkv.bias", block), {3 * d});
    Tensor* weights[3] = {&w.w_q, &w.w_k, &w.w_v};
    Tensor* biases[3] = {&w.b_q, &w.b_k, &w.b_v};
    for (int64_t part = 0; part < 3; ++part) {
        *weights[part] = transposed(rows_of(qkv, part * d, d));
        if (!qkv_bias.empty()) *biases[part] = rows_of(qkv_bias, part * d, d);
    }
    w.w_o = linear_weight(file, fmt::format("{}attn_output.weight", block), d, d);
    w.b_o = optional_of_shape(file, fmt::format("{}attn_output.bias", block), {d});
    return w;
}

// Every block of `w.config`: its attention from `attention_of("blk.N.")`, checked, the two
// LayerNorms `norms` (around attention, around the MLP), ffn_up and ffn_down.
template <typename AttentionOf>
void read_blocks(const GgufFile& file, ModelWeights& w, const std::pair<const char*, const char*>& norms,
                 const AttentionOf& attention_of) {
    const int64_t d = w.config.d_model, f = w.config.ffn_dim;
    std::vector<BlockWeights> blocks;
    for (int64_t l = 0; l < w.config.n_layers; ++l) {
        const std::string block = fmt::format("blk.{}.", l);
        BlockWeights b;
        b.attention = attention_of(block);
        validate_layer(b.attention, fmt::format("{}: {}", file.path(), block));
        b.attention_norm = layer_norm(file, fmt::format("{}{}", block, norms.first), d);
        b.feed_forward_norm = layer_norm(file, fmt::format("{}{}", block, norms.second), d);
        b.w_in = load_of_shape(file, fmt::format("{}ffn_up.weight", block), {f, d});
        b.b_in = optional_of_shape(file, fmt::format("{}ffn_up.bias", block), {f});
        b.w_out = load_of_shape(file, fmt::format("{}ffn_down.weight", block), {d, f});
        b.b_out = optional_of_shape(file, fmt::format("{}ffn_down.bias", block), {d});
        blocks.push_back(std::move(b));
    }
    w.blocks = std::make_shared<HeldBlocks>(std::move(blocks));
}

// BERT's attention: separate attn_q, attn_k, attn_v [D, D] (biases optional) and attn_output; no
// causal mask.
LayerWeights bert_attention(const GgufFile& file, const std::string& block, int64_t d, int64_t heads) {
    LayerWeights w;
    w.d_model = d, w.num_heads = heads, w.num_kv_heads = heads, w.d_head = d / heads, w.causal = false;
    Tensor* weights[4] = {&w.w_q, &w.w_k, &w.w_v, &w.w_o};
    Tensor* biases[4] = {&w.b_q, &w.b_k, &w.b_v, &w.b_o};
    const char* names[4] = {"attn_q", "attn_k", "attn_v", "attn_output"};
    for (int part = 0; part < 4; ++part) {
        *weights[part] = linear_weight(file, fmt::format("{}{}.weight", block, names[part]), d, d);
        *biases[part] = optional_of_shape(file, fmt::format("{}{}.bias", block, names[part]), {d});
    }
    return w;
}

// BERT's encoder: word + position + token type 0 embeddings, then token_embd_norm; post-LayerNorm
// blocks (attn_output_norm after attention + residual, layer_output_norm after the MLP +
// residual), exact GELU, no classifier.
ModelWeights read_bert(const GgufFile& file) {
    const std::string& path = file.path();
    if (file.get_bool("bert.attention.causal").value_or(false))
        fail_input(path, "bert.attention.causal is true; attn-viz reads BERT as the encoder it is (no causal mask)");
    ModelWeights w;
    w.config = read_config(file, "bert", 1e-12);
    ModelConfig& c = w.config;
    c.activation = Activation::gelu_erf;
    c.residual = ResidualLayout::post_norm;
    const int64_t d = c.d_model, heads = c.n_heads;
    w.token_embedding = load_of_shape(file, "token_embd.weight", {c.vocab_size, d});
    w.position_embedding = load_of_shape(file, "position_embd.weight", {c.max_tokens, d});
    // token_types [type count, D] (the count is tokenizer.ggml.token_type_count).
    const GgufTensorInfo* types = file.find_tensor("token_types.weight");
    const int64_t type_count = types && types->dims.size() == 2 ? types->dims[1] : 1;
    w.token_type_embedding = load_of_shape(file, "token_types.weight", {type_count, d});
    w.embedding_norm = layer_norm(file, "token_embd_norm", d);
    read_blocks(file, w, {"attn_output_norm", "layer_output_norm"},
                [&](const std::string& block) { return bert_attention(file, block, d, heads); });
    return w;
}

// GPT-NeoX's rotary settings on one layer.
void set_rotary(const GgufFile& file, LayerWeights& w) {
    const std::string& path = file.path();
    w.rope_dims = file.required_count("gptneox.rope.dimension_count");
    if (w.rope_dims > w.d_head || w.rope_dims % 2 != 0)
        fail_input(path, fmt::format("gptneox.rope.dimension_count {} is not an even count of at most the head size {}",
                                     w.rope_dims, w.d_head));
    w.rope = w.rope_dims > 0 ? RopeStyle::half_split : RopeStyle::none;
    w.rope_base = file.get_float("gptneox.rope.freq_base").value_or(10000.0);
    if (!(w.rope_base > 1 && w.rope_base < 1e12))
        fail_input(path, fmt::format("gptneox.rope.freq_base {:f} is outside (1, 1e12)", w.rope_base));
}

}  // namespace

const std::vector<std::string>& gguf_transformer_architectures() {
    static const std::vector<std::string> architectures = {"gpt2", "gptneox", "bert"};
    return architectures;
}

ModelWeights read_gguf_transformer(const GgufFile& file) {
    const std::string architecture = file.get_string("general.architecture").value_or("");
    const auto& known = gguf_transformer_architectures();
    if (std::find(known.begin(), known.end(), architecture) == known.end())
        fail_input(file.path(),
                   fmt::format(
                       "general.architecture is \"{}\"; this reader takes GGUF models of architecture gpt2, gptneox or "
                       "bert (llama: gguf_llama.hpp)",
                       escape_invalid_utf8(architecture)));
    if (architecture == "bert") return read_bert(file);
    const bool neox = architecture == "gptneox";
    ModelWeights w;
    w.config = read_config(file, architecture, 1e-5);
    ModelConfig& c = w.config;
    c.activation = neox ? Activation::gelu_erf : Activation::gelu_tanh;
    if (neox && file.get_bool("gptneox.use_parallel_residual").value_or(true)) c.residual = ResidualLayout::parallel;
    c.shared_classifier = !file.find_tensor("output.weight");
    const int64_t d = c.d_model, heads = c.n_heads;
    w.token_embedding = load_of_shape(file, "token_embd.weight", {c.vocab_size, d});
    if (!neox) w.position_embedding = load_of_shape(file, "position_embd.weight", {c.max_tokens, d});
    read_blocks(file, w, {"attn_norm", "ffn_norm"}, [&](const std::string& block) {
        LayerWeights attention_weights = attention(file, block, d, heads);
        if (neox) set_rotary(file, attention_weights);
        return attention_weights;
    });
    w.final_norm = layer_norm(file, "output_norm", d);
    if (!c.shared_classifier) w.classifier = load_of_shape(file, "output.weight", {c.vocab_size, d});
    return w;
}

}  // namespace attn_viz
