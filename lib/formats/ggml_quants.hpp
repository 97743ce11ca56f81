// ggml's tensor element types (the `type` of a GGUF tensor): block sizes as in ggml-common.h, and
// conversion of the float and quantized block formats to float32.
#pragma once

#include <cstdint>

#include "tensor.hpp"

namespace attn_viz {

// The ggml type ids attn-viz names (ggml.h's enum ggml_type). A GGUF file may hold others.
enum class GgmlType : uint32_t {
    f32 = 0,
    f16 = 1,
    q4_0 = 2,
    q4_1 = 3,
    q5_0 = 6,
    q5_1 = 7,
    q8_0 = 8,
    q8_1 = 9,
    q2_k = 10,
    q3_k = 11,
    q4_k = 12,
    q5_k = 13,
    q6_k = 14,
    q8_k = 15,
    bf16 = 30,
};

struct GgmlTypeInfo {
    const char* name;        // "Q4_K"
    int64_t block_elements;  // values per block (1 for plain types)
    int64_t block_bytes;     // bytes per block
    bool decodable;          // dequantize_row() converts it
};

// The type with ggml id `type`, or nullptr when attn-viz does not know its block layout.
const GgmlTypeInfo* ggml_type_info(uint32_t type);

// src: n / block_elements consecutive blocks of `type` (which must be decodable, and n a multiple
// of its block_elements) -> dst: n floats. The block layouts and formulas are ggml's
// (ggml-common.h, dequantize_row_* in ggml-quants.c); docs/formats.md lists them.
void dequantize_row(uint32_t type, const unsigned char* src, float* dst, int64_t n);

// src: `rows` rows of `cols` values of `type` each (decodable, cols a multiple of its
// block_elements) -> dst: the values dequantize_row gives, [rows, cols] as stored, or their
// transpose [cols, rows], dst[c * rows + r] = value (r, c). Decoded in tiles of rows, each checked
// (and transposed) while it is in cache, in parallel over OpenMP's threads. Returns whether every
// value is finite.
bool dequantize_rows(uint32_t type, const unsigned char* src, int64_t rows, int64_t cols, float* dst, RowLayout layout);

}  // namespace attn_viz
