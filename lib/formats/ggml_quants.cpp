// ggml block formats to float32, one block at a time, from the layouts of ggml-common.h.
#include "ggml_quants.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"
#include "finite.hpp"
#include "parallel_for.hpp"
#include "safetensors.hpp"  // f16_to_float, bf16_to_float
#include "transpose.hpp"

namespace attn_viz {
namespace {

constexpr int64_t qk = 32;     // values per block of the Q*_0 / Q*_1 types
constexpr int64_t qk_k = 256;  // values per super-block of the K types

float half_at(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16_to_float(h);
}

// The other types of ggml.h's enum (up to MXFP4, 39), which attn-viz reads only in a file's
// structure; nullptr for an id ggml never had or has removed (Q4_2, Q4_0_4_4, ...), which
// llama.cpp's GGUF reader refuses too. Block bytes as the static_asserts of ggml-common.h.
const GgmlTypeInfo* undecodable_entry(uint32_t type) {
    static const GgmlTypeInfo others[] = {
        {"IQ2_XXS", qk_k, 2 + qk_k / 4, false},                    // 16
        {"IQ2_XS", qk_k, 2 + qk_k / 4 + qk_k / 32, false},         // 17
        {"IQ3_XXS", qk_k, 2 + 3 * qk_k / 8, false},                // 18
        {"IQ1_S", qk_k, 2 + qk_k / 8 + qk_k / 16, false},          // 19
        {"IQ4_NL", qk, 2 + qk / 2, false},                         // 20
        {"IQ3_S", qk_k, 2 + 13 * (qk_k / 32) + qk_k / 64, false},  // 21
        {"IQ2_S", qk_k, 2 + qk_k / 4 + qk_k / 16, false},          // 22
        {"IQ4_XS", qk_k, 2 + 2 + qk_k / 2 + qk_k / 64, false},     // 23
        {"I8", 1, 1, false},
        {"I16", 1, 2, false},
        {"I32", 1, 4, false},
        {"I64", 1, 8, false},                                      // 24..27
        {"F64", 1, 8, false},                                      // 28
        {"IQ1_M", qk_k, qk_k / 8 + qk_k / 16 + qk_k / 32, false},  // 29
    };
    static const GgmlTypeInfo tq1_0{"TQ1_0", qk_k, 2 + 4 + 48, false}, tq2_0{"TQ2_0", qk_k, 2 + qk_k / 4, false};
    static const GgmlTypeInfo mxfp4{"MXFP4", qk, 1 + qk / 2, false};
    if (type >= 16 && type <= 29) return &others[type - 16];
    if (type == 34) return &tq1_0;
    if (type == 35) return &tq2_0;
    if (type == 39) return &mxfp4;
    return nullptr;
}

// The known types by id; block bytes as the static_asserts of ggml-common.h.
const GgmlTypeInfo* table_entry(uint32_t type) {
    static const GgmlTypeInfo f32{"F32", 1, 4, true}, f16{"F16", 1, 2, true}, bf16{"BF16", 1, 2, true};
    static const GgmlTypeInfo q4_0{"Q4_0", qk, 2 + qk / 2, true}, q4_1{"Q4_1", qk, 4 + qk / 2, true};
    static const GgmlTypeInfo q5_0{"Q5_0", qk, 2 + 4 + qk / 2, true}, q5_1{"Q5_1", qk, 4 + 4 + qk / 2, true};
    static const GgmlTypeInfo q8_0{"Q8_0", qk, 2 + qk, true}, q8_1{"Q8_1", qk, 4 + qk, false};
    static const GgmlTypeInfo q2_k{"Q2_K", qk_k, 4 + qk_k / 16 + qk_k / 4, false};
    static const GgmlTypeInfo q3_k{"Q3_K", qk_k, 2 + qk_k / 4 + qk_k / 8 + 12, false};
    static const GgmlTypeInfo q4_k{"Q4_K", qk_k, 4 + 12 + qk_k / 2, true};
    static const GgmlTypeInfo q5_k{"Q5_K", qk_k, 4 + 12 + qk_k / 2 + qk_k / 8, true};
    static const GgmlTypeInfo q6_k{"Q6_K", qk_k, 2 + qk_k / 16 + 3 * qk_k / 4, true};
    static const GgmlTypeInfo q8_k{"Q8_K", qk_k, 4 + qk_k + qk_k / 16 * 2, true};
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::f32:
            return &f32;
        case GgmlType::f16:
            return &f16;
        case GgmlType::bf16:
            return &bf16;
        case GgmlType::q4_0:
            return &q4_0;
        case GgmlType::q4_1:
            return &q4_1;
        case GgmlType::q5_0:
            return &q5_0;
        case GgmlType::q5_1:
            return &q5_1;
        case GgmlType::q8_0:
            return &q8_0;
        case GgmlType::q8_1:
            return &q8_1;
        case GgmlType::q2_k:
            return &q2_k;
        case GgmlType::q3_k:
            return &q3_k;
        case GgmlType::q4_k:
            return &q4_k;
        case GgmlType::q5_k:
            return &q5_k;
        case GgmlType::q6_k:
            return &q6_k;
        case GgmlType::q8_k:
            return &q8_k;
    }
    return undecodable_entry(type);
}

// Q4_0 / Q4_1: scale d (and min m), 16 bytes of nibbles: low nibbles are values 0..15, high 16..31.
void q4_block(const unsigned char* b, float* y, bool with_min) {
    const float d = half_at(b), m = with_min ? half_at(b + 2) : 0.0f;
    const unsigned char* qs = b + (with_min ? 4 : 2);
    const int offset = with_min ? 0 : 8;
    for (int j = 0; j < qk / 2; ++j) {
        y[j] = static_cast<float>((qs[j] & 0x0F) - offset) * d + m;
        y[j + qk / 2] = static_cast<float>((qs[j] >> 4) - offset) * d + m;
    }
}

// Q5_0 / Q5_1: as Q4 plus a 32-bit word whose bit j is the fifth bit of value j.
void q5_block(const unsigned char* b, float* y, bool with_min) {
    const float d = half_at(b), m = with_min ? half_at(b + 2) : 0.0f;
    const unsigned char* p = b + (with_min ? 4 : 2);
    uint32_t qh;
    std::memcpy(&qh, p, 4);
    const unsigned char* qs = p + 4;
    const int offset = with_min ? 0 : 16;
    for (int j = 0; j < qk / 2; ++j) {
        const int low = (qs[j] & 0x0F) | static_cast<int>(((qh >> j) & 1u) << 4);
        const int high = (qs[j] >> 4) | static_cast<int>(((qh >> (j + qk / 2)) & 1u) << 4);
        y[j] = static_cast<float>(low - offset) * d + m;
        y[j + qk / 2] = static_cast<float>(high - offset) * d + m;
    }
}

void q8_0_block(const unsigned char* b, float* y) {
    const float d = half_at(b);
    for (int j = 0; j < qk; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block's 12 scale bytes.
void k_scale_min(int j, const unsigned char* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Q4_K / Q5_K: d, dmin, 12 scale bytes, [Q5_K: 32 bytes of fifth bits], 128 bytes of nibbles.
// Each 64 values: the low nibbles of 32 bytes (sub-block 2i), then their high nibbles (2i + 1);
// value = d * scale * q - dmin * min.
void q45_k_block(const unsigned char* b, float* y, bool five_bits) {
    const float d = half_at(b), dmin = half_at(b + 2);
    const unsigned char* scales = b + 4;
    const unsigned char* qh = b + 16;
    const unsigned char* qs = b + 16 + (five_bits ? qk_k / 8 : 0);
    for (int chunk = 0; chunk < 4; ++chunk) {
        int sc0, m0, sc1, m1;
        k_scale_min(2 * chunk, scales, sc0, m0);
        k_scale_min(2 * chunk + 1, scales, sc1, m1);
        const float d0 = d * static_cast<float>(sc0), min0 = dmin * static_cast<float>(m0);
        const float d1 = d * static_cast<float>(sc1), min1 = dmin * static_cast<float>(m1);
        const unsigned char* q = qs + 32 * chunk;
        for (int l = 0; l < 32; ++l) {
            int low = q[l] & 0x0F, high = q[l] >> 4;
            if (five_bits) {
                low += ((qh[l] >> (2 * chunk)) & 1) << 4;
                high += ((qh[l] >> (2 * chunk + 1)) & 1) << 4;
            }
            y[64 * chunk + l] = d0 * static_cast<float>(low) - min0;
            y[64 * chunk + 32 + l] = d1 * static_cast<float>(high) - min1;
        }
    }
}

// Q6_K: 128 bytes of low nibbles, 64 bytes of high 2-bit pairs, 16 int8 scales, d.
// Each half of 128 values takes 64 low-nibble bytes, 32 high bytes and 8 scales.
void q6_k_block(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + qk_k / 2;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + qk_k / 2 + qk_k / 4);
    const float d = half_at(b + qk_k / 2 + qk_k / 4 + qk_k / 16);
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
            y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
            y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
            y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
        }
    }
}

// Q8_K: float32 d, 256 int8 values, 16 int16 group sums (not needed to decode).
void q8_k_block(const unsigned char* b, float* y) {
    float d;
    std::memcpy(&d, b, 4);
    for (int j = 0; j < qk_k; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
}

void decode_block(GgmlType type, const unsigned char* b, float* y) {
    switch (type) {
        case GgmlType::f32:
            std::memcpy(y, b, 4);
            break;
        case GgmlType::f16:
            *y = half_at(b);
            break;
        case GgmlType::bf16: {
            uint16_t h;
            std::memcpy(&h, b, 2);
            *y = bf16_to_float(h);
            break;
        }
        case GgmlType::q4_0:
            q4_block(b, y, false);
            break;
        case GgmlType::q4_1:
            q4_block(b, y, true);
            break;
        case GgmlType::q5_0:
            q5_block(b, y, false);
            break;
        case GgmlType::q5_1:
            q5_block(b, y, true);
            break;
        case GgmlType::q8_0:
            q8_0_block(b, y);
            break;
        case GgmlType::q4_k:
            q45_k_block(b, y, false);
            break;
        case GgmlType::q5_k:
            q45_k_block(b, y, true);
            break;
        case GgmlType::q6_k:
            q6_k_block(b, y);
            break;
        case GgmlType::q8_k:
            q8_k_block(b, y);
            break;
        default:
            throw Error(ErrorKind::internal,
                        fmt::format("dequantize_row: type {} cannot be decoded", static_cast<uint32_t>(type)));
    }
}

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t type) { return table_entry(type); }

void dequantize_row(uint32_t type, const unsigned char* src, float* dst, int64_t n) {
    const GgmlTypeInfo* info = ggml_type_info(type);
    if (!info || !info->decodable || n % info->block_elements != 0)
        throw Error(ErrorKind::internal,
                    fmt::format("dequantize_row: type {} with {} values cannot be decoded", type, n));
    if (type == static_cast<uint32_t>(GgmlType::f32)) {
        std::memcpy(dst, src, static_cast<size_t>(n) * 4);
        return;
    }
    for (int64_t i = 0; i < n / info->block_elements; ++i)
        decode_block(static_cast<GgmlType>(type), src + i * info->block_bytes, dst + i * info->block_elements);
}

namespace {

// Rows decoded together before they are transposed: 256 bytes (four cache lines) of each output
// row per visit to its page. Measured on 7B-wide Q4_K matrices (4096 and 11008 wide, one thread,
// 2026-11-26): 16 rows took 1.4x the CPU time of 64, 32 rows 1.2x, 128 rows as 64.
constexpr int64_t tile_rows = 64;

}  // namespace

bool dequantize_rows(uint32_t type, const unsigned char* src, int64_t rows, int64_t cols, float* dst,
                     RowLayout layout) {
    const GgmlTypeInfo* info = ggml_type_info(type);
    if (!info || !info->decodable || cols % info->block_elements != 0)
        throw Error(ErrorKind::internal,
                    fmt::format("dequantize_rows: type {} with rows of {} values cannot be decoded", type, cols));
    const int64_t row_bytes = cols / info->block_elements * info->block_bytes;
    const int64_t tiles = (rows + tile_rows - 1) / tile_rows;
    bool finite = true;
    const bool transpose = layout == RowLayout::transposed;
    // Each thread decodes a tile of rows (in place, or into its own buffer when transposing),
    // checks it and, when transposing, writes its transpose; dequantize_row cannot throw here (the
    // type and row length are checked above).
#pragma omp parallel reduction(&& : finite) if (rows * cols > parallel_min_values && tiles > 1)
    {
        std::vector<float> buffer(transpose ? static_cast<size_t>(std::min(rows, tile_rows) * cols) : 0);
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < tiles; ++t) {
            const int64_t r0 = t * tile_rows, n = std::min(tile_rows, rows - r0);
            float* tile = transpose ? buffer.data() : dst + r0 * cols;
            for (int64_t r = 0; r < n; ++r) dequantize_row(type, src + (r0 + r) * row_bytes, tile + r * cols, cols);
            finite = all_finite(tile, n * cols) && finite;
            if (transpose) transpose_into(tile, n, cols, cols, dst + r0, rows);
        }
    }
    return finite;
}

}  // namespace attn_viz
