#include "input_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"
#include "json_input.hpp"
#include "json_tensor.hpp"

namespace attn_viz {

std::vector<std::string> index_labels(int64_t n) {
    std::vector<std::string> labels;
    for (int64_t i = 0; i < n; ++i) labels.push_back(fmt::to_string(i));
    return labels;
}

SequenceInput parse_sequence(const nlohmann::json& doc, int64_t d_model, const std::string& where,
                             const std::string& base_dir, const LoadLimits& limits) {
    if (!doc.is_object()) fail_input(where, "expected a JSON object with \"embeddings\"");
    if (!doc.contains("embeddings")) fail_input(where, "missing key \"embeddings\"");
    SequenceInput input;
    input.embeddings = read_json_tensor(doc["embeddings"], {-1, d_model}, "embeddings", {where, base_dir, limits});
    const int64_t T = input.embeddings.dim(0);
    if (T == 0) fail_input(where, "\"embeddings\" has no rows");
    if (doc.contains("tokens") && !doc["tokens"].is_null()) {
        const nlohmann::json& tokens = doc["tokens"];
        if (!tokens.is_array()) fail_input(where, "\"tokens\" must be an array of strings");
        for (size_t i = 0; i < tokens.size(); ++i) {
            if (!tokens[i].is_string()) fail_input(where, fmt::format("tokens[{}] is not a string", i));
            input.tokens.push_back(tokens[i].get<std::string>());
        }
        if (static_cast<int64_t>(input.tokens.size()) != T)
            fail_input(where, fmt::format("{} tokens for {} embedding rows", input.tokens.size(), T));
    } else {
        input.tokens = index_labels(T);
    }
    if (doc.contains("attention_mask") && !doc["attention_mask"].is_null()) {
        const nlohmann::json& mask = doc["attention_mask"];
        if (!mask.is_array() || static_cast<int64_t>(mask.size()) != T)
            fail_input(where, fmt::format("\"attention_mask\" must be an array of {} zeros and ones", T));
        for (size_t i = 0; i < mask.size(); ++i) {
            if (mask[i] != 0 && mask[i] != 1) fail_input(where, fmt::format("attention_mask[{}] is not 0 or 1", i));
            input.key_excluded.push_back(mask[i] == 0);
        }
    }
    return input;
}

SequenceInput read_input_file(const std::string& path, int64_t d_model, const LoadLimits& limits) {
    return parse_sequence(read_json_file(path, "input sequence", limits), d_model, path,
                          std::filesystem::path(path).parent_path().string(), limits);
}

}  // namespace attn_viz
