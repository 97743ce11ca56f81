// Random ggml blocks for the decoders' tests: random bytes, with each block's scales random finite
// values (so that every value decodes to a finite float).
#pragma once

#include <cstring>
#include <random>
#include <string>

#include "ggml_quants.hpp"
#include "safetensors.hpp"  // float_to_f16, float_to_bf16
#include "support.hpp"

namespace test_support {

// Random blocks of `info`: random bytes, with each block's scales random finite values.
inline std::string random_blocks(attn_viz::GgmlType type, const attn_viz::GgmlTypeInfo& info, int64_t blocks) {
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    std::string bytes(static_cast<size_t>(blocks * info.block_bytes), '\0');
    for (char& c : bytes) c = static_cast<char>(byte(rng()));
    auto put_half = [&](size_t at, float v) {
        const uint16_t h = attn_viz::float_to_f16(v);
        std::memcpy(bytes.data() + at, &h, 2);
    };
    for (int64_t i = 0; i < blocks; ++i) {
        const size_t at = static_cast<size_t>(i * info.block_bytes);
        switch (type) {
            case attn_viz::GgmlType::f32: {
                const float v = value(rng());
                std::memcpy(bytes.data() + at, &v, 4);
                break;
            }
            case attn_viz::GgmlType::f16:
                put_half(at, value(rng()));
                break;
            case attn_viz::GgmlType::bf16: {
                const uint16_t h = attn_viz::float_to_bf16(value(rng()));
                std::memcpy(bytes.data() + at, &h, 2);
                break;
            }
            case attn_viz::GgmlType::q4_1:
            case attn_viz::GgmlType::q5_1:
            case attn_viz::GgmlType::q4_k:
            case attn_viz::GgmlType::q5_k:
                put_half(at, value(rng()));
                put_half(at + 2, value(rng()));
                break;
            case attn_viz::GgmlType::q6_k:
                put_half(at + 208, value(rng()));
                break;
            case attn_viz::GgmlType::q8_k: {
                const float d = value(rng());
                std::memcpy(bytes.data() + at, &d, 4);
                break;
            }
            default:
                put_half(at, value(rng()));
                break;  // Q4_0, Q5_0, Q8_0: the scale d first
        }
    }
    return bytes;
}

// `blocks` random blocks of the type with ggml id `type`.
inline std::string random_blocks(attn_viz::GgmlType type, int64_t blocks) {
    return random_blocks(type, *attn_viz::ggml_type_info(static_cast<uint32_t>(type)), blocks);
}

}  // namespace test_support
