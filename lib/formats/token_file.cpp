// Reading token labels and input embeddings.
#include "token_file.hpp"

#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "finite.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"
#include "npy.hpp"
#include "safetensors.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

constexpr size_t max_token_file_bytes = 64u << 20;
constexpr size_t max_tokens = 1u << 20;

std::vector<std::string> parse_json_tokens(std::string_view text, const std::string& path) {
    const nlohmann::json list = parse_json_text(text, path, "token list is not valid JSON");
    if (!list.is_array()) fail_input(path, "token file is not a JSON list");
    std::vector<std::string> tokens;
    for (size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json& item = list[i];
        if (item.is_string())
            tokens.push_back(item.get<std::string>());
        else if (item.is_number())
            tokens.push_back(item.dump());
        else
            fail_input(path, fmt::format("token {} is {}, not a string", i, json_excerpt(item)));
    }
    return tokens;
}

// One label per line; bytes that are not UTF-8 (a Latin-1 file, a cut multi-byte character)
// are kept visible as "\xNN" so that every output stays valid UTF-8.
std::vector<std::string> parse_token_lines(std::string_view text) {
    std::vector<std::string> tokens;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        tokens.push_back(escape_invalid_utf8(line));
        start = end + 1;
    }
    return tokens;
}

}  // namespace

std::vector<std::string> read_tokens(const std::string& path) {
    MappedFile file(path, "token list");
    if (file.size() > max_token_file_bytes) fail_input(path, "token file is larger than 64 MB");
    const std::string_view text = file.text();
    const size_t first = text.find_first_not_of(" \t\r\n");
    std::vector<std::string> tokens =
        first != std::string_view::npos && text[first] == '[' ? parse_json_tokens(text, path) : parse_token_lines(text);
    if (tokens.empty()) fail_input(path, "token file holds no tokens");
    if (tokens.size() > max_tokens) fail_input(path, "token file holds more than 2^20 tokens");
    return tokens;
}

std::vector<int> parse_token_ids(const std::string& text, const std::string& where) {
    std::vector<int> ids;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == ',' || text[i] == ' ') {
            ++i;
            continue;
        }
        int64_t value = 0;
        const size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9' && value <= (int64_t{1} << 31))
            value = value * 10 + (text[i++] - '0');
        if (i == start || value > std::numeric_limits<int>::max() ||
            (i < text.size() && text[i] != ',' && text[i] != ' '))
            throw Error(ErrorKind::usage,
                        fmt::format("{}: '{}' is not a list of token ids like 1,403,407", where, text));
        ids.push_back(static_cast<int>(value));
    }
    if (ids.empty()) throw Error(ErrorKind::usage, fmt::format("{}: no token ids given", where));
    return ids;
}

Tensor read_embeddings(const std::string& path, const std::string& tensor_name, const LoadLimits& limits) {
    Tensor x;
    const bool is_npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (is_npy) {
        if (!tensor_name.empty())
            fail_input(path, "an .npy file holds one array; a tensor name applies to safetensors only");
        x = read_npy(path, limits);
        require_finite(x, "embeddings", path, limits);
    } else {
        const SafetensorsFile file(path, limits);
        std::string name = tensor_name;
        if (name.empty()) {
            const std::vector<std::string> names = file.names();
            if (names.size() != 1)
                fail_input(path, fmt::format("holds {} tensors: name the embeddings tensor", names.size()));
            name = names.front();
        }
        x = file.load(name);
    }
    if (x.rank() != 2 || x.dim(0) == 0 || x.dim(1) == 0)
        fail_input(path, fmt::format("embeddings have shape {}, expected [T, D] with T, D > 0", shape_string(x.shape)));
    return x;
}

}  // namespace attn_viz
