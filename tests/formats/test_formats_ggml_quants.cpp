// dequantize_row against an independent numpy decoder written below from ggml-common.h's block
// layouts, on random blocks (random bytes, with random finite scales); dequantize_rows
// against dequantize_row.
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "ggml_quants.hpp"
#include "random_ggml_blocks.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// Decodes argv[2] (blocks of type argv[1]) to float32 in argv[3], vectorized over blocks.
const char* numpy_decoder = R"PY(
import sys
import numpy as np

kind, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
raw = np.fromfile(src, dtype=np.uint8)
sizes = {"F32": (1, 4), "F16": (1, 2), "BF16": (1, 2), "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22),
         "Q5_1": (32, 24), "Q8_0": (32, 34), "Q4_K": (256, 144), "Q5_K": (256, 176), "Q6_K": (256, 210), "Q8_K": (256, 292)}
n, size = sizes[kind]
b = raw.reshape(-1, size)

def f16(offset):  # one half per block, as a column
    return b[:, offset:offset + 2].copy().view("<f2").astype(np.float32)

def nibbles(qs):  # low nibbles are the first half of the values, high nibbles the second
    return np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int32)

def fifth_bits(word_bytes, count):  # bit j of a little-endian word is value j's extra bit
    word = word_bytes.copy().view("<u4").astype(np.int64)
    return ((word >> np.arange(count)) & 1).astype(np.int32)

def k_scales(s):  # 8 six-bit scales and mins of a Q4_K/Q5_K super-block from its 12 bytes
    s = s.astype(np.int32)
    sc = np.empty((s.shape[0], 8), np.int32)
    mn = np.empty((s.shape[0], 8), np.int32)
    sc[:, :4], mn[:, :4] = s[:, 0:4] & 63, s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc.astype(np.float32), mn.astype(np.float32)

if kind == "F32":
    out = raw.view("<f4")
elif kind == "F16":
    out = raw.view("<f2").astype(np.float32)
elif kind == "BF16":
    out = (raw.view("<u2").astype(np.uint32) << 16).view(np.float32)
elif kind == "Q4_0":
    out = (nibbles(b[:, 2:18]) - 8) * f16(0)
elif kind == "Q4_1":
    out = nibbles(b[:, 4:20]) * f16(0) + f16(2)
elif kind in ("Q5_0", "Q5_1"):
    start = 2 if kind == "Q5_0" else 4
    q = nibbles(b[:, start + 4:start + 20]) | (fifth_bits(b[:, start:start + 4], 32) << 4)
    out = (q - 16) * f16(0) if kind == "Q5_0" else q * f16(0) + f16(2)
elif kind == "Q8_0":
    out = b[:, 2:34].view(np.int8).astype(np.float32) * f16(0)
elif kind in ("Q4_K", "Q5_K"):
    sc, mn = k_scales(b[:, 4:16])
    qs = b[:, 16:144] if kind == "Q4_K" else b[:, 48:176]
    q = np.empty((b.shape[0], 256), np.int32)
    for j in range(8):  # sub-block j: the low (j even) or high (j odd) nibbles of 32 bytes
        part = qs[:, 32 * (j // 2):32 * (j // 2) + 32].astype(np.int32)
        q[:, 32 * j:32 * j + 32] = (part & 15) if j % 2 == 0 else (part >> 4)
        if kind == "Q5_K":
            q[:, 32 * j:32 * j + 32] |= ((b[:, 16:48].astype(np.int32) >> j) & 1) << 4
    d, dmin = f16(0), f16(2)
    out = np.repeat(d * sc, 32, axis=1) * q - np.repeat(dmin * mn, 32, axis=1)
elif kind == "Q6_K":
    ql, qh = b[:, 0:128].astype(np.int32), b[:, 128:192].astype(np.int32)
    sc = b[:, 192:208].view(np.int8).astype(np.float32)
    d = f16(208)
    out = np.empty((b.shape[0], 256), np.float32)
    for i in range(256):  # value i: half h, group g of 32 within it, position l
        h, g, l = i // 128, (i % 128) // 32, i % 32
        low = ql[:, 64 * h + l + (32 if g % 2 else 0)]
        low = (low & 15) if g < 2 else (low >> 4)
        high = (qh[:, 32 * h + l] >> (2 * g)) & 3
        out[:, i] = d[:, 0] * sc[:, 8 * h + l // 16 + 2 * g] * ((low | (high << 4)) - 32)
elif kind == "Q8_K":
    d = b[:, 0:4].copy().view("<f4")
    out = b[:, 4:260].view(np.int8).astype(np.float32) * d
np.asarray(out, dtype="<f4").reshape(-1).tofile(dst)
)PY";

// Every type dequantize_row decodes.
constexpr GgmlType decodable_types[] = {GgmlType::f32,  GgmlType::f16,  GgmlType::bf16, GgmlType::q4_0,
                                        GgmlType::q4_1, GgmlType::q5_0, GgmlType::q5_1, GgmlType::q8_0,
                                        GgmlType::q4_k, GgmlType::q5_k, GgmlType::q6_k, GgmlType::q8_k};

std::vector<float> read_floats(const std::string& path) {
    const std::string bytes = read_text(path);
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), values.size() * 4);
    return values;
}

}  // namespace

