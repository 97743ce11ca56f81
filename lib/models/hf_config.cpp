// Reading model hyper-parameters from a Hugging Face config.json.
#include "hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family_table.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

constexpr size_t max_config_bytes = 16u << 20;

// The first of `keys` present in `config`, as an integer in [minimum, 2^24] (minimum 1: "a
// positive integer", 0: "a non-negative integer").
std::optional<int64_t> positive_int(const nlohmann::json& config, std::initializer_list<const char*> keys,
                                    const std::string& where, int64_t minimum = 1) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_number_integer() || it->get<int64_t>() < minimum || it->get<int64_t>() > (int64_t{1} << 24))
            fail_input(where, fmt::format("\"{}\" is {}, expected a {} integer", key, json_excerpt(*it),
                                          minimum > 0 ? "positive" : "non-negative"));
        return it->get<int64_t>();
    }
    return std::nullopt;
}

// The first of `keys` present in `config` as a number above `floor` (0: "a positive number"), for
// epsilons and bases.
std::optional<double> positive_number(const nlohmann::json& config, std::initializer_list<const char*> keys,
                                      const std::string& where, double floor = 0.0) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_number() || !(it->get<double>() > floor) || !std::isfinite(it->get<double>()))
            fail_input(where,
                       fmt::format("\"{}\" is {}, expected a {}", key, json_excerpt(*it),
                                   floor == 0.0 ? std::string("positive number")
                                                : fmt::format("number above {}", json_excerpt(nlohmann::json(floor)))));
        return it->get<double>();
    }
    return std::nullopt;
}

// The first of `keys` present in `config` as a string ("" when none is).
std::string string_field(const nlohmann::json& config, std::initializer_list<const char*> keys,
                         const std::string& where) {
    for (const char* key : keys) {
        auto it = config.find(key);
        if (it == config.end() || it->is_null()) continue;
        if (!it->is_string()) fail_input(where, fmt::format("\"{}\" is {}, expected a string", key, json_excerpt(*it)));
        return it->get<std::string>();
    }
    return "";
}

std::optional<bool> bool_field(const nlohmann::json& config, const char* key, const std::string& where) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean())
        fail_input(where, fmt::format("\"{}\" is {}, expected true or false", key, json_excerpt(*it)));
    return it->get<bool>();
}

void read_family_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.activation = string_field(config, {"hidden_act", "activation_function"}, where);
    if (result.rotary_fraction && *result.rotary_fraction > 1.0)
        fail_input(where, fmt::format("the rotary fraction is {:f}, expected at most 1", *result.rotary_fraction));
    result.parallel_residual = bool_field(config, "use_parallel_residual", where);
    result.type_vocab_size = positive_int(config, {"type_vocab_size"}, where);
    result.position_embedding_type = string_field(config, {"position_embedding_type"}, where);
    result.scale_attn_by_inverse_layer_idx = bool_field(config, "scale_attn_by_inverse_layer_idx", where);
    result.scale_attn_weights = bool_field(config, "scale_attn_weights", where);
}

// One parameter of rope_scaling, a positive number that the `type` of scaling requires.
double scaling_parameter(const nlohmann::json& scaling, const char* key, const std::string& type,
                         const std::string& where) {
    const std::optional<double> value = positive_number(scaling, {key}, fmt::format("{}: rope_scaling", where));
    if (!value) fail_input(where, fmt::format("rope_scaling ({}) has no \"{}\"", type, key));
    return *value;
}

// rope_scaling (transformers v4) or rope_parameters (v5, `key`): its type, and for the supported
// ones (rope_scaling_types()) their parameters, named as transformers' modeling_rope_utils names them.
void read_rope_scaling(const nlohmann::json& scaling, const char* key, const std::string& where, HfConfig& result) {
    const std::string type = string_field(scaling, {"rope_type", "type"}, where);
    if (type.empty()) fail_input(where, fmt::format("{} has no \"rope_type\" (or \"type\")", key));
    if (type == "default") return;
    result.rope_scaling = type;
    RopeScaling& p = result.rope_scaling_parameters;
    if (type == "linear") {
        p.kind = RopeScaling::Kind::linear;
        p.factor = scaling_parameter(scaling, "factor", type, where);
    } else if (type == "llama3") {
        p.kind = RopeScaling::Kind::llama3;
        p.factor = scaling_parameter(scaling, "factor", type, where);
        p.low_freq_factor = scaling_parameter(scaling, "low_freq_factor", type, where);
        p.high_freq_factor = scaling_parameter(scaling, "high_freq_factor", type, where);
        p.original_max_positions = scaling_parameter(scaling, "original_max_position_embeddings", type, where);
        if (!(p.high_freq_factor > p.low_freq_factor))
            fail_input(where,
                       fmt::format("rope_scaling's high_freq_factor ({:f}) must be above its low_freq_factor ({:f})",
                                   p.high_freq_factor, p.low_freq_factor));
    }
}

