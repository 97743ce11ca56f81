// Llama-like decoders' weights from a GGUF file, by the family table of gguf_decoder_families.hpp.
#include "gguf_llama.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "checkpoint_tensors.hpp"
#include "error.hpp"
#include "gguf_decoder_families.hpp"
#include "tensor.hpp"

namespace attn_viz {
namespace {

struct BlockTensor {
    std::string name;            // without "blk.N." and ".weight"
    std::vector<int64_t> shape;  // row-major; matrices [out, in]
};

// The tensors block `layer` of the family needs (biases aside), with their shapes.
std::vector<BlockTensor> block_tensors(const GgufDecoder& decoder) {
    const ModelConfig& c = decoder.config;
    const GgufDecoderFamily& family = *decoder.family;
    const int64_t d = c.d_model, f = c.ffn_dim, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
    std::vector<BlockTensor> t = {{"attn_norm", {d}}, {"attn_output", {d, q}}, {"ffn_norm", {d}}, {"ffn_down", {d, f}}};
    if (family.fused) {
        t.insert(t.end(), {{"attn_qkv", {q + 2 * kv, d}}, {"ffn_up", {2 * f, d}}});
    } else {
        t.insert(
            t.end(),
            {{"attn_q", {q, d}}, {"attn_k", {kv, d}}, {"attn_v", {kv, d}}, {"ffn_gate", {f, d}}, {"ffn_up", {f, d}}});
    }
    if (family.qk_norm) t.insert(t.end(), {{"attn_q_norm", {c.head_dim}}, {"attn_k_norm", {c.head_dim}}});
    if (family.gemma) t.insert(t.end(), {{"post_attention_norm", {d}}, {"post_ffw_norm", {d}}});
    return t;
}

std::string block_prefix(int64_t layer) { return fmt::format("blk.{}.", layer); }

void check_block(const GgufFile& file, const GgufDecoder& decoder, int64_t layer) {
    for (const BlockTensor& t : block_tensors(decoder))
        check_of_shape(file, fmt::format("{}{}.weight", block_prefix(layer), t.name), t.shape);
}

// Gemma's norm weights are stored as 1 + w (convert_hf_to_gguf.py adds 1); ModelWeights keeps w.
Tensor stored_norm(Tensor weight, bool plus_one) {
    if (plus_one)
        for (float& v : weight.data) v -= 1.0f;
    return weight;
}

// Block `layer` into `b`, every tensor checked against the configuration's shape: its attention
// (split from phi3's attn_qkv, with optional attn_{q,k,v,output}.bias elsewhere, q/k norms), norms
// and gated feed-forward (split from phi3's ffn_up = [gate; up]): the attention's matrices as x W,
// the feed-forward's a row per output as stored. The matrices are decoded (attention's straight
// into their transposes) in the memory b's matrices have (GgufFile::load_rows), so refilling one
// BlockWeights block after block allocates them once.
void read_block(const GgufFile& file, const GgufDecoder& decoder, int64_t layer, BlockWeights& b) {
    check_block(file, decoder, layer);  // first, so a bad block is named as the streaming reader names it
    const GgufDecoderFamily& family = *decoder.family;
    const ModelConfig& c = decoder.config;
    const std::vector<BlockTensor> tensors = block_tensors(decoder);
    const std::string p = block_prefix(layer);
    auto load = [&](const std::string& name) {
        const auto t =
            std::find_if(tensors.begin(), tensors.end(), [&](const BlockTensor& b) { return b.name == name; });
        return load_of_shape(file, fmt::format("{}{}.weight", p, name), t->shape);
    };
    // Rows [begin, begin + count) of matrix `name` (checked above) into `out`: the attention's
    // transposed (x W), the feed-forward's as stored (a row per output).
    auto load_transposed = [&](const std::string& name, int64_t begin, int64_t count, Tensor& out) {
        file.load_rows(fmt::format("{}{}.weight", p, name), begin, count, RowLayout::transposed, out);
    };
    auto load_rows = [&](const std::string& name, int64_t begin, int64_t count, Tensor& out) {
        file.load_rows(fmt::format("{}{}.weight", p, name), begin, count, RowLayout::as_stored, out);
    };
    auto bias = [&](const std::string& name, int64_t size) {
        return optional_of_shape(file, fmt::format("{}{}.bias", p, name), {size});
    };
    const int64_t d = c.d_model, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim, f = c.ffn_dim;
    LayerWeights& a = b.attention;
    {  // the layer's settings, keeping the memory of the matrices about to be overwritten
        LayerWeights settings = gguf_layer_settings(decoder, layer);
        settings.w_q = std::move(a.w_q), settings.w_k = std::move(a.w_k), settings.w_v = std::move(a.w_v),
        settings.w_o = std::move(a.w_o);
        a = std::move(settings);
    }
    if (family.fused) {
        load_transposed("attn_qkv", 0, q, a.w_q), load_transposed("attn_qkv", q, kv, a.w_k),
            load_transposed("attn_qkv", q + kv, kv, a.w_v);
        load_rows("ffn_up", 0, f, b.w_in), load_rows("ffn_up", f, f, b.w_up);
    } else {
        load_transposed("attn_q", 0, q, a.w_q), load_transposed("attn_k", 0, kv, a.w_k),
            load_transposed("attn_v", 0, kv, a.w_v);
        a.b_q = bias("attn_q", q), a.b_k = bias("attn_k", kv), a.b_v = bias("attn_v", kv),
        a.b_o = bias("attn_output", d);
        load_rows("ffn_gate", 0, f, b.w_in), load_rows("ffn_up", 0, f, b.w_up);
    }
    load_transposed("attn_output", 0, d, a.w_o);
    if (family.qk_norm)
        a.q_norm = stored_norm(load("attn_q_norm"), family.gemma),
        a.k_norm = stored_norm(load("attn_k_norm"), family.gemma);
    validate_layer(a, fmt::format("{}: layer {}", file.path(), layer));
    load_rows("ffn_down", 0, d, b.w_out);
    b.attention_norm.weight = stored_norm(load("attn_norm"), family.gemma);
    b.feed_forward_norm.weight = stored_norm(load("ffn_norm"), family.gemma);
    if (family.gemma) {
        b.attention_output_norm.weight = stored_norm(load("post_attention_norm"), true);
        b.feed_forward_output_norm.weight = stored_norm(load("post_ffw_norm"), true);
    }
}

// Block `layer` in memory of its own.
BlockWeights read_block(const GgufFile& file, const GgufDecoder& decoder, int64_t layer) {
    BlockWeights b;
    read_block(file, decoder, layer, b);
    return b;
}

// Configuration, embedding, final norm and classifier: everything but the blocks.
ModelWeights read_outside_blocks(const GgufFile& file, const GgufDecoder& decoder) {
    ModelWeights w;
    w.config = decoder.config;
    const ModelConfig& c = w.config;
    w.token_embedding = load_of_shape(file, "token_embd.weight", {c.vocab_size, c.d_model});
    w.final_norm.weight = stored_norm(load_of_shape(file, "output_norm.weight", {c.d_model}), decoder.family->gemma);
    if (!c.shared_classifier) w.classifier = load_of_shape(file, "output.weight", {c.vocab_size, c.d_model});
    return w;
}

}  // namespace

ModelConfig gguf_llama_config(const GgufFile& file) { return gguf_decoder_config(file).config; }

ModelWeights read_gguf_llama(const GgufFile& file) {
    const GgufDecoder decoder = gguf_decoder_config(file);
    ModelWeights w = read_outside_blocks(file, decoder);
    for (int64_t l = 0; l < w.config.n_layers; ++l) w.layers.push_back(read_block(file, decoder, l));
    return w;
}

ModelWeights read_gguf_llama_streaming(std::shared_ptr<const GgufFile> file) {
    const GgufDecoder decoder = gguf_decoder_config(*file);
    ModelWeights w = read_outside_blocks(*file, decoder);
    // Every block's tensors are checked now (names, shapes, decodable types), so a bad file fails
    // before the forward pass rather than at its last layer.
    for (int64_t l = 0; l < w.config.n_layers; ++l) check_block(*file, decoder, l);
    w.load_block = [file, decoder](int64_t layer) { return read_block(*file, decoder, layer); };
    w.load_block_into = [file, decoder](int64_t layer, BlockWeights& block) {
        read_block(*file, decoder, layer, block);
    };
    return w;
}

}  // namespace attn_viz
