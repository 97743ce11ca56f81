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

// The first of `keys` present in `config` as a positive number, for epsilons and bases.
std::optional<double> positive_number(const nlohmann::json& config, std::initializer_list<const char*> keys, const std::string& where) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_number() || !(it->get<double>() > 0.0))
            fail_input(where, std::string("\"") + key + "\" is " + json_excerpt(*it) + ", expected a positive number");
        return it->get<double>();
    }
    return std::nullopt;
}

// The first of `keys` present in `config` as a string ("" when none is).
std::string string_field(const nlohmann::json& config, std::initializer_list<const char*> keys, const std::string& where) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_string()) fail_input(where, std::string("\"") + key + "\" is " + json_excerpt(*it) + ", expected a string");
        return it->get<std::string>();
    }
    return "";
}

std::optional<bool> bool_field(const nlohmann::json& config, const char* key, const std::string& where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) fail_input(where, std::string("\"") + key + "\" is " + json_excerpt(*it) + ", expected true or false");
    return it->get<bool>();
}

void read_family_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.activation = string_field(config, {"hidden_act", "activation_function"}, where);
    result.rotary_fraction = positive_number(config, {"rotary_pct", "partial_rotary_factor"}, where);
    if (result.rotary_fraction && *result.rotary_fraction > 1.0)
        fail_input(where, "the rotary fraction is " + std::to_string(*result.rotary_fraction) + ", expected at most 1");
    result.parallel_residual = bool_field(config, "use_parallel_residual", where);
    result.type_vocab_size = positive_int(config, {"type_vocab_size"}, where);
    result.position_embedding_type = string_field(config, {"position_embedding_type"}, where);
    result.scale_attn_by_inverse_layer_idx = bool_field(config, "scale_attn_by_inverse_layer_idx", where);
    result.scale_attn_weights = bool_field(config, "scale_attn_weights", where);
}

// One parameter of rope_scaling, a positive number that the `type` of scaling requires.
double scaling_parameter(const nlohmann::json& scaling, const char* key, const std::string& type, const std::string& where) {
    const std::optional<double> value = positive_number(scaling, {key}, where + ": rope_scaling");
    if (!value) fail_input(where, "rope_scaling (" + type + ") has no \"" + key + "\"");
    return *value;
}

// rope_scaling: its type, and for the supported ones (rope_scaling_types()) their parameters,
// named as transformers' modeling_rope_utils names them.
void read_rope_scaling(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    const auto scaling = config.find("rope_scaling");
    if (scaling == config.end() || scaling->is_null()) return;
    if (!scaling->is_object()) fail_input(where, "\"rope_scaling\" is " + json_excerpt(*scaling) + ", expected an object");
    const std::string type = string_field(*scaling, {"rope_type", "type"}, where);
    if (type.empty()) fail_input(where, "rope_scaling has no \"rope_type\" (or \"type\")");
    if (type == "default") return;
    result.rope_scaling = type;
    RopeScaling& p = result.rope_scaling_parameters;
    if (type == "linear") {
        p.kind = RopeScaling::Kind::linear;
        p.factor = scaling_parameter(*scaling, "factor", type, where);
    } else if (type == "llama3") {
        p.kind = RopeScaling::Kind::llama3;
        p.factor = scaling_parameter(*scaling, "factor", type, where);
        p.low_freq_factor = scaling_parameter(*scaling, "low_freq_factor", type, where);
        p.high_freq_factor = scaling_parameter(*scaling, "high_freq_factor", type, where);
        p.original_max_positions = scaling_parameter(*scaling, "original_max_position_embeddings", type, where);
        if (!(p.high_freq_factor > p.low_freq_factor))
            fail_input(where, "rope_scaling's high_freq_factor (" + std::to_string(p.high_freq_factor) +
                                  ") must be above its low_freq_factor (" + std::to_string(p.low_freq_factor) + ")");
    }
}

void read_model_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    if (config.contains("model_type") && config["model_type"].is_string()) result.model_type = config["model_type"].get<std::string>();
    result.intermediate_size = positive_int(config, {"intermediate_size", "n_inner", "ffn_dim"}, where);
    result.vocab_size = positive_int(config, {"vocab_size"}, where);
    result.max_positions = positive_int(config, {"max_position_embeddings", "n_positions", "n_ctx"}, where);
    result.head_dim = positive_int(config, {"head_dim"}, where);
    result.norm_epsilon = positive_number(config, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"}, where);
    if (config.contains("tie_word_embeddings") && config["tie_word_embeddings"].is_boolean())
        result.tie_word_embeddings = config["tie_word_embeddings"].get<bool>();
    read_rope_scaling(config, where, result);
}

}  // namespace

const std::vector<std::string>& rope_scaling_types() {
    static const std::vector<std::string> types = {"linear", "llama3"};
    return types;
}

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
    read_model_fields(config, config_path, result);
    read_family_fields(config, config_path, result);
    return result;
}

int64_t required_value(const std::optional<int64_t>& value, const HfConfig& config, const char* key) {
    if (!value) fail_input(config.path, std::string("missing \"") + key + "\"");
    return *value;
}

HfConfig find_hf_config_beside(const std::string& checkpoint_path) {
    const std::filesystem::path config = std::filesystem::path(checkpoint_path).parent_path() / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) return {};
    return read_hf_config(config.string());
}

}  // namespace attn_viz