// The RoPE base: rope_theta or rotary_emb_base, a number above 1.
std::optional<double> rope_base(const nlohmann::json& config, const std::string& where) {
    return positive_number(config, {"rope_theta", "rotary_emb_base"}, where, 1.0);
}

// transformers v5's rope_parameters per layer type, as its Gemma 3 config writes them:
// {"full_attention": {...}, "sliding_attention": {...}}. The full layers' entry is read as the
// model's RoPE (by the caller); the sliding layers' must be unscaled, its rope_theta their base
// (v4's rope_local_base_freq). Marks the config so that families without local bases refuse it.
void read_rope_per_layer_type(const nlohmann::json& parameters, const std::string& where, HfConfig& result) {
    for (const auto& [name, value] : parameters.items())
        if ((name != "full_attention" && name != "sliding_attention") || !value.is_object())
            fail_input(where, fmt::format("rope_parameters per layer type hold \"{}\": {} (supported: "
                                          "\"full_attention\" and \"sliding_attention\", each an object)",
                                          escape_invalid_utf8(name), json_excerpt(value)));
    if (!parameters.contains("full_attention") || !parameters.contains("sliding_attention"))
        fail_input(where, "rope_parameters per layer type need both \"full_attention\" and \"sliding_attention\"");
    const nlohmann::json& local = parameters["sliding_attention"];
    const std::string type = string_field(local, {"rope_type", "type"}, where);
    if (type != "default")
        fail_input(where, fmt::format("rope_parameters' sliding_attention has rope_type {} (supported: \"default\": "
                                      "attn-viz's sliding layers are unscaled)",
                                      json_excerpt(nlohmann::json(type))));
    result.rope_local_base_freq = rope_base(local, fmt::format("{}: rope_parameters' sliding_attention", where));
    result.rope_per_layer_type = true;
}

// RoPE: transformers v4's top-level rope_theta | rotary_emb_base, rope_scaling and rotary_pct |
// partial_rotary_factor, or v5's rope_parameters holding them all; both only when they agree.
void read_rope(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.rope_base = rope_base(config, where);
    result.rotary_fraction = positive_number(config, {"rotary_pct", "partial_rotary_factor"}, where);
    const auto scaling = config.find("rope_scaling");
    const bool has_scaling = scaling != config.end() && !scaling->is_null();
    if (has_scaling && !scaling->is_object())
        fail_input(where, fmt::format("\"rope_scaling\" is {}, expected an object", json_excerpt(*scaling)));
    const auto parameters = config.find("rope_parameters");
    if (parameters == config.end() || parameters->is_null()) {
        if (has_scaling) read_rope_scaling(*scaling, "rope_scaling", where, result);
        return;
    }
    if (!parameters->is_object())
        fail_input(where, fmt::format("\"rope_parameters\" is {}, expected an object", json_excerpt(*parameters)));
    if (has_scaling) fail_input(where, "both rope_scaling and rope_parameters are set; a config has one of them");
    const nlohmann::json* global = &*parameters;
    if (std::any_of(parameters->begin(), parameters->end(),
                    [](const nlohmann::json& value) { return value.is_object(); })) {
        read_rope_per_layer_type(*parameters, where, result);
        global = &(*parameters)["full_attention"];
    }
    read_rope_scaling(*global, "rope_parameters", where, result);
    const std::optional<double> theta = rope_base(*global, fmt::format("{}: rope_parameters", where));
    if (theta && result.rope_base && *theta != *result.rope_base)
        fail_input(where,
                   fmt::format("rope_parameters' rope_theta {} disagrees with rope_theta {} beside it",
                               json_excerpt(nlohmann::json(*theta)), json_excerpt(nlohmann::json(*result.rope_base))));
    if (theta) result.rope_base = theta;
    const std::optional<double> fraction =
        positive_number(*global, {"partial_rotary_factor"}, fmt::format("{}: rope_parameters", where));
    if (fraction && result.rotary_fraction && *fraction != *result.rotary_fraction)
        fail_input(where, "rope_parameters' partial_rotary_factor disagrees with the one beside it");
    if (fraction) result.rotary_fraction = fraction;
}

// Whether `kind` is a GPT-Neo layer kind.
bool is_attention_kind(const nlohmann::json& kind) { return kind == "global" || kind == "local"; }

