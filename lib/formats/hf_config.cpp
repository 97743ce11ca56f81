// Reading model hyper-parameters from a Hugging Face config.json.
#include "hf_config.hpp"

#include <filesystem>
#include <initializer_list>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"

namespace attn_viz {
namespace {

constexpr size_t max_config_bytes = 16u << 20;

// The first of `keys` present in `config`, as a positive integer.
std::optional<int64_t> positive_int(const nlohmann::json& config, std::initializer_list<const char*> keys,
                                    const std::string& where) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > (int64_t{1} << 24))
            fail_input(where, std::string("\"") + key + "\" is " + json_excerpt(*it) + ", expected a positive integer");
        return it->get<int64_t>();
    }
    return std::nullopt;
}

}  // namespace

HfConfig read_hf_config(const std::string& config_path) {
    MappedFile file(config_path, "model config");
    if (file.size() > max_config_bytes) fail_input(config_path, "config.json is larger than 16 MB");
    const nlohmann::json config = parse_json_text(file.text(), config_path, "not valid JSON");
    if (!config.is_object()) fail_input(config_path, "not a JSON object");

    HfConfig result;
    result.path = config_path;
    result.num_heads = positive_int(config, {"num_attention_heads", "n_head", "num_heads", "encoder_attention_heads"}, config_path);
    result.num_kv_heads = positive_int(config, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, config_path);
    auto multi_query = config.find("multi_query");
    if (!result.num_kv_heads && multi_query != config.end() && multi_query->is_boolean() && multi_query->get<bool>())
        result.num_kv_heads = 1;
    result.d_model = positive_int(config, {"hidden_size", "n_embd", "d_model"}, config_path);
    result.num_layers = positive_int(config, {"num_hidden_layers", "n_layer", "num_layers"}, config_path);
    for (const char* key : {"rope_theta", "rotary_emb_base"}) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_number() || !(it->get<double>() > 1.0))
            fail_input(config_path, std::string("\"") + key + "\" is " + json_excerpt(*it) + ", expected a number above 1");
        result.rope_base = it->get<double>();
        break;
    }
    return result;
}

HfConfig find_hf_config_beside(const std::string& checkpoint_path) {
    const std::filesystem::path config = std::filesystem::path(checkpoint_path).parent_path() / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) return {};
    return read_hf_config(config.string());
}

}  // namespace attn_viz
