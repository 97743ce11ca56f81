// A small llama GGUF whose block matrices are random blocks of every type attn-viz decodes (one
// type per matrix, in turn), for the tests of streamed blocks decoded into reused memory.
#pragma once

#include <string>
#include <vector>

#include "gguf_builder.hpp"
#include "random_ggml_blocks.hpp"
#include "support.hpp"

namespace test_support {

// D 256 (a whole Q*_K super-block per row), 2 heads of 128 sharing one KV head, FFN 512, two
// blocks, vocabulary 11, context 16; token embeddings, norms and classifier float32.
struct QuantizedLlama {
    static constexpr int64_t dim = 256, heads = 2, kv_heads = 1, ffn = 512, layers = 2, vocab = 11;
};

// The file's bytes.
inline std::string quantized_llama_gguf() {
    using attn_viz::GgmlType;
    using Q = QuantizedLlama;
    constexpr GgmlType types[] = {GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k, GgmlType::q8_0,
                                  GgmlType::q4_0, GgmlType::q4_1, GgmlType::q5_0, GgmlType::q5_1,
                                  GgmlType::f16,  GgmlType::bf16, GgmlType::q8_k, GgmlType::f32};
    GgufBuilder b;
    b.add_string("general.architecture", "llama");
    b.add_u32("llama.block_count", Q::layers);
    b.add_u32("llama.embedding_length", Q::dim);
    b.add_u32("llama.feed_forward_length", Q::ffn);
    b.add_u32("llama.attention.head_count", Q::heads);
    b.add_u32("llama.attention.head_count_kv", Q::kv_heads);
    b.add_u32("llama.context_length", 16);
    b.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    auto f32 = [&](const std::string& name, std::vector<int64_t> dims) {
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        b.add_f32_tensor(name, dims, random_tensor({n}).data);
    };
    size_t next_type = 0;
    // A matrix [rows, cols] (GGUF dims [cols, rows]) of the next type in turn.
    auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
        const GgmlType type = types[next_type++ % std::size(types)];
        const attn_viz::GgmlTypeInfo& info = *attn_viz::ggml_type_info(static_cast<uint32_t>(type));
        b.add_tensor(name, {cols, rows}, static_cast<uint32_t>(type),
                     random_blocks(type, info, rows * cols / info.block_elements));
    };
    const int64_t kv = Q::kv_heads * Q::dim / Q::heads;
    f32("token_embd.weight", {Q::dim, Q::vocab});
    for (int64_t l = 0; l < Q::layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        f32(p + "attn_norm.weight", {Q::dim});
        matrix(p + "attn_q.weight", Q::dim, Q::dim);
        matrix(p + "attn_k.weight", kv, Q::dim);
        matrix(p + "attn_v.weight", kv, Q::dim);
        matrix(p + "attn_output.weight", Q::dim, Q::dim);
        f32(p + "ffn_norm.weight", {Q::dim});
        matrix(p + "ffn_gate.weight", Q::ffn, Q::dim);
        matrix(p + "ffn_down.weight", Q::dim, Q::ffn);
        matrix(p + "ffn_up.weight", Q::ffn, Q::dim);
    }
    f32("output_norm.weight", {Q::dim});
    f32("output.weight", {Q::dim, Q::vocab});
    return b.bytes();
}

}  // namespace test_support
