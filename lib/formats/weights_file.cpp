#include "weights_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"
#include "file_kind.hpp"
#include "file_write.hpp"
#include "json_input.hpp"
#include "json_tensor.hpp"
#include "mapped_file.hpp"

namespace attn_viz {
namespace {

constexpr const char* weights_format = "attn-viz/weights@1";

int64_t positive_integer(const nlohmann::json& doc, const char* key, const std::string& where) {
    if (!doc.contains(key)) fail_input(where, fmt::format("missing key \"{}\"", key));
    const nlohmann::json& v = doc[key];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (int64_t{1} << 20))
        fail_input(where, fmt::format("\"{}\" must be a positive integer (at most 2^20)", key));
    return v.get<int64_t>();
}

nlohmann::json tensor_json(const Tensor& t) {
    if (t.rank() == 1) return nlohmann::json(t.data);
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t r = 0; r < t.dim(0); ++r)
        rows.push_back(std::vector<float>(t.data.begin() + r * t.dim(1), t.data.begin() + (r + 1) * t.dim(1)));
    return rows;
}

}  // namespace

LayerWeights parse_weights(const nlohmann::json& doc, const std::string& path, const std::string& base_dir,
                           const LoadLimits& limits) {
    if (!doc.is_object()) fail_input(path, "expected a JSON object");
    if (!doc.contains("format"))
        fail_input(path, fmt::format("missing key \"format\" (expected \"{}\")", weights_format));
    if (doc["format"] != weights_format)
        fail_input(path,
                   fmt::format("unsupported format {} (expected \"{}\")", json_excerpt(doc["format"]), weights_format));

    LayerWeights w;
    w.d_model = positive_integer(doc, "d_model", path);
    w.num_heads = positive_integer(doc, "num_heads", path);
    if (w.d_model % w.num_heads != 0)
        fail_input(path, fmt::format("d_model {} is not divisible by num_heads {}", w.d_model, w.num_heads));
    w.num_kv_heads = w.num_heads;
    w.d_head = w.d_model / w.num_heads;
    if (doc.contains("causal")) {
        if (!doc["causal"].is_boolean()) fail_input(path, "\"causal\" must be true or false");
        w.causal = doc["causal"].get<bool>();
    }

    const JsonTensorSource source{path, base_dir, limits};
    const int64_t D = w.d_model;
    auto matrix = [&](const char* key) {
        if (!doc.contains(key)) fail_input(path, fmt::format("missing key \"{}\"", key));
        return read_json_tensor(doc[key], {D, D}, key, source);
    };
    auto bias = [&](const char* key) {
        return doc.contains(key) && !doc[key].is_null() ? read_json_tensor(doc[key], {D}, key, source) : Tensor();
    };
    w.w_q = matrix("W_Q"), w.w_k = matrix("W_K"), w.w_v = matrix("W_V"), w.w_o = matrix("W_O");
    w.b_q = bias("b_Q"), w.b_k = bias("b_K"), w.b_v = bias("b_V"), w.b_o = bias("b_O");
    validate_layer(w, path);
    return w;
}

LayerWeights read_weights_file(const std::string& path, const LoadLimits& limits) {
    {
        const MappedFile file(path, "weights");
        refuse_other_file_kind(file.data(), file.size(), path, FileKind::json,
                               "layer weights (an attn-viz/weights@1 JSON)");
    }
    return parse_weights(read_json_file(path, "weights", limits), path,
                         std::filesystem::path(path).parent_path().string(), limits);
}

void write_weights_file(const std::string& path, const LayerWeights& w) {
    nlohmann::json doc = {
        {"format", weights_format}, {"d_model", w.d_model}, {"num_heads", w.num_heads}, {"causal", w.causal}};
    doc["W_Q"] = tensor_json(w.w_q), doc["W_K"] = tensor_json(w.w_k);
    doc["W_V"] = tensor_json(w.w_v), doc["W_O"] = tensor_json(w.w_o);
    const std::pair<const char*, const Tensor*> biases[] = {
        {"b_Q", &w.b_q}, {"b_K", &w.b_k}, {"b_V", &w.b_v}, {"b_O", &w.b_o}};
    for (const auto& [key, t] : biases)
        if (!t->empty()) doc[key] = tensor_json(*t);
    write_file_atomically(path, doc.dump());
}

}  // namespace attn_viz
