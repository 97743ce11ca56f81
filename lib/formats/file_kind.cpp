#include "file_kind.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

namespace attn_viz {
namespace {

int32_t int32_at(const unsigned char* bytes, size_t at) {
    int32_t value = 0;
    std::memcpy(&value, bytes + at, 4);
    return value;
}

bool is_npy(const unsigned char* bytes, size_t size) { return size >= 6 && std::memcmp(bytes, "\x93NUMPY", 6) == 0; }

bool is_safetensors(const unsigned char* bytes, size_t size) {
    if (size < 10) return false;
    uint64_t header_length = 0;
    std::memcpy(&header_length, bytes, 8);
    return header_length >= 2 && header_length <= size - 8 && bytes[8] == '{';
}

// max_token_length, then (float score, int32 length, length bytes) records ending exactly at the
// end of the file: what Llama2cTokenizer reads.
bool is_llama2c_tokenizer(const unsigned char* bytes, size_t size) {
    if (size < 12) return false;
    const int32_t max_length = int32_at(bytes, 0);
    if (max_length <= 0 || max_length > (1 << 16)) return false;
    size_t at = 4;
    while (at < size) {
        if (size - at < 8) return false;
        float score = 0;
        std::memcpy(&score, bytes + at, 4);
        const int32_t length = int32_at(bytes, at + 4);
        at += 8;
        if (!std::isfinite(score) || length < 0 || length > max_length || static_cast<size_t>(length) > size - at)
            return false;
        at += static_cast<size_t>(length);
    }
    return true;
}

// Seven int32 header fields (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len)
// of plausible sizes that divide as a Llama's do.
bool is_llama2c_checkpoint(const unsigned char* bytes, size_t size) {
    if (size < 28) return false;
    int32_t f[7];
    for (int i = 0; i < 7; ++i) f[i] = int32_at(bytes, 4 * static_cast<size_t>(i));
    const int64_t vocab = f[5] < 0 ? -int64_t{f[5]} : f[5];  // negative: the classifier is not shared; INT32_MIN too
    const bool sizes = f[0] > 0 && f[0] <= (1 << 15) && f[1] > 0 && f[1] <= (1 << 17) && f[2] > 0 &&
                       f[2] <= (1 << 10) && f[3] > 0 && f[4] > 0 && vocab > 0 && vocab <= (1 << 20) && f[6] > 0 &&
                       f[6] <= (1 << 20);
    return sizes && f[0] % f[3] == 0 && f[3] % f[4] == 0;
}

bool is_json(const unsigned char* bytes, size_t size) {
    for (size_t i = 0; i < size; ++i) {
        if (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\n' || bytes[i] == '\r') continue;
        return bytes[i] == '{' || bytes[i] == '[';
    }
    return false;
}

// What to add after "<path>: is X, not Y" for the mistakes people make.
std::string advice(FileKind found, FileKind expected) {
    if (found == FileKind::npy && expected == FileKind::json)
        return ": a layer is an attn-viz/weights@1 JSON naming one .npy file per matrix "
               "({\"format\": \"attn-viz/weights@1\", \"d_model\": D, \"num_heads\": H, \"W_Q\": {\"npy\": "
               "\"wq.npy\"}, ...}) "
               "or a .safetensors checkpoint";
    return "";
}

Remedy remedy(FileKind found, FileKind expected) {
    const bool llama2c_pair = (found == FileKind::llama2c_checkpoint && expected == FileKind::llama2c_tokenizer) ||
                              (found == FileKind::llama2c_tokenizer && expected == FileKind::llama2c_checkpoint);
    if (llama2c_pair) return Remedy::swap_model_files;
    if (found == FileKind::llama2c_checkpoint && expected == FileKind::json) return Remedy::run_whole_model;
    return Remedy::none;
}

}  // namespace

FileKind sniff_file_kind(const unsigned char* bytes, size_t size) {
    if (is_npy(bytes, size)) return FileKind::npy;
    if (is_safetensors(bytes, size)) return FileKind::safetensors;
    // Binary llama2.c files before JSON: a tokenizer whose max_token_length is 123 starts with '{'.
    if (is_llama2c_tokenizer(bytes, size)) return FileKind::llama2c_tokenizer;
    if (is_llama2c_checkpoint(bytes, size)) return FileKind::llama2c_checkpoint;
    if (is_json(bytes, size)) return FileKind::json;
    return FileKind::unknown;
}

std::string file_kind_description(FileKind kind) {
    switch (kind) {
        case FileKind::unknown:
            return "a file of unknown kind";
        case FileKind::npy:
            return "a NumPy array (.npy)";
        case FileKind::safetensors:
            return "a safetensors checkpoint";
        case FileKind::llama2c_checkpoint:
            return "a llama2.c checkpoint (a whole model)";
        case FileKind::llama2c_tokenizer:
            return "a llama2.c tokenizer";
        case FileKind::json:
            return "a JSON file";
    }
    return "";
}

void refuse_other_file_kind(const unsigned char* bytes, size_t size, const std::string& path, FileKind expected,
                            const std::string& expected_what) {
    const FileKind found = sniff_file_kind(bytes, size);
    // A '{' first is too weak a sign to name a file JSON when something else was expected.
    if (found == FileKind::unknown || found == FileKind::json || found == expected) return;
    throw Error(
        ErrorKind::bad_input,
        fmt::format("{}: is {}, not {}{}", path, file_kind_description(found), expected_what, advice(found, expected)),
        remedy(found, expected));
}

}  // namespace attn_viz
