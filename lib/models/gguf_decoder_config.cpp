// A GGUF decoder's configuration from its metadata, by the family table.
#include "gguf_decoder_config.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "family_table.hpp"
#include "gguf_transformer.hpp"
#include "json_input.hpp"
#include "llama2c_checkpoint.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

const FamilySpec& family_of(const GgufFile& file) {
    const std::string architecture = file.get_string("general.architecture").value_or("");
    if (const FamilySpec* family = family_of_architecture(architecture)) return *family;
    std::vector<std::string> names = gguf_decoder_architectures();
    names.insert(names.end(), gguf_transformer_architectures().begin(), gguf_transformer_architectures().end());
    fail_input(file.path(), fmt::format("general.architecture is \"{}\"; attn-viz runs GGUF models of architecture {}",
                                        escape_invalid_utf8(architecture), fmt::join(names, ", ")));
}

std::string number_text(const std::optional<double>& value) {
    if (!value) return "<not a number>";
    const bool whole = *value == std::floor(*value) && std::fabs(*value) < 1e15;
    return whole ? fmt::to_string(static_cast<long long>(*value)) : json_excerpt(nlohmann::json(*value));
}

// Metadata that changes llama.cpp's forward pass and that the family does not have in attn-viz:
// mixture-of-experts blocks; q/k/v clamping (OLMo's clip_qkv); soft-capping outside Gemma; for llama, a sliding window
// (llama.cpp applies none to llama, so a file that names one was meant for another architecture) and key / value head
// sizes other than the head size; for starcoder2 a sliding window too (llama.cpp applies none). (qwen3's
// sliding_window, if a converter writes one, is ignored as llama.cpp ignores it.) Error(bad_input) naming the key and
// its value.
void refuse_unimplemented_keys(const GgufFile& file, const FamilySpec& family, int64_t head) {
    const std::string& a = family.gguf_architecture;
    std::vector<std::string> keys = {fmt::format("{}.expert_count", a), fmt::format("{}.attention.clamp_kqv", a)};
    if (!family.softcaps)
        keys.insert(keys.end(),
                    {fmt::format("{}.attn_logit_softcapping", a), fmt::format("{}.final_logit_softcapping", a)});
    if (family.gguf_llama_rules)
        keys.insert(keys.end(),
                    {fmt::format("{}.attention.sliding_window", a), fmt::format("{}.attention.key_length", a),
                     fmt::format("{}.attention.value_length", a)});
    if (family.gguf_windowless) keys.push_back(fmt::format("{}.attention.sliding_window", a));
    for (const std::string& key : keys) {
        if (!file.has(key)) continue;
        const std::optional<double> value = file.get_float(key);
        const bool head_size = key.find("_length") != std::string::npos;
        if (head_size && value && *value == static_cast<double>(head)) continue;
        if (key == fmt::format("{}.expert_count", a) && value && *value == 0) continue;
        fail_input(file.path(), fmt::format("{} = {} is not supported{}", key, number_text(value),
                                            head_size ? fmt::format(" (only the head size {})", head) : ""));
    }
}

// Granite's multiplier `key` (of architecture `p`): 1 where absent, else a positive finite number
// (llama.cpp reads 0 as absent; no converter writes it); Error(bad_input) naming the key otherwise.
std::optional<double> multiplier(const GgufFile& file, const std::string& p, const char* key) {
    const std::string name = fmt::format("{}.{}", p, key);
    if (!file.has(name)) return std::nullopt;
    const std::optional<double> value = file.get_float(name);
    if (!value || !(*value > 0) || !std::isfinite(*value))
        fail_input(file.path(), fmt::format("{} = {} is not supported (a positive number)", name, number_text(value)));
    return value;
}

// A positive count of at most `limit`; Error(bad_input) naming the key otherwise.
int64_t bounded(const GgufFile& file, const std::string& key, int64_t value, int64_t limit) {
    if (value < 1 || value > limit) fail_input(file.path(), fmt::format("{} = {} is outside 1..{}", key, value, limit));
    return value;
}