// GPT-Neo's layer kinds: attention_layers, which transformers' GPTNeoConfig keeps over what it
// expands from attention_types ([kinds, repeats] pairs: the kinds, repeats times over).
std::vector<std::string> read_attention_layers(const nlohmann::json& config, const std::string& where) {
    std::vector<std::string> layers;
    if (const auto given = config.find("attention_layers"); given != config.end() && !given->is_null()) {
        if (!given->is_array() || !std::all_of(given->begin(), given->end(), is_attention_kind))
            fail_input(where, fmt::format("\"attention_layers\" is {}, expected a list of \"global\" and \"local\"",
                                          json_excerpt(*given)));
        for (const nlohmann::json& kind : *given) layers.push_back(kind.get<std::string>());
        return layers;
    }
    static const nlohmann::json gpt_neo_default = nlohmann::json::parse(R"([[["global", "local"], 12]])");
    const auto types = config.find("attention_types");
    const nlohmann::json& pairs = types == config.end() || types->is_null() ? gpt_neo_default : *types;
    const auto bad = [&] {
        fail_input(where, fmt::format("\"attention_types\" is {}, expected [[kinds, repeats], ...] with kinds "
                                      "\"global\" or \"local\" and repeats a positive integer",
                                      json_excerpt(pairs)));
    };
    if (!pairs.is_array()) bad();
    int64_t count = 0;  // checked before anything is allocated
    for (const nlohmann::json& pair : pairs) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_array() || !pair[1].is_number_integer()) bad();
        const int64_t repeats = pair[1].get<int64_t>();
        if (repeats < 1 || repeats > (int64_t{1} << 24) || pair[0].empty() ||
            !std::all_of(pair[0].begin(), pair[0].end(), is_attention_kind))
            bad();
        count += repeats * static_cast<int64_t>(pair[0].size());
        if (count > (int64_t{1} << 24)) bad();
    }
    for (const nlohmann::json& pair : pairs)
        for (int64_t r = 0; r < pair[1].get<int64_t>(); ++r)
            for (const nlohmann::json& kind : pair[0]) layers.push_back(kind.get<std::string>());
    return layers;
}

// Sliding windows, biases and masks, each read by the families that have it.
void read_option_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.sliding_window = positive_int(config, {"sliding_window"}, where);
    if (config.contains("sliding_window") && config["sliding_window"].is_null()) result.sliding_window = 0;
    result.use_sliding_window = bool_field(config, "use_sliding_window", where);
    result.max_window_layers = positive_int(config, {"max_window_layers"}, where, 0);
    const auto types = config.find("layer_types");
    if (types != config.end() && !types->is_null()) {
        if (!types->is_array())
            fail_input(where, fmt::format("\"layer_types\" is {}, expected a list", json_excerpt(*types)));
        for (const nlohmann::json& type : *types) {
            if (!type.is_string() || (type != "full_attention" && type != "sliding_attention"))
                fail_input(where, fmt::format("layer_types holds {} (supported: \"full_attention\", "
                                              "\"sliding_attention\")",
                                              json_excerpt(type)));
            result.layer_types.push_back(type.get<std::string>());
        }
    }
    if (const auto flags = config.find("no_rope_layers"); flags != config.end() && !flags->is_null()) {
        if (!flags->is_array())
            fail_input(where, fmt::format("\"no_rope_layers\" is {}, expected a list", json_excerpt(*flags)));
        for (const nlohmann::json& flag : *flags) {
            if (flag != 0 && flag != 1)
                fail_input(where, fmt::format("no_rope_layers holds {} (1: the layer uses RoPE, 0: it does not)",
                                              json_excerpt(flag)));
            result.no_rope_layers.push_back(flag.get<int>());
        }
    }
    result.no_rope_layer_interval = positive_int(config, {"no_rope_layer_interval"}, where);
    if (result.model_type == "gpt_neo") result.attention_layers = read_attention_layers(config, where);
    result.window_size = positive_int(config, {"window_size"}, where);
    result.attention_bias = bool_field(config, "attention_bias", where);
    result.mlp_bias = bool_field(config, "mlp_bias", where);
    result.use_bias = bool_field(config, "use_bias", where);
    result.use_qkv_bias = bool_field(config, "use_qkv_bias", where);
    result.enable_bias = bool_field(config, "enable_bias", where);
    result.do_layer_norm_before = bool_field(config, "do_layer_norm_before", where);
    result.remove_final_layer_norm = bool_field(config, "_remove_final_layer_norm", where);
    result.word_embed_proj_dim = positive_int(config, {"word_embed_proj_dim"}, where);
    result.layer_norm_elementwise_affine = bool_field(config, "layer_norm_elementwise_affine", where);
    result.is_decoder = bool_field(config, "is_decoder", where);
    result.embedding_multiplier = positive_number(config, {"embedding_multiplier"}, where);
    result.attention_multiplier = positive_number(config, {"attention_multiplier"}, where);
    result.residual_multiplier = positive_number(config, {"residual_multiplier"}, where);
    result.logits_scaling = positive_number(config, {"logits_scaling"}, where);
    // Keys that change the forward pass: refused unless the reading family implements them
    // (refuse_unimplemented; Gemma 2/3 implement the first three, Granite its four multipliers).
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "use_qk_norm",
                            "qk_layernorm", "clip_qkv", "logits_scaling", "attention_multiplier",
                            "embedding_multiplier", "residual_multiplier", "use_bidirectional_attention"}) {
        auto it = config.find(key);
        if (it != config.end() && !it->is_null() && *it != false)
            result.unimplemented.push_back(fmt::format("{} = {}", key, json_excerpt(*it)));
    }
}

