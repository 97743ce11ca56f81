// The decoder block reader over any TensorSource.
#include "decoder_blocks.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "checkpoint_tensors.hpp"
#include "error.hpp"
#include "layouts.hpp"

namespace attn_viz {
namespace {

struct DecoderBlockTensor {
    const std::string* pattern;
    std::vector<int64_t> shape;  // row-major; matrices [out, in]
};

// Whether q, k and v are one stacked matrix (Phi-3, GPTBigCode), and gate and up (Phi-3).
bool fused_qkv(const DecoderTensorNames& n) { return !n.qkv.empty(); }
bool fused_gate_up(const DecoderTensorNames& n) { return !n.gate_up.empty(); }

// Whether the feed-forward reads the attention's input norm: a table row's parallel blocks
// (StableLM's) have the one norm.
bool shares_attention_norm(const DecoderLayout& layout) { return layout.config.residual == ResidualLayout::parallel; }

// Whether the blocks have norms before attention and feed-forward (all but OLMo 2's), and after
// them (Gemma 2/3's, OLMo 2's).
bool normalizes_inputs(const FamilySpec& family) { return family.residual != ResidualLayout::post_sublayer; }
bool normalizes_outputs(const FamilySpec& family) {
    return family.residual == ResidualLayout::sandwich || family.residual == ResidualLayout::post_sublayer;
}

// The sizes of the q and k norms' weights (per head: the head size; across heads: the projection).
std::pair<int64_t, int64_t> qk_norm_sizes(const DecoderLayout& layout) {
    const ModelConfig& c = layout.config;
    if (layout.family->qk_norm == QkNorm::across_heads) return {c.n_heads * c.head_dim, c.n_kv_heads * c.head_dim};
    return {c.head_dim, c.head_dim};
}

// The tensors every block of the layout holds (biases aside), with their shapes.
std::vector<DecoderBlockTensor> decoder_block_tensors(const DecoderLayout& layout) {
    const ModelConfig& c = layout.config;
    const FamilySpec& family = *layout.family;
    const DecoderTensorNames& n = family.names(layout.container);
    const int64_t d = c.d_model, f = c.ffn_dim, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
    std::vector<DecoderBlockTensor> t;  // in the order a file lists them (the first missing is named)
    const bool input_norm_tensors = normalizes_inputs(family) && !family.parameterless_norms;
    if (input_norm_tensors) t.push_back({&n.attention_norm, {d}});
    t.push_back({&n.o, {d, q}});
    if (input_norm_tensors && !shares_attention_norm(layout)) t.push_back({&n.feed_forward_norm, {d}});
    t.push_back({&n.down, {d, f}});
    if (fused_qkv(n))
        t.push_back({&n.qkv, {q + 2 * kv, d}});
    else
        t.insert(t.end(), {{&n.q, {q, d}}, {&n.k, {kv, d}}, {&n.v, {kv, d}}});
    if (fused_gate_up(n))
        t.push_back({&n.gate_up, {2 * f, d}});
    else
        t.push_back({&n.up, {f, d}});
    if (!fused_gate_up(n) && family.feed_forward == FeedForwardKind::gated) t.push_back({&n.gate, {f, d}});
    if (family.qk_norm != QkNorm::none) {
        const auto [q_size, k_size] = qk_norm_sizes(layout);
        t.insert(t.end(), {{&n.q_norm, {q_size}}, {&n.k_norm, {k_size}}});
    }
    if (normalizes_outputs(family))
        t.insert(t.end(), {{&n.attention_output_norm, {d}}, {&n.feed_forward_output_norm, {d}}});
    return t;
}

// A norm's weight: GGUF stores Gemma's (1 + w) norms as 1 + w (convert_hf_to_gguf.py adds 1);
// ModelWeights keeps w.
Tensor decoder_norm_weight(const TensorSource& source, const DecoderLayout& layout, const std::string& pattern,
                           int64_t layer, int64_t size) {
    Tensor weight = load_of_shape(source, block_tensor(pattern, layer), {size});
    if (layout.container == Container::gguf && layout.family->norm == NormKind::rms_offset_one)
        for (float& v : weight.data) v -= 1.0f;
    return weight;
}

// A norm without tensors (OLMo's): weight 1, bias 0.
NormWeights parameterless_norm(int64_t size) {
    NormWeights norm{Tensor({size}), Tensor({size})};
    std::fill(norm.weight.data.begin(), norm.weight.data.end(), 1.0f);
    return norm;
}

// A block norm: its weight as decoder_norm_weight reads it, and a LayerNorm's bias.
NormWeights decoder_norm(const TensorSource& source, const DecoderLayout& layout, const std::string& pattern,
                         int64_t layer, int64_t size) {
    if (layout.family->parameterless_norms) return parameterless_norm(size);
    NormWeights norm{decoder_norm_weight(source, layout, pattern, layer, size), {}};
    if (layout.family->norm == NormKind::layer_norm && layout.family->layer_norm_biases)
        norm.bias = load_of_shape(source, block_tensor(pattern, layer, ".bias"), {size});
    return norm;
}

// The matrix `name` of `shape`, checked, its row ranges into their tensors.
void load_checked_rows(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape,
                       const std::vector<RowRange>& ranges, RowLayout layout) {
    check_of_shape(source, name, shape);
    source.load_row_ranges(name, ranges, layout);
}

// Throws Error(bad_input) naming the checkpoint unless the bias tensor `name` is `present`
// exactly when `expected` (`reason` says why it is or is not).
void expect_hf_bias(bool present, bool expected, const std::string& name, const std::string& reason,
                    const TensorSource& source) {
    if (present == expected) return;
    fail_input(source.path(), fmt::format("tensor '{}' is {}, but {}", name, expected ? "missing" : "there", reason));
}

// Whether a folder whose config.json is `hf` has `rule`'s biases.
bool has_biases(const BiasRule& rule, const HfConfig& hf) {
    return rule.key ? (hf.*rule.key).value_or(rule.by_default) : rule.by_default;
}

// Why `rule` says a folder has its biases on `what` ("q/k/v", "MLP", ...) or has none.
std::string bias_reason(const BiasRule& rule, const HfConfig& hf, const char* what) {
    const bool present = has_biases(rule, hf);
    if (!rule.key) return fmt::format("{} has {}{} biases", hf.model_type, present ? "" : "no ", what);
    return fmt::format(
        "config.json's {} is {}", rule.key_name,
        present ? (rule.by_default ? "true or absent" : "true") : (rule.by_default ? "false" : "false or absent"));
}

// A folder's attention biases as the family's rules and config.json say (Phi-3: none on qkv_proj).
void check_hf_attention_biases(const TensorSource& source, const DecoderLayout& layout, int64_t l,
                               const LayerWeights& a) {
    const FamilySpec& family = *layout.family;
    const DecoderTensorNames& n = family.hf_names;
    const HfConfig& hf = *layout.hf;
    const bool qkv = has_biases(family.qkv_biases, hf), o = has_biases(family.o_bias, hf);
    const std::string qkv_why = bias_reason(family.qkv_biases, hf, "q/k/v");
    const std::vector<const std::string*> projections =
        fused_qkv(n) ? std::vector<const std::string*>{&n.qkv} : std::vector<const std::string*>{&n.q, &n.k, &n.v};
    const bool biased[] = {!a.b_q.empty(), !a.b_k.empty(), !a.b_v.empty()};  // (fused: all or none)
    for (size_t i = 0; i < projections.size(); ++i)
        expect_hf_bias(biased[i], qkv, block_tensor(*projections[i], l, ".bias"), qkv_why, source);
    expect_hf_bias(!a.b_o.empty(), o, block_tensor(n.o, l, ".bias"), bias_reason(family.o_bias, hf, "o_proj"), source);
}

// Whether block attention is read through the llama layout preset (layouts.hpp), as one layer of
// a folder is, with its messages: a folder's separate q/k/v projections named as Llama's.
bool reads_through_llama_preset(const DecoderLayout& layout) {
    return layout.container == Container::hf && !fused_qkv(layout.family->hf_names) &&
           layout.family->hf_names.q == "model.layers.{}.self_attn.q_proj";
}

// Block l's attention matrices and biases (a folder's checked against config.json), then the
// block's settings over them.
void read_decoder_attention(const TensorSource& source, const DecoderLayout& layout, int64_t l, LayerWeights& a) {
    const ModelConfig& c = layout.config;
    const FamilySpec& family = *layout.family;
    const DecoderTensorNames& n = family.names(layout.container);
    const int64_t d = c.d_model, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
    const bool preset = reads_through_llama_preset(layout);
    if (preset) {
        LayoutOptions options;
        options.num_heads = c.n_heads;
        options.num_kv_heads = c.n_kv_heads;
        options.rope_base = c.rope_base;
        a = load_layer(source, "llama", static_cast<int>(l), options, *layout.hf);
        if (a.d_head != c.head_dim)
            fail_input(source.path(), fmt::format("tensor '{}' has {} outputs, expected {} heads x head size {}",
                                                  block_tensor(n.q, l), a.num_heads * a.d_head, c.n_heads, c.head_dim));
    } else if (fused_qkv(n)) {  // q, k and v are rows [0, H d_h), [H d_h, (H + KV) d_h) and the rest
        load_checked_rows(source, block_tensor(n.qkv, l), {q + 2 * kv, d},
                          {{0, q, &a.w_q}, {q, kv, &a.w_k}, {q + kv, kv, &a.w_v}}, RowLayout::transposed);
    } else {
        load_checked_rows(source, block_tensor(n.q, l), {q, d}, {{0, q, &a.w_q}}, RowLayout::transposed);
        load_checked_rows(source, block_tensor(n.k, l), {kv, d}, {{0, kv, &a.w_k}}, RowLayout::transposed);
        load_checked_rows(source, block_tensor(n.v, l), {kv, d}, {{0, kv, &a.w_v}}, RowLayout::transposed);
    }
    if (!preset) load_checked_rows(source, block_tensor(n.o, l), {d, q}, {{0, d, &a.w_o}}, RowLayout::transposed);
    {  // the block's settings, keeping the tensors just read
        LayerWeights settings = layout.settings[static_cast<size_t>(l)];
        settings.w_q = std::move(a.w_q), settings.w_k = std::move(a.w_k), settings.w_v = std::move(a.w_v),
        settings.w_o = std::move(a.w_o);
        settings.b_q = std::move(a.b_q), settings.b_k = std::move(a.b_k), settings.b_v = std::move(a.b_v),
        settings.b_o = std::move(a.b_o);
        a = std::move(settings);
    }
    if (fused_qkv(n)) {  // the biases the file holds, a stacked one cut as its matrix
        if (const Tensor qkv = optional_of_shape(source, block_tensor(n.qkv, l, ".bias"), {q + 2 * kv}); !qkv.empty())
            a.b_q = rows_of(qkv, 0, q), a.b_k = rows_of(qkv, q, kv), a.b_v = rows_of(qkv, q + kv, kv);
    } else if (!preset) {
        a.b_q = optional_of_shape(source, block_tensor(n.q, l, ".bias"), {q});
        a.b_k = optional_of_shape(source, block_tensor(n.k, l, ".bias"), {kv});
        a.b_v = optional_of_shape(source, block_tensor(n.v, l, ".bias"), {kv});
    }
    if (!preset) a.b_o = optional_of_shape(source, block_tensor(n.o, l, ".bias"), {d});
    // A folder's must be as the family's rules and config.json say; llama.cpp reads whichever a
    // GGUF file holds.
    if (layout.container == Container::hf) check_hf_attention_biases(source, layout, l, a);
    if (family.qk_norm != QkNorm::none) {
        const auto [q_size, k_size] = qk_norm_sizes(layout);
        a.q_norm = decoder_norm_weight(source, layout, n.q_norm, l, q_size);
        a.k_norm = decoder_norm_weight(source, layout, n.k_norm, l, k_size);
    }
    if (!preset) validate_layer(a, fmt::format("{}: layer {}", source.path(), l));
}

// The feed-forward's bias tensors, by the tensor they add to: gated [gate, up, down] into b_in,
// b_up, b_out; plain [up, down] into b_in, b_out.
struct MlpBias {
    Tensor* bias;
    const std::string* pattern;
    int64_t size;
};
std::vector<MlpBias> mlp_biases(const DecoderLayout& layout, BlockWeights& b) {
    const DecoderTensorNames& n = layout.family->names(layout.container);
    const int64_t d = layout.config.d_model, f = layout.config.ffn_dim;
    if (layout.family->feed_forward == FeedForwardKind::plain) return {{&b.b_in, &n.up, f}, {&b.b_out, &n.down, d}};
    return {{&b.b_in, &n.gate, f}, {&b.b_up, &n.up, f}, {&b.b_out, &n.down, d}};
}

// A folder's feed-forward biases as the family's rule and config.json say.
void read_hf_mlp_biases(const TensorSource& source, const DecoderLayout& layout, int64_t l, BlockWeights& b) {
    const BiasRule& rule = layout.family->mlp_biases;
    const bool present = has_biases(rule, *layout.hf);
    const std::string why = bias_reason(rule, *layout.hf, "MLP");
    for (const MlpBias& m : mlp_biases(layout, b)) {
        const std::string name = block_tensor(*m.pattern, l, ".bias");
        expect_hf_bias(source.contains(name), present, name, why, source);
        if (present) *m.bias = load_of_shape(source, name, {m.size});
    }
}

// Throws Error(bad_input) naming the file and the tensor for a feed-forward bias of a GGUF block
// whose gate and up projections are fused (Phi-3): it is read without biases.
void refuse_fused_gguf_mlp_biases(const TensorSource& source, const DecoderLayout& layout, int64_t l) {
    const FamilySpec& family = *layout.family;
    if (layout.container != Container::gguf || !fused_gate_up(family.gguf_names)) return;
    for (const std::string* pattern : {&family.gguf_names.gate_up, &family.gguf_names.down})
        if (const std::string name = block_tensor(*pattern, l, ".bias"); source.contains(name))
            fail_input(source.path(),
                       fmt::format("{}: feed-forward biases are not read for {} GGUF files", name, family.name));
}

// A GGUF block's feed-forward biases, whichever the file holds (llama.cpp reads them where they
// are; a fused block has none: refuse_fused_gguf_mlp_biases).
void read_gguf_mlp_biases(const TensorSource& source, const DecoderLayout& layout, int64_t l, BlockWeights& b) {
    if (fused_gate_up(layout.family->gguf_names)) return;
    for (const MlpBias& m : mlp_biases(layout, b))
        *m.bias = optional_of_shape(source, block_tensor(*m.pattern, l, ".bias"), {m.size});
}

// Throws Error(bad_input) naming the file and the tensor for a GGUF block norm that llama.cpp
// would apply and the family's row does not read: q/k norms outside Qwen3, Gemma 3 and OLMo 2
// (StableLM 2 12B's per-head LayerNorms), an ffn_norm in a parallel block (which block 0 says by
// having none), norms before the sublayers of OLMo 2's blocks, biases of Cohere's LayerNorms.
void refuse_unread_gguf_norms(const TensorSource& source, const DecoderLayout& layout, int64_t l) {
    if (layout.container != Container::gguf) return;
    const FamilySpec& family = *layout.family;
    std::vector<std::pair<std::string, std::string>> unread;  // tensor, why
    if (family.qk_norm == QkNorm::none)
        for (const char* pattern : {"blk.{}.attn_q_norm", "blk.{}.attn_k_norm"})
            unread.emplace_back(block_tensor(pattern, l),
                                fmt::format("q/k norms are not read for {} GGUF files", family.name));
    if (shares_attention_norm(layout))
        unread.emplace_back(block_tensor(family.gguf_names.feed_forward_norm, l),
                            "block 0 has no ffn_norm (parallel blocks), so none is read here");
    if (!normalizes_inputs(family))
        for (const char* pattern : {"blk.{}.attn_norm", "blk.{}.ffn_norm"})
            unread.emplace_back(block_tensor(pattern, l), fmt::format("{} blocks have no norms before attention and "
                                                                      "feed-forward",
                                                                      family.name));
    if (family.norm == NormKind::layer_norm && !family.layer_norm_biases)
        unread.emplace_back(block_tensor(family.gguf_names.attention_norm, l, ".bias"),
                            fmt::format("{} LayerNorms have no bias, so none is read", family.name));
    for (const auto& [name, why] : unread)
        if (source.contains(name)) fail_input(source.path(), fmt::format("{}: {}", name, why));
}

}  // namespace

void check_decoder_block(const TensorSource& source, const DecoderLayout& layout, int64_t layer) {
    for (const DecoderBlockTensor& t : decoder_block_tensors(layout))
        check_of_shape(source, block_tensor(*t.pattern, layer), t.shape);
    refuse_fused_gguf_mlp_biases(source, layout, layer);
    refuse_unread_gguf_norms(source, layout, layer);
}

void read_decoder_block(const TensorSource& source, const DecoderLayout& layout, int64_t l, BlockWeights& b) {
    if (layout.container == Container::gguf) check_decoder_block(source, layout, l);
    const FamilySpec& family = *layout.family;
    const DecoderTensorNames& n = family.names(layout.container);
    const int64_t d = layout.config.d_model, f = layout.config.ffn_dim;
    read_decoder_attention(source, layout, l, b.attention);
    if (normalizes_inputs(family)) {
        b.attention_norm = decoder_norm(source, layout, n.attention_norm, l, d);
        b.feed_forward_norm =
            shares_attention_norm(layout) ? b.attention_norm : decoder_norm(source, layout, n.feed_forward_norm, l, d);
    }
    if (normalizes_outputs(family)) {
        b.attention_output_norm = decoder_norm(source, layout, n.attention_output_norm, l, d);
        b.feed_forward_output_norm = decoder_norm(source, layout, n.feed_forward_output_norm, l, d);
    }
    if (fused_gate_up(n)) {
        load_checked_rows(source, block_tensor(n.gate_up, l), {2 * f, d}, {{0, f, &b.w_in}, {f, f, &b.w_up}},
                          RowLayout::as_stored);
    } else if (family.feed_forward == FeedForwardKind::plain) {
        load_checked_rows(source, block_tensor(n.up, l), {f, d}, {{0, f, &b.w_in}}, RowLayout::as_stored);
    } else {
        load_checked_rows(source, block_tensor(n.gate, l), {f, d}, {{0, f, &b.w_in}}, RowLayout::as_stored);
        load_checked_rows(source, block_tensor(n.up, l), {f, d}, {{0, f, &b.w_up}}, RowLayout::as_stored);
    }
    load_checked_rows(source, block_tensor(n.down, l), {d, f}, {{0, d, &b.w_out}}, RowLayout::as_stored);
    if (layout.container == Container::hf)
        read_hf_mlp_biases(source, layout, l, b);
    else
        read_gguf_mlp_biases(source, layout, l, b);
}

void read_decoder_outside_blocks(const TensorSource& source, const DecoderLayout& layout, ModelWeights& w) {
    const ModelConfig& c = layout.config;
    const DecoderTensorNames& n = layout.family->names(layout.container);
    const auto name = [](const std::string& pattern) { return fmt::format("{}.weight", pattern); };
    w.token_embedding = load_of_shape(source, name(n.embedding), {c.vocab_size, c.d_model});
    // (A block pattern without "{}" names the one tensor; OPT's post-norm blocks have no final norm.)
    if (layout.final_norm) w.final_norm = decoder_norm(source, layout, n.final_norm, 0, c.d_model);
    if (!c.shared_classifier) w.classifier = load_of_shape(source, name(n.classifier), {c.vocab_size, c.d_model});
    if (!n.position_embedding.empty()) {  // rows [offset, offset + max_tokens) for positions 0, 1, ... (OPT: 2)
        const int64_t offset = layout.family->position_offset;
        check_of_shape(source, name(n.position_embedding), {c.max_tokens + offset, c.d_model});
        source.load_row_ranges(name(n.position_embedding), {{offset, c.max_tokens, &w.position_embedding}},
                               RowLayout::as_stored);
    }
}

std::shared_ptr<const BlockSource> read_decoder_blocks(const TensorSource& source, const DecoderLayout& layout) {
    std::vector<BlockWeights> blocks(static_cast<size_t>(layout.config.n_layers));
    for (int64_t l = 0; l < layout.config.n_layers; ++l)
        read_decoder_block(source, layout, l, blocks[static_cast<size_t>(l)]);
    return std::make_shared<HeldBlocks>(std::move(blocks));
}

StreamedDecoderBlocks::StreamedDecoderBlocks(std::shared_ptr<const TensorSource> source, DecoderLayout layout)
    : source_(std::move(source)), layout_(std::move(layout)) {
    for (int64_t l = 0; l < layout_.config.n_layers; ++l) check_decoder_block(*source_, layout_, l);
}

BlockWeights StreamedDecoderBlocks::load(int64_t layer) const {
    BlockWeights b;
    read_decoder_block(*source_, layout_, layer, b);
    return b;
}

void StreamedDecoderBlocks::load_into(int64_t layer, BlockWeights& block) const {
    read_decoder_block(*source_, layout_, layer, block);
}

}  // namespace attn_viz