// RoPE: llama turns whole heads unscaled (anything else is refused as before); the others take
// rope.dimension_count (phi3 only below the head size: partial rotary) and rope.scaling.type none
// or linear. Phi-3's LongRoPE (rope_factors_long / rope_factors_short, written for its 128k
// models) and llama.cpp's rope_freqs are refused.
void read_rope(const GgufFile& file, const FamilySpec& family, LayerWeights& a) {
    const std::string& p = family.gguf_architecture;
    a.rope = family.gguf_rope;
    a.rope_base = file.get_float(fmt::format("{}.rope.freq_base", p)).value_or(10000.0);
    if (!(a.rope_base > 1 && a.rope_base < 1e12))
        fail_input(file.path(), fmt::format("{}.rope.freq_base {:f} is outside (1, 1e12)", p, a.rope_base));
    if (file.has(fmt::format("{}.rope.dimension_count", p))) {
        const int64_t dims = file.required_count(fmt::format("{}.rope.dimension_count", p));
        if (dims != a.d_head && (!family.partial_rotary || dims % 2 != 0 || dims < 2 || dims > a.d_head))
            fail_input(file.path(), fmt::format("{}.rope.dimension_count is not the head size {}{}", p, a.d_head,
                                                family.partial_rotary ? " or an even count below it"
                                                                      : " (partial RoPE is not supported)"));
        a.rope_dims = dims == a.d_head ? 0 : dims;
    }
    for (const char* tensor : {"rope_factors_long.weight", "rope_factors_short.weight"})
        if (file.find_tensor(tensor))
            fail_input(file.path(),
                       fmt::format("has tensor \"{}\": Phi-3's LongRoPE scaling is not supported", tensor));
    const std::string scaling = file.get_string(fmt::format("{}.rope.scaling.type", p)).value_or("none");
    if (family.gguf_llama_rules) {
        if (file.find_tensor("rope_freqs.weight") || scaling != "none")
            fail_input(file.path(),
                       "uses scaled RoPE (rope_freqs or llama.rope.scaling), which attn-viz does not support");
        return;
    }
    if (file.find_tensor("rope_freqs.weight"))
        fail_input(file.path(), "has tensor \"rope_freqs.weight\": scaled RoPE frequencies are not supported");
    if (scaling == "none") return;
    const std::optional<double> factor = file.get_float(fmt::format("{}.rope.scaling.factor", p));
    if (scaling != "linear" || !factor || !(*factor >= 1 && *factor < 1e6))
        fail_input(file.path(), fmt::format("{}.rope.scaling.type \"{}\" with factor {} is not supported (only none, "
                                            "or linear with a factor of at least 1)",
                                            p, escape_invalid_utf8(scaling), number_text(factor)));
    a.rope_scaling.kind = RopeScaling::Kind::linear;
    a.rope_scaling.factor = *factor;
}

}  // namespace