// `key` as a positive number, 0 when config.json sets it to null.
std::optional<double> number_or_null(const nlohmann::json& config, const char* key, const std::string& where) {
    const auto it = config.find(key);
    if (it != config.end() && it->is_null()) return 0.0;
    return positive_number(config, {key}, where);
}

void read_gemma_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.hidden_activation = string_field(config, {"hidden_activation"}, where);
    result.attn_logit_softcapping = number_or_null(config, "attn_logit_softcapping", where);
    result.final_logit_softcapping = number_or_null(config, "final_logit_softcapping", where);
    result.query_pre_attn_scalar = positive_number(config, {"query_pre_attn_scalar"}, where);
    result.logit_scale = number_or_null(config, "logit_scale", where);
    const std::optional<double> local_base = positive_number(config, {"rope_local_base_freq"}, where, 1.0);
    if (local_base && result.rope_local_base_freq && *local_base != *result.rope_local_base_freq)
        fail_input(where, fmt::format("rope_local_base_freq {} disagrees with rope_parameters' sliding_attention "
                                      "rope_theta {}",
                                      json_excerpt(nlohmann::json(*local_base)),
                                      json_excerpt(nlohmann::json(*result.rope_local_base_freq))));
    if (local_base) result.rope_local_base_freq = local_base;
    result.sliding_window_pattern = positive_int(config, {"sliding_window_pattern", "_sliding_window_pattern"}, where);
}

void read_seq2seq_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    result.decoder_layers = positive_int(config, {"decoder_layers", "num_decoder_layers"}, where);
    result.encoder_layers = positive_int(config, {"encoder_layers"}, where);
    result.decoder_heads = positive_int(config, {"decoder_attention_heads"}, where);
    result.encoder_ffn_dim = positive_int(config, {"encoder_ffn_dim", "d_ff"}, where);
    result.decoder_ffn_dim = positive_int(config, {"decoder_ffn_dim", "d_ff"}, where);
    result.key_value_dim = positive_int(config, {"d_kv"}, where);
    result.relative_buckets = positive_int(config, {"relative_attention_num_buckets"}, where);
    result.relative_max_distance = positive_int(config, {"relative_attention_max_distance"}, where);
    result.decoder_start_token_id = positive_int(config, {"decoder_start_token_id"}, where, 0);
    if (config.contains("feed_forward_proj") && !config["feed_forward_proj"].is_null())
        result.feed_forward_proj = string_field(config, {"feed_forward_proj"}, where);
    result.scale_embedding = bool_field(config, "scale_embedding", where);
    result.normalize_before = bool_field(config, "normalize_before", where);
    result.add_final_layer_norm = bool_field(config, "add_final_layer_norm", where);
    result.add_bias_logits = bool_field(config, "add_bias_logits", where);
    result.static_position_embeddings = bool_field(config, "static_position_embeddings", where);
}

