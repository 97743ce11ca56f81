// Helpers shared by the reliability tests: loader limits and small hand-built files.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "load_limits.hpp"
#include "support.hpp"

namespace test_support {

// Loader limits with a memory budget of `bytes`.
inline attn_viz::LoadLimits limits_with_budget(uint64_t bytes) {
    attn_viz::LoadLimits limits;
    limits.memory_budget = bytes;
    return limits;
}

// Loader limits that let NaN and Inf through.
inline attn_viz::LoadLimits limits_allowing_nonfinite() {
    attn_viz::LoadLimits limits;
    limits.allow_nonfinite = true;
    return limits;
}

// A llama2.c version-0 checkpoint: header, then random float32 arrays of the sizes it declares.
inline std::string llama2c_checkpoint_bytes(int32_t dim, int32_t hidden, int32_t layers, int32_t heads,
                                            int32_t kv_heads, int32_t vocab, int32_t seq_len) {
    const int64_t head = dim / heads, kv = kv_heads * head;
    const int64_t floats = int64_t(vocab) * dim + layers * (2 * dim + 2 * dim * dim + 2 * kv * dim + 3 * dim * hidden) +
                           dim + seq_len * head;
    const int32_t header[7] = {dim, hidden, layers, heads, kv_heads, vocab, seq_len};
    std::string bytes(reinterpret_cast<const char*>(header), sizeof header);
    const attn_viz::Tensor values = random_tensor({floats});
    bytes.append(reinterpret_cast<const char*>(values.ptr()), size_t(floats) * 4);
    return bytes;
}

// A llama2.c tokenizer file: max_token_length, then (score, length, bytes) records.
inline std::string tokenizer_bytes(const std::vector<std::pair<std::string, float>>& pieces, int32_t max_length) {
    std::string bytes(reinterpret_cast<const char*>(&max_length), sizeof max_length);
    for (const auto& [piece, score] : pieces) {
        const auto length = static_cast<int32_t>(piece.size());
        bytes.append(reinterpret_cast<const char*>(&score), sizeof score);
        bytes.append(reinterpret_cast<const char*>(&length), sizeof length);
        bytes += piece;
    }
    return bytes;
}

// <unk>, BOS, EOS, the 256 byte tokens, then `extra`.
inline std::vector<std::pair<std::string, float>> vocabulary_with_bytes(
    const std::vector<std::pair<std::string, float>>& extra) {
    std::vector<std::pair<std::string, float>> pieces = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
    const char* hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) pieces.push_back({std::string("<0x") + hex[b / 16] + hex[b % 16] + ">", 0});
    pieces.insert(pieces.end(), extra.begin(), extra.end());
    return pieces;
}

// Overwrites float `index` (counted after the 28-byte header) of a checkpoint.
inline void set_checkpoint_float(std::string& bytes, int64_t index, float value) {
    std::memcpy(bytes.data() + 28 + index * 4, &value, 4);
}

// A small random llama2.c model in `dir`: tok.bin (263 tokens: <unk>, BOS, EOS, 256 bytes, " ", "a",
// "b", "ab") and `name` (2 layers of 2 heads, D = 16). Returns
// "model --checkpoint DIR/NAME --tokenizer DIR/tok.bin".
inline std::string write_small_llama2c_model(const ScratchDir& dir, const std::string& name = "m.bin") {
    write_text(dir / "tok.bin",
               tokenizer_bytes(vocabulary_with_bytes({{" ", -1}, {"a", -1}, {"b", -1}, {"ab", 3}}), 6));
    write_text(dir / name, llama2c_checkpoint_bytes(16, 32, 2, 2, 2, 263, 24));
    return "model --checkpoint " + (dir / name) + " --tokenizer " + (dir / "tok.bin");
}

// A llama2.c tokenizer of `vocab` pieces ("<unk>", "<s>", "</s>", then "a", "b", ...).
inline std::string llama2c_tokenizer_bytes(int vocab) {
    std::string bytes;
    const auto put = [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
    const int32_t max_length = 8;
    put(&max_length, 4);
    for (int v = 0; v < vocab; ++v) {
        const std::string piece = v == 0   ? "<unk>"
                                  : v == 1 ? "<s>"
                                  : v == 2 ? "</s>"
                                           : std::string(1, static_cast<char>('a' + v - 3));
        const float score = -static_cast<float>(v);
        const int32_t length = static_cast<int32_t>(piece.size());
        put(&score, 4), put(&length, 4), put(piece.data(), piece.size());
    }
    return bytes;
}

}  // namespace test_support