DecoderLayout gguf_decoder_config(const GgufFile& file) {
    DecoderLayout decoder;
    decoder.family = &family_of(file);
    decoder.container = Container::gguf;
    const FamilySpec& family = *decoder.family;
    const std::string& p = family.gguf_architecture;
    auto count = [&](const std::string& key) { return file.required_count(fmt::format("{}.{}", p, key)); };
    ModelConfig& c = decoder.config;  // RMSNorm, gated SiLU, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.family = family.name;
    c.n_layers = count("block_count");
    c.d_model = count("embedding_length");
    c.ffn_dim = count("feed_forward_length");
    c.n_heads = count("attention.head_count");
    c.n_kv_heads =
        file.has(fmt::format("{}.attention.head_count_kv", p)) ? count("attention.head_count_kv") : c.n_heads;
    c.max_tokens = count("context_length");
    const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
    if (!embedding || embedding->dims.size() != 2) fail_input(file.path(), "has no 2-D tensor \"token_embd.weight\"");
    c.vocab_size = embedding->dims[1];
    c.shared_classifier = file.find_tensor("output.weight") == nullptr;
    // llama.cpp's key for the family's norm: RMSNorm's, or LayerNorm's (Starcoder2).
    const std::string epsilon_key = fmt::format(
        "{}.attention.{}", p, family.norm == NormKind::layer_norm ? "layer_norm_epsilon" : "layer_norm_rms_epsilon");
    c.norm_epsilon = file.get_float(epsilon_key).value_or(1e-5);
    if (!(c.norm_epsilon > 0 && c.norm_epsilon < 1))
        fail_input(file.path(), fmt::format("{} {:f} is outside (0, 1)", epsilon_key, c.norm_epsilon));
    if (family.gguf_llama_rules) {
        validate_llama_config(c, file.path(), "GGUF llama metadata", "");
        c.head_dim = c.d_model / c.n_heads;
    } else {
        bounded(file, fmt::format("{}.embedding_length", p), c.d_model, 1 << 15);
        bounded(file, fmt::format("{}.feed_forward_length", p), c.ffn_dim, 1 << 17);
        bounded(file, fmt::format("{}.block_count", p), c.n_layers, 1 << 10);
        bounded(file, fmt::format("{}.attention.head_count", p), c.n_heads, 1 << 12);
        bounded(file, fmt::format("{}.attention.head_count_kv", p), c.n_kv_heads, c.n_heads);
        bounded(file, fmt::format("{}.context_length", p), c.max_tokens, 1 << 20);
        bounded(file, "token_embd.weight's vocabulary", c.vocab_size, 1 << 20);
        if (c.n_heads % c.n_kv_heads != 0)
            fail_input(file.path(),
                       fmt::format("{}.attention.head_count {} is not divisible by {}.attention.head_count_kv {}", p,
                                   c.n_heads, p, c.n_kv_heads));
        if (!file.has(fmt::format("{}.attention.key_length", p)) && c.d_model % c.n_heads != 0)
            fail_input(
                file.path(),
                fmt::format(
                    "has no {}.attention.key_length, and {}.embedding_length {} is not divisible by the head count {}",
                    p, p, c.d_model, c.n_heads));
        c.head_dim =
            file.has(fmt::format("{}.attention.key_length", p))
                ? bounded(file, fmt::format("{}.attention.key_length", p), count("attention.key_length"), 1 << 12)
                : c.d_model / c.n_heads;
        if (file.has(fmt::format("{}.attention.value_length", p)) && count("attention.value_length") != c.head_dim)
            fail_input(
                file.path(),
                fmt::format("{}.attention.value_length differs from the key length {} (not supported)", p, c.head_dim));
        if (c.head_dim % 2 != 0)
            fail_input(file.path(), fmt::format("head size {} is odd (RoPE needs pairs)", c.head_dim));
    }
    refuse_unimplemented_keys(file, family, c.head_dim);

    LayerWeights a;  // a full-attention layer's settings
    a.d_model = c.d_model, a.num_heads = c.n_heads, a.num_kv_heads = c.n_kv_heads, a.d_head = c.head_dim,
    a.causal = true;
    read_rope(file, family, a);
    c.rope_base = a.rope_base;
    set_qk_norm(family, c.norm_epsilon, a);
    // Sliding windows: Qwen's from_layer needs use_sliding_window, which GGUF does not have (llama.cpp
    // ignores qwen3's window).
    int64_t window = 0;
    if (family.windows != WindowRule::none && family.windows != WindowRule::from_layer && !family.gguf_windowless) {
        const std::string key = fmt::format("{}.attention.sliding_window", p);
        window = family.gguf_window_required ? count("attention.sliding_window")
                 : file.has(key)             ? count("attention.sliding_window")
                                             : family.default_window;
    }
    c.norm = family.norm;
    c.feed_forward = family.feed_forward;
    c.residual = family.residual;
    // StableLM: blocks without ffn_norm are parallel, as llama.cpp runs them (whatever
    // use_parallel_residual the converter wrote, which llama.cpp does not read).
    if (family.reads_parallel_residual && !file.find_tensor(block_tensor(family.gguf_names.feed_forward_norm, 0)))
        c.residual = ResidualLayout::parallel;
    c.activation = activation_named(family.default_activation, HfConfig{}, "");
    if (family.scaled_embeddings) c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.d_model)));
    if (family.softcaps) {
        c.final_logit_softcap =
            file.get_float(fmt::format("{}.final_logit_softcapping", p)).value_or(family.default_final_softcap);
        a.logit_softcap =
            file.get_float(fmt::format("{}.attn_logit_softcapping", p)).value_or(family.default_attn_softcap);
        // cap * tanh(x / cap) is NaN at an infinite cap (inf * 0): a cap is finite and not negative.
        for (const auto& [key, cap] : {std::pair{"attn_logit_softcapping", a.logit_softcap},
                                       std::pair{"final_logit_softcapping", c.final_logit_softcap}})
            if (!(cap >= 0) || !std::isfinite(cap))
                fail_input(file.path(), fmt::format("{}.{} is {}, expected a finite number, not negative", p, key,
                                                    static_cast<double>(cap)));
    }
    if (family.reads_multipliers) {
        c.embedding_scale = static_cast<float>(multiplier(file, p, "embedding_scale").value_or(1.0));
        c.residual_scale = multiplier(file, p, "residual_scale").value_or(1.0);
        const std::optional<double> logit_scale = multiplier(file, p, "logit_scale");
        if (!logit_scale) fail_input(file.path(), fmt::format("has no {}.logit_scale (llama.cpp requires it)", p));
        c.logits_scaling = *logit_scale;
        // llama.cpp's Granite turns no query or key where rope.scaling.finetuned is false.
        const std::string rope_switch = fmt::format("{}.rope.scaling.finetuned", p);
        if (file.has(rope_switch) && !file.get_bool(rope_switch).value_or(true))
            fail_input(file.path(), fmt::format("{} = false (no RoPE) is not supported", rope_switch));
    }
    if (family.reads_logit_scale) {  // llama.cpp's command-r: logits times logit_scale, which it requires
        const std::optional<double> logit_scale = multiplier(file, p, "logit_scale");
        if (!logit_scale) fail_input(file.path(), fmt::format("has no {}.logit_scale (llama.cpp requires it)", p));
        c.logits_scaling = 1.0 / *logit_scale;
    }
    if (family.score_scale == ScoreScale::attention_multiplier)
        if (const std::optional<double> scale = multiplier(file, p, "attention.scale")) a.score_scale = *scale;
    if (family.score_scale == ScoreScale::query_pre_attn_scalar) {
        // GGUF has no query_pre_attn_scalar: llama.cpp scales by the key length, or by D / H for the 27B models.
        const double scalar = c.n_layers == family.gguf_wide_scale_layers ? static_cast<double>(c.d_model / c.n_heads)
                                                                          : static_cast<double>(c.head_dim);
        a.score_scale = 1.0 / std::sqrt(scalar);
    }
    // Each layer: the window and (gemma3) local RoPE base on the family's sliding layers.
    for (int64_t l = 0; l < c.n_layers; ++l) {
        LayerWeights& layer = decoder.settings.emplace_back(a);
        if (window <= 0 || !layer_slides(family.windows, l, 0, family.gguf_window_pattern)) continue;
        layer.sliding_window = window;
        if (family.local_rope_base > 0) {
            layer.rope_base = family.local_rope_base;
            layer.rope_scaling = {};
        }
    }
    return decoder;
}

}  // namespace attn_viz