void read_model_fields(const nlohmann::json& config, const std::string& where, HfConfig& result) {
    if (config.contains("model_type") && config["model_type"].is_string())
        result.model_type = config["model_type"].get<std::string>();
    result.intermediate_size = positive_int(config, {"intermediate_size", "n_inner", "ffn_dim"}, where);
    result.vocab_size = positive_int(config, {"vocab_size"}, where);
    result.max_positions = positive_int(config, {"max_position_embeddings", "n_positions", "n_ctx"}, where);
    result.head_dim = positive_int(config, {"head_dim"}, where);
    result.norm_epsilon =
        positive_number(config, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}, where);
    // A string ("true") or a number here would not be the boolean transformers reads: refused.
    result.tie_word_embeddings = bool_field(config, "tie_word_embeddings", where);
    result.scale_decoder_outputs = bool_field(config, "scale_decoder_outputs", where);
    read_rope(config, where, result);
    read_option_fields(config, where, result);
    read_gemma_fields(config, where, result);
    read_seq2seq_fields(config, where, result);
    // Only Gemma 3 gives its sliding layers a RoPE of their own; any other family would ignore it.
    std::vector<std::string> local_bases;
    for (const FamilySpec& family : decoder_families())
        if (family.local_rope_base > 0) local_bases.push_back(family.hf_model_type);
    if (result.rope_per_layer_type &&
        std::find(local_bases.begin(), local_bases.end(), result.model_type) == local_bases.end())
        fail_input(where, fmt::format("rope_parameters per layer type are not supported for model_type {} (only {} "
                                      "has a RoPE base of its own on sliding layers)",
                                      json_excerpt(nlohmann::json(result.model_type)), fmt::join(local_bases, ", ")));
}

}  // namespace

const std::vector<std::string>& rope_scaling_types() {
    static const std::vector<std::string> types = {"linear", "llama3"};
    return types;
}

HfConfig read_hf_config(const std::string& config_path, const std::vector<std::string>& supported_model_types) {
    MappedFile file(config_path, "model config");
    if (file.size() > max_config_bytes) fail_input(config_path, "config.json is larger than 16 MB");
    const nlohmann::json config = parse_json_text(file.text(), config_path, "not valid JSON");
    if (!config.is_object()) fail_input(config_path, "not a JSON object");
    // The model type decides first: an unsupported family's keys are not judged by another's rules.
    if (!supported_model_types.empty()) {
        const std::string model_type = string_field(config, {"model_type"}, config_path);
        if (model_type.empty()) fail_input(config_path, "has no \"model_type\"");
        if (std::find(supported_model_types.begin(), supported_model_types.end(), model_type) ==
            supported_model_types.end())
            fail_input(config_path,
                       fmt::format("model_type {} is not supported (supported: {})",
                                   json_excerpt(nlohmann::json(model_type)), fmt::join(supported_model_types, ", ")));
    }

    HfConfig result;
    result.path = config_path;
    result.num_heads =
        positive_int(config, {"num_attention_heads", "n_head", "num_heads", "encoder_attention_heads"}, config_path);
    result.num_kv_heads = positive_int(config, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, config_path);
    result.multi_query = bool_field(config, "multi_query", config_path);
    if (!result.num_kv_heads && result.multi_query.value_or(false)) result.num_kv_heads = 1;
    result.d_model = positive_int(config, {"hidden_size", "n_embd", "d_model"}, config_path);
    result.num_layers = positive_int(config, {"num_hidden_layers", "n_layer", "num_layers"}, config_path);
    read_model_fields(config, config_path, result);
    read_family_fields(config, config_path, result);
    return result;
}

int64_t required_value(const std::optional<int64_t>& value, const HfConfig& config, const char* key) {
    if (!value) fail_input(config.path, fmt::format("missing \"{}\"", key));
    return *value;
}

Activation parse_activation(const HfConfig& config, const std::string& fallback) {
    return activation_named(config.activation, config, fallback);
}

Activation activation_named(const std::string& given, const HfConfig& config, const std::string& fallback) {
    const std::string name = given.empty() ? fallback : given;
    if (name == "gelu") return Activation::gelu_erf;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::gelu_tanh;
    if (name == "silu" || name == "swish") return Activation::silu;
    if (name == "relu") return Activation::relu;
    fail_input(config.path,
               fmt::format("activation {} is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, "
                           "silu, swish, relu)",
                           json_excerpt(nlohmann::json(name))));
}

void refuse_unimplemented(const HfConfig& config, const std::vector<std::string>& implemented) {
    for (const std::string& setting : config.unimplemented) {
        const std::string key = setting.substr(0, setting.find(' '));
        if (std::find(implemented.begin(), implemented.end(), key) == implemented.end())
            fail_input(config.path,
                       fmt::format("{} is not supported (attn-viz does not implement {}{})", setting, key,
                                   config.model_type.empty() ? "" : fmt::format(" for {}", config.model_type)));
    }
}

HfConfig find_hf_config_beside(const std::string& checkpoint_path) {
    const std::filesystem::path config = std::filesystem::path(checkpoint_path).parent_path() / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) return {};
    return read_hf_config(config.string());
}

}  // namespace attn_viz
