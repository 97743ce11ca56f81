// The GGUF decoder family table and each file's configuration from its metadata.
#include "gguf_decoder_families.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "json_input.hpp"
#include "llama2c_checkpoint.hpp"
#include "utf8.hpp"

namespace attn_viz {

const std::vector<GgufDecoderFamily>& gguf_decoder_families() {
    static const std::vector<GgufDecoderFamily> families = {
        {.architecture = "llama", .rope = RopeStyle::interleaved},
        {.architecture = "qwen3", .qk_norm = true},
        {.architecture = "gemma2",
         .gemma = true,
         .window_pattern = 2,
         .default_window = 4096,
         .default_attn_softcap = 50.0,
         .default_final_softcap = 30.0,
         .wide_scale_layers = 46},
        {.architecture = "gemma3",
         .qk_norm = true,
         .gemma = true,
         .window_pattern = 6,
         .wide_scale_layers = 62,
         .local_rope_base = 10000.0},
        {.architecture = "phi3", .fused = true, .window_pattern = 1},
    };
    return families;
}

namespace {

const GgufDecoderFamily& family_of(const GgufFile& file) {
    const std::string architecture = file.get_string("general.architecture").value_or("");
    // The names gathered by hand, not through std::views: clang 14, which builds the fuzz targets,
    // cannot compile libstdc++ 12's ranges.
    std::vector<std::string> names;
    for (const GgufDecoderFamily& family : gguf_decoder_families()) {
        if (family.architecture == architecture) return family;
        names.push_back(family.architecture);
    }
    fail_input(file.path(), fmt::format("general.architecture is \"{}\"; attn-viz runs GGUF models of architecture {}, "
                                        "gpt2, gptneox, bert",
                                        escape_invalid_utf8(architecture), fmt::join(names, ", ")));
}

std::string number_text(const std::optional<double>& value) {
    if (!value) return "<not a number>";
    const bool whole = *value == std::floor(*value) && std::fabs(*value) < 1e15;
    return whole ? fmt::to_string(static_cast<long long>(*value)) : json_excerpt(nlohmann::json(*value));
}

// Metadata that changes llama.cpp's forward pass and that the family does not have in attn-viz:
// mixture-of-experts blocks; soft-capping outside Gemma; for llama, a sliding window (llama.cpp
// applies none to llama, so a file that names one was meant for another architecture) and key /
// value head sizes other than the head size. (qwen3's sliding_window, if a converter writes one, is
// ignored as llama.cpp ignores it.) Error(bad_input) naming the key and its value.
void refuse_unimplemented_keys(const GgufFile& file, const GgufDecoderFamily& family, int64_t head) {
    const std::string& a = family.architecture;
    std::vector<std::string> keys = {fmt::format("{}.expert_count", a)};
    if (!family.gemma)
        keys.insert(keys.end(),
                    {fmt::format("{}.attn_logit_softcapping", a), fmt::format("{}.final_logit_softcapping", a)});
    if (family.architecture == "llama")
        keys.insert(keys.end(),
                    {fmt::format("{}.attention.sliding_window", a), fmt::format("{}.attention.key_length", a),
                     fmt::format("{}.attention.value_length", a)});
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

// A positive count of at most `limit`; Error(bad_input) naming the key otherwise.
int64_t bounded(const GgufFile& file, const std::string& key, int64_t value, int64_t limit) {
    if (value < 1 || value > limit) fail_input(file.path(), fmt::format("{} = {} is outside 1..{}", key, value, limit));
    return value;
}

// RoPE: llama turns whole heads unscaled (anything else is refused as before); the others take
// rope.dimension_count (phi3 only below the head size: partial rotary) and rope.scaling.type none
// or linear. Phi-3's LongRoPE (rope_factors_long / rope_factors_short, written for its 128k
// models) and llama.cpp's rope_freqs are refused.
void read_rope(const GgufFile& file, const GgufDecoderFamily& family, LayerWeights& a) {
    const std::string& p = family.architecture;
    a.rope = family.rope;
    a.rope_base = file.get_float(fmt::format("{}.rope.freq_base", p)).value_or(10000.0);
    if (!(a.rope_base > 1 && a.rope_base < 1e12))
        fail_input(file.path(), fmt::format("{}.rope.freq_base {:f} is outside (1, 1e12)", p, a.rope_base));
    if (file.has(fmt::format("{}.rope.dimension_count", p))) {
        const int64_t dims = file.required_count(fmt::format("{}.rope.dimension_count", p));
        if (dims != a.d_head && (family.architecture != "phi3" || dims % 2 != 0 || dims < 2 || dims > a.d_head))
            fail_input(file.path(), fmt::format("{}.rope.dimension_count is not the head size {}{}", p, a.d_head,
                                                family.architecture == "phi3" ? " or an even count below it"
                                                                              : " (partial RoPE is not supported)"));
        a.rope_dims = dims == a.d_head ? 0 : dims;
    }
    for (const char* tensor : {"rope_factors_long.weight", "rope_factors_short.weight"})
        if (file.find_tensor(tensor))
            fail_input(file.path(),
                       fmt::format("has tensor \"{}\": Phi-3's LongRoPE scaling is not supported", tensor));
    const std::string scaling = file.get_string(fmt::format("{}.rope.scaling.type", p)).value_or("none");
    if (family.architecture == "llama") {
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

GgufDecoder gguf_decoder_config(const GgufFile& file) {
    GgufDecoder decoder;
    decoder.family = &family_of(file);
    const GgufDecoderFamily& family = *decoder.family;
    const std::string& p = family.architecture;
    auto count = [&](const std::string& key) { return file.required_count(fmt::format("{}.{}", p, key)); };
    ModelConfig& c = decoder.config;  // RMSNorm, gated SiLU, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
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
    c.norm_epsilon = file.get_float(fmt::format("{}.attention.layer_norm_rms_epsilon", p)).value_or(1e-5);
    if (!(c.norm_epsilon > 0 && c.norm_epsilon < 1))
        fail_input(file.path(),
                   fmt::format("{}.attention.layer_norm_rms_epsilon {:f} is outside (0, 1)", p, c.norm_epsilon));
    if (p == "llama") {
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

    LayerWeights& a = decoder.attention;
    a.d_model = c.d_model, a.num_heads = c.n_heads, a.num_kv_heads = c.n_kv_heads, a.d_head = c.head_dim,
    a.causal = true;
    read_rope(file, family, a);
    c.rope_base = a.rope_base;
    if (family.qk_norm) {
        a.qk_norm_epsilon = c.norm_epsilon;
        a.qk_norm_offset = family.gemma ? 1.0f : 0.0f;
    }
    if (family.window_pattern > 0) {
        const std::string key = fmt::format("{}.attention.sliding_window", p);
        decoder.sliding_window = family.default_window == 0 && family.window_pattern > 1
                                     ? count("attention.sliding_window")
                                 : file.has(key) ? count("attention.sliding_window")
                                                 : family.default_window;
    }
    if (family.gemma) {
        c.norm = NormKind::rms_offset_one;
        c.residual = ResidualLayout::sandwich;
        c.activation = Activation::gelu_tanh;
        c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.d_model)));
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
        // GGUF has no query_pre_attn_scalar: llama.cpp scales by the key length, or by D / H for the 27B models.
        const double scalar = c.n_layers == family.wide_scale_layers ? static_cast<double>(c.d_model / c.n_heads)
                                                                     : static_cast<double>(c.head_dim);
        a.score_scale = 1.0 / std::sqrt(scalar);
    }
    return decoder;
}

LayerWeights gguf_layer_settings(const GgufDecoder& decoder, int64_t layer) {
    LayerWeights a = decoder.attention;
    const int64_t n = decoder.family->window_pattern;
    if (decoder.sliding_window <= 0 || n == 0 || (n > 1 && layer % n == n - 1)) return a;
    a.sliding_window = decoder.sliding_window;
    if (decoder.family->local_rope_base > 0) {
        a.rope_base = decoder.family->local_rope_base;
        a.rope_scaling = {};
    }
    return a;
}

}  // namespace attn_viz
