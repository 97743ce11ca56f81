// Parsing llama2.c "version 0" checkpoints into ModelWeights.
#include "llama2c_checkpoint.hpp"

#include <cstring>

#include <fmt/format.h>

#include "error.hpp"
#include "file_kind.hpp"
#include "finite.hpp"
#include "ggml_quants.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"

namespace attn_viz {
namespace {

constexpr int64_t header_bytes = 7 * 4;

ModelConfig parse_header(const unsigned char* bytes, size_t size, const std::string& path) {
    if (size < static_cast<size_t>(header_bytes)) fail_input(path, "too short for a llama2.c checkpoint header");
    int32_t fields[7];
    std::memcpy(fields, bytes, sizeof fields);
    if (std::memcmp(bytes, "24ka", 4) == 0)  // 0x616b3432 little-endian: llama2.c's newer export formats
        fail_input(path, "is a llama2.c version 1/2 export; only the legacy version-0 format is supported");
    ModelConfig c;  // RMSNorm (eps 1e-5), gated SiLU, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.family = c.architecture;
    c.d_model = fields[0], c.ffn_dim = fields[1], c.n_layers = fields[2], c.n_heads = fields[3];
    c.n_kv_heads = fields[4], c.vocab_size = fields[5], c.max_tokens = fields[6];
    c.shared_classifier = c.vocab_size > 0;
    if (c.vocab_size < 0) c.vocab_size = -c.vocab_size;
    validate_llama_config(c, path, "llama2.c header field", " (not a llama2.c version-0 checkpoint?)");
    c.head_dim = c.d_model / c.n_heads;
    return c;
}

// Hands out consecutive float arrays of the file; the total was checked against the file
// beforehand. Each array must fit the memory budget and be finite unless the limits allow others (named as in
// llama2.c's run.c, index as stored).
class ArrayReader {
public:
    ArrayReader(const unsigned char* start, const std::string& path, const LoadLimits& limits)
        : at_(start), path_(path), limits_(limits) {}
    // The next array as a tensor of `shape`.
    Tensor next(std::vector<int64_t> shape, const std::string& name) {
        const std::string what = fmt::format("{}: {}", path_, name);
        check_memory_elements(static_cast<uint64_t>(element_count(shape, what)), sizeof(float), limits_.memory_budget,
                              fmt::format("{} of shape {}", what, shape_string(shape)));
        Tensor t = Tensor::uninitialized(std::move(shape), what);
        std::memcpy(t.ptr(), at_, t.data.size() * 4);
        at_ += t.data.size() * 4;
        require_finite(t, name, path_, limits_);
        return t;
    }
    // The next array of stacked [out, in] matrices, one per layer: as stored, or transposed to x W.
    std::vector<Tensor> next_per_layer_matrices(int64_t layers, int64_t out, int64_t in, const std::string& name,
                                                RowLayout layout) {
        std::vector<Tensor> result;
        for (int64_t l = 0; l < layers; ++l) {
            Tensor m = next({out, in}, layer_name(name, l));
            result.push_back(layout == RowLayout::transposed ? transposed(m) : std::move(m));
        }
        return result;
    }
    std::vector<Tensor> next_per_layer(int64_t layers, int64_t size, const std::string& name) {
        std::vector<Tensor> result;
        for (int64_t l = 0; l < layers; ++l) result.push_back(next({size}, layer_name(name, l)));
        return result;
    }
    void skip(int64_t floats) { at_ += floats * 4; }

private:
    static std::string layer_name(const std::string& name, int64_t layer) {
        return fmt::format("layer {} {}", layer, name);
    }
    const unsigned char* at_;
    const std::string& path_;
    const LoadLimits& limits_;
};

}  // namespace

// Bounds far above any llama2.c model, low enough that no product below overflows.
void validate_llama_config(const ModelConfig& c, const std::string& path, const std::string& field,
                           const std::string& hint) {
    auto check_count = [&](int64_t value, int64_t limit, const char* name) {
        if (value <= 0 || value > limit)
            fail_input(path, fmt::format("{} {} = {} is outside 1..{}{}", field, name, value, limit, hint));
    };
    check_count(c.d_model, 1 << 15, "dim");
    check_count(c.ffn_dim, 1 << 17, "hidden_dim");
    check_count(c.n_layers, 1 << 10, "n_layers");
    check_count(c.n_heads, c.d_model, "n_heads");
    check_count(c.n_kv_heads, c.n_heads, "n_kv_heads");
    check_count(c.vocab_size, 1 << 20, "vocab_size");
    check_count(c.max_tokens, 1 << 20, "seq_len");
    if (c.d_model % c.n_heads != 0)
        fail_input(path, fmt::format("dim {} is not divisible by n_heads {}", c.d_model, c.n_heads));
    if (c.n_heads % c.n_kv_heads != 0)
        fail_input(path, fmt::format("n_heads {} is not divisible by n_kv_heads {}", c.n_heads, c.n_kv_heads));
    if ((c.d_model / c.n_heads) % 2 != 0)
        fail_input(path, fmt::format("head size {} is odd (RoPE needs pairs)", c.d_model / c.n_heads));
}

LayerWeights llama_attention_weights(const ModelConfig& c, Tensor w_q, Tensor w_k, Tensor w_v, Tensor w_o,
                                     const std::string& where) {
    LayerWeights a;
    a.d_model = c.d_model, a.num_heads = c.n_heads, a.num_kv_heads = c.n_kv_heads, a.d_head = c.d_model / c.n_heads;
    a.causal = true, a.rope = RopeStyle::interleaved, a.rope_base = c.rope_base;
    a.w_q = std::move(w_q), a.w_k = std::move(w_k), a.w_v = std::move(w_v), a.w_o = std::move(w_o);
    validate_layer(a, where);
    return a;
}

ModelWeights read_llama2c_checkpoint(const std::string& path, const LoadLimits& limits) {
    MappedFile file(path, "llama2.c checkpoint");
    refuse_other_file_kind(file.data(), file.size(), path, FileKind::llama2c_checkpoint, "a llama2.c checkpoint");

    // Step 1: header, then the exact file size the arrays need (bounded counts: no overflow).
    const ModelConfig c = parse_header(file.data(), file.size(), path);
    const int64_t d = c.d_model, f = c.ffn_dim, layers = c.n_layers, head = c.d_model / c.n_heads,
                  kv = c.n_kv_heads * head;
    const int64_t per_layer = 2 * d + d * d + 2 * kv * d + d * d + 3 * d * f;
    const int64_t floats =
        c.vocab_size * d + layers * per_layer + d + c.max_tokens * head + (c.shared_classifier ? 0 : c.vocab_size * d);
    const int64_t expected = header_bytes + 4 * floats;
    if (static_cast<int64_t>(file.size()) != expected)
        fail_input(path, fmt::format("file has {} bytes but its header (dim {}, {} layers, vocab {}) needs {}{}",
                                     file.size(), d, layers, c.vocab_size, expected,
                                     static_cast<int64_t>(file.size()) < expected ? " (truncated)" : ""));

    // Step 2: the arrays in file order.
    ArrayReader reader(file.data() + header_bytes, path, limits);
    ModelWeights w;
    w.config = c;
    w.token_embedding = reader.next({c.vocab_size, d}, "token_embedding_table");
    std::vector<Tensor> rms_att = reader.next_per_layer(layers, d, "rms_att_weight");
    std::vector<Tensor> wq = reader.next_per_layer_matrices(layers, d, d, "wq", RowLayout::transposed);
    std::vector<Tensor> wk = reader.next_per_layer_matrices(layers, kv, d, "wk", RowLayout::transposed);
    std::vector<Tensor> wv = reader.next_per_layer_matrices(layers, kv, d, "wv", RowLayout::transposed);
    std::vector<Tensor> wo = reader.next_per_layer_matrices(layers, d, d, "wo", RowLayout::transposed);
    std::vector<Tensor> rms_ffn = reader.next_per_layer(layers, d, "rms_ffn_weight");
    std::vector<Tensor> w1 = reader.next_per_layer_matrices(layers, f, d, "w1", RowLayout::as_stored);
    std::vector<Tensor> w2 = reader.next_per_layer_matrices(layers, d, f, "w2", RowLayout::as_stored);
    std::vector<Tensor> w3 = reader.next_per_layer_matrices(layers, f, d, "w3", RowLayout::as_stored);
    w.final_norm.weight = reader.next({d}, "rms_final_weight");
    reader.skip(c.max_tokens * head);  // legacy freq_cis_real and freq_cis_imag, [seq_len, head/2] each
    if (!c.shared_classifier) w.classifier = reader.next({c.vocab_size, d}, "wcls");

    // Step 3: one block per layer, attention in LayerWeights' convention.
    std::vector<BlockWeights> blocks;
    for (int64_t l = 0; l < layers; ++l) {
        const size_t i = static_cast<size_t>(l);
        BlockWeights block;
        block.attention = llama_attention_weights(c, std::move(wq[i]), std::move(wk[i]), std::move(wv[i]),
                                                  std::move(wo[i]), fmt::format("{}: layer {}", path, l));
        block.attention_norm.weight = std::move(rms_att[i]), block.feed_forward_norm.weight = std::move(rms_ffn[i]);
        block.w_in = std::move(w1[i]), block.w_out = std::move(w2[i]), block.w_up = std::move(w3[i]);
        blocks.push_back(std::move(block));
    }
    w.blocks = std::make_shared<HeldBlocks>(std::move(blocks));
    return w;
}

}  // namespace attn_viz