TEST_SUITE("formats") {

TEST_CASE("ggml block types decode as an independent numpy decoder of ggml-common.h's layouts does") {
    ScratchDir dir;
    write_text(dir / "decode.py", numpy_decoder);
    for (GgmlType type : decodable_types) {
        const GgmlTypeInfo& info = *ggml_type_info(static_cast<uint32_t>(type));
        CAPTURE(info.name);
        REQUIRE(info.decodable);
        for (int64_t blocks : {int64_t{1}, int64_t{7}}) {
            const std::string bytes = random_blocks(type, info, blocks);
            write_text(dir / "blocks.bin", bytes);
            const CommandResult r = run_command("/usr/bin/python3 " + (dir / "decode.py") + " " + info.name + " " +
                                                (dir / "blocks.bin") + " " + (dir / "expected.bin"));
            REQUIRE_MESSAGE(r.exit_code == 0, r.output);
            const std::vector<float> expected = read_floats(dir / "expected.bin");
            const int64_t n = blocks * info.block_elements;
            REQUIRE(static_cast<int64_t>(expected.size()) == n);
            std::vector<float> decoded(static_cast<size_t>(n));
            dequantize_row(static_cast<uint32_t>(type), reinterpret_cast<const unsigned char*>(bytes.data()),
                           decoded.data(), n);
            // Per block, within float rounding of the block's largest value (the order of a
            // multiply-add may differ); a wrong bit or layout is off by at least a scale step.
            for (int64_t i = 0; i < n; ++i) {
                const int64_t block = i / info.block_elements;
                float largest = 0;
                for (int64_t j = block * info.block_elements; j < (block + 1) * info.block_elements; ++j)
                    largest = std::max(largest, std::abs(expected[static_cast<size_t>(j)]));
                INFO("value " << i);
                REQUIRE(std::abs(decoded[static_cast<size_t>(i)] - expected[static_cast<size_t>(i)]) <=
                        1e-6f * largest);
            }
        }
    }
}

TEST_CASE("dequantize_rows gives dequantize_row's values, as stored or transposed, for every type and odd row counts") {
    for (GgmlType type : decodable_types) {
        const GgmlTypeInfo& info = *ggml_type_info(static_cast<uint32_t>(type));
        CAPTURE(info.name);
        // One row; fewer rows than a tile; a tile and a ragged one; many tiles (the parallel path).
        for (const auto& [rows, row_blocks] : {std::pair<int64_t, int64_t>{1, 1}, {7, 3}, {17, 1}, {37, 5}, {301, 2}}) {
            CAPTURE(rows);
            const int64_t cols = row_blocks * info.block_elements;
            const std::string bytes = random_blocks(type, info, rows * row_blocks);
            const auto* src = reinterpret_cast<const unsigned char*>(bytes.data());
            std::vector<float> rows_decoded(static_cast<size_t>(rows * cols));
            dequantize_row(static_cast<uint32_t>(type), src, rows_decoded.data(), rows * cols);
            std::vector<float> as_stored(static_cast<size_t>(rows * cols), -7.0f);
            REQUIRE(
                dequantize_rows(static_cast<uint32_t>(type), src, rows, cols, as_stored.data(), RowLayout::as_stored));
            REQUIRE(as_stored == rows_decoded);
            std::vector<float> transposed(static_cast<size_t>(rows * cols), -7.0f);
            REQUIRE(dequantize_rows(static_cast<uint32_t>(type), src, rows, cols, transposed.data(),
                                    RowLayout::transposed));
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t c = 0; c < cols; ++c)
                    REQUIRE(transposed[static_cast<size_t>(c * rows + r)] ==
                            rows_decoded[static_cast<size_t>(r * cols + c)]);
        }
    }
}

TEST_CASE("dequantize_rows reports a non-finite value in any row, in either layout") {
    const int64_t rows = 45, cols = 64;
    for (int64_t bad_row : {0, 16, 44}) {
        std::vector<float> values(static_cast<size_t>(rows * cols));
        for (float& v : values) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng());
        values[static_cast<size_t>(bad_row * cols + 5)] = std::numeric_limits<float>::infinity();
        const auto* src = reinterpret_cast<const unsigned char*>(values.data());
        std::vector<float> out(values.size());
        CHECK(
            !dequantize_rows(static_cast<uint32_t>(GgmlType::f32), src, rows, cols, out.data(), RowLayout::transposed));
        CHECK(std::isinf(out[static_cast<size_t>(5 * rows + bad_row)]));
        CHECK(
            !dequantize_rows(static_cast<uint32_t>(GgmlType::f32), src, rows, cols, out.data(), RowLayout::as_stored));
        CHECK(std::isinf(out[static_cast<size_t>(bad_row * cols + 5)]));
    }
}

TEST_CASE("ggml types: block sizes as ggml-common.h's static_asserts, unknown ids and undecodable types") {
    CHECK(ggml_type_info(8)->block_bytes == 34);
    CHECK(ggml_type_info(12)->block_bytes == 144);
    CHECK(ggml_type_info(13)->block_bytes == 176);
    CHECK(ggml_type_info(14)->block_bytes == 210);
    CHECK(ggml_type_info(15)->block_bytes == 292);
    CHECK(ggml_type_info(10)->block_bytes == 84);
    CHECK(ggml_type_info(11)->block_bytes == 110);
    CHECK(ggml_type_info(4) == nullptr);
    CHECK(ggml_type_info(1000) == nullptr);
    CHECK(!ggml_type_info(10)->decodable);
}

}  // TEST_SUITE("formats")
