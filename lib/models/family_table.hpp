// The decoder families, one row each whatever container holds them: a Hugging Face folder's
// model_type (what transformers' modeling_<model_type>.py and its config class do beyond Llama)
// and a GGUF file's general.architecture (what llama.cpp's convert_hf_to_gguf.py writes and its
// loader runs), the tensor names in each, the block's kinds and the keys read and refused. The
// Hugging Face reader (hf_llama_checkpoint.hpp) and the GGUF reader (gguf_llama.hpp) fill a
// DecoderLayout from it, and one block reader (decoder_blocks.hpp) reads either. A decoder family
// with separate q/k/v projections (RMSNorm or LayerNorm, gated or plain feed-forward: Llama,
// StarCoder 2) is a row here; docs/formats.md lists the keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hf_config.hpp"
#include "layer_weights.hpp"
#include "model_weights.hpp"

namespace attn_viz {

enum class Container { hf, gguf };

// Which layers have a sliding window (the window itself is sliding_window's).
enum class WindowRule {
    none,          // Llama, Gemma
    every_layer,   // Mistral, Phi-3
    from_layer,    // Qwen2/3: with use_sliding_window, layers from max_window_layers on (GGUF: none)
    alternating,   // Gemma 2: even layers (0, 2, ...)
    pattern,       // Gemma 3: all but every sliding_window_pattern-th layer (5, 11, ... for 6)
    no_rope,       // SmolLM3: with use_sliding_window, the layers without RoPE (GGUF: none)
    local_layers,  // GPT-Neo: the layers attention_types calls "local" (window_size keys, 256 by default)
};

// Which biases a Hugging Face folder of the family has on one group of projections (GGUF: whichever
// the file holds): as config.json's boolean `key` says (`by_default` where it is absent), or,
// without a key, always (`by_default` true) or never.
struct BiasRule {
    std::optional<bool> HfConfig::*key = nullptr;
    const char* key_name = "";
    bool by_default = false;
};

// Which q/k norms the blocks have (RMSNorm, before RoPE; the model's epsilon and norm kind).
enum class QkNorm {
    none,
    per_head,      // Qwen3, Gemma 3: q_norm / k_norm [head_dim] on each head
    across_heads,  // OLMo 2: q_norm [H*d_h], k_norm [KV*d_h] on each token's whole projection
};

// How scores are scaled.
enum class ScoreScale {
    head_size,              // 1 / sqrt(d_h)
    none,                   // GPT-Neo: scores not scaled
    query_pre_attn_scalar,  // Gemma 2/3: query_pre_attn_scalar^-1/2 (GGUF, which lacks it: llama.cpp's choice)
    attention_multiplier,   // Granite: attention_multiplier (default 1); GGUF attention.scale, else 1 / sqrt(d_h)
};

// A family's tensors in one container: patterns with "{}" for the block index, without ".weight"
// or ".bias"; "" where the family has no such tensor.
struct DecoderTensorNames {
    // (Each with a default, so that a designated initializer may leave it out.)
    // qkv: [q; k; v] stacked (Phi-3, GPTBigCode), split at read time, in place of q, k and v.
    std::string q = {}, k = {}, v = {}, qkv = {}, o = {}, q_norm = {}, k_norm = {};
    std::string attention_norm = {}, attention_output_norm = {}, feed_forward_norm = {}, feed_forward_output_norm = {};
    std::string gate = {}, up = {}, gate_up = {}, down = {};  // gate_up: [gate; up] stacked (Phi-3); plain: no gate
    std::string embedding = {}, final_norm = {}, classifier = {};
    std::string position_embedding = {};  // learned positions [max_positions, D] (GPT-Neo), then no RoPE
};

struct FamilySpec {
    std::string name = {};               // ModelConfig::family
    std::string hf_model_type = {};      // config.json's model_type ("": no Hugging Face form)
    std::string gguf_architecture = {};  // general.architecture and its keys' prefix ("": no GGUF form of its own)
    DecoderTensorNames hf_names = {}, gguf_names = {};

    // The block.
    NormKind norm = NormKind::rms;  // rms_offset_one: Gemma's (1 + w), stored in GGUF as 1 + w; layer_norm: with biases
    bool parameterless_norms = false;  // OLMo: LayerNorms without weight or bias tensors (read as 1 and 0)
    bool layer_norm_biases = true;     // Cohere: LayerNorms with a weight and no bias
    FeedForwardKind feed_forward = FeedForwardKind::gated;  // plain: up (w_in) and down only (Starcoder2)
    ResidualLayout residual = ResidualLayout::pre_norm;     // sandwich: Gemma 2/3's post-norms; OLMo 2's post_sublayer
    QkNorm qk_norm = QkNorm::none;
    bool scaled_embeddings = false;  // Gemma: token embeddings times sqrt(D), rounded to float
    // GPTBigCode: multi_query (true by default) gives one key/value head; false, whose c_attn holds
    // each head's q, k and v together, is refused.
    bool multi_query = false;
    bool reads_scale_attn_weights = false;  // GPTBigCode: scale_attn_weights false leaves the scores unscaled
    // Granite: embedding_multiplier, residual_multiplier and logits_scaling (ModelConfig's
    // embedding_scale, residual_scale, logits_scaling; GGUF embedding_scale, residual_scale, logit_scale).
    bool reads_multipliers = false;
    // Cohere: logits times logit_scale (default_logit_scale when absent; GGUF logit_scale, required).
    bool reads_logit_scale = false;
    double default_logit_scale = 1.0;
    // The feed-forward's activation where config.json names none (a GGUF file never does), as
    // transformers names it; Gemma 2/3's MLPs read hidden_activation, the others (Gemma 1 too) hidden_act.
    std::string default_activation = "silu";
    bool reads_hidden_activation = false;
    // Gemma 1: hidden_act "gelu", as the official releases write it, means GELU's tanh approximation
    // (transformers' GemmaConfig turns it into gelu_pytorch_tanh).
    bool gelu_means_tanh = false;
    ScoreScale score_scale = ScoreScale::head_size;
    bool partial_rotary = false;  // Phi-3: partial_rotary_factor (GGUF: rope.dimension_count) below the head size
    double default_rotary_fraction = 1.0;  // partial_rotary_factor where config.json has none (StableLM: 0.25)
    // StableLM: the head size is hidden_size / heads (a head_dim key, which transformers' rotary
    // embedding would read, must agree).
    bool head_size_of_width = false;
    // StableLM: use_parallel_residual (default false) runs attention and feed-forward side by side
    // from the one input_layernorm (ResidualLayout::parallel, no post_attention_layernorm); in GGUF,
    // blocks without ffn_norm, as llama.cpp decides.
    bool reads_parallel_residual = false;

    // Sliding windows and RoPE.
    WindowRule windows = WindowRule::none;
    int64_t default_window = 0;         // sliding_window when config.json or the metadata has none (0: none)
    bool gguf_window_required = false;  // gemma3: .attention.sliding_window must be there
    // The key is refused: starcoder2 (llama.cpp applies none), olmo2 (OLMo 3's windows, not read).
    bool gguf_windowless = false;
    int64_t gguf_window_pattern = 0;  // gemma3: llama.cpp's fixed pattern (GGUF has no sliding_window_pattern)
    double local_rope_base = 0.0;     // Gemma 3: the sliding layers' unscaled RoPE base by default (0: as every layer)
    RopeStyle hf_rope = RopeStyle::half_split;    // Cohere: interleaved pairs (its rotate_half), as in its GGUF form
    RopeStyle gguf_rope = RopeStyle::half_split;  // llama: interleaved (the converter permutes q/k rows)

    // Soft-caps: Gemma 2/3 read attn_logit_softcapping and final_logit_softcapping, which the others refuse.
    bool softcaps = false;
    bool hf_attn_softcap = true;  // transformers' Gemma 3 keeps the key but never applies it
    double default_attn_softcap = 0.0, default_final_softcap = 0.0;  // Gemma 2: 50 and 30
    int64_t gguf_wide_scale_layers = 0;  // Gemma 2/3: the 27B block count, scaled by (D / H)^-1/2

    // What else a Hugging Face config.json says.
    // Biases: on q/k/v, on o, on the feed-forward's projections (Llama: attention_bias, mlp_bias).
    BiasRule qkv_biases = {}, o_bias = {}, mlp_biases = {};
    int64_t default_head_dim = 0;  // head_dim when config.json has none (0: hidden_size / heads)
    // OPT: the learned positions' first rows are unused (position p reads row p + position_offset).
    int64_t position_offset = 0;
    // OPT: do_layer_norm_before (default true; false: ResidualLayout::post_norm and no final norm),
    // _remove_final_layer_norm; word_embed_proj_dim other than hidden_size, and
    // layer_norm_elementwise_affine false, refused.
    bool reads_layer_norm_before = false;
    // intermediate_size when config.json has none: this times hidden_size (0: required; GPT-Neo 4).
    int64_t default_ffn_factor = 0;
    double default_rope_base = 10000.0;
    double default_epsilon = 1e-6;
    bool fixed_epsilon = false;  // OLMo: default_epsilon whatever config.json says (OlmoLayerNorm's 1e-5)
    bool default_tied = false;   // tie_word_embeddings when absent
    // Reads layer_types (Qwen2/3, Gemma 2/3); transformers' Mistral and Phi-3 ignore the key
    // (every layer slides), so there it changes nothing.
    bool reads_layer_types = false;
    // SmolLM3: no RoPE on the layers no_rope_layers marks 0 (by default every no_rope_layer_interval-th, 4).
    bool reads_no_rope_layers = false;
    std::vector<std::string> implemented_keys = {};  // of HfConfig::unimplemented's keys

    // What else GGUF metadata says: llama's rules (llama2.c's limits, whole unscaled RoPE, the
    // head size D / H, no sliding window, refused by name).
    bool gguf_llama_rules = false;

    const DecoderTensorNames& names(Container container) const {
        return container == Container::hf ? hf_names : gguf_names;
    }
};

// Every decoder family, in the order docs list them.
const std::vector<FamilySpec>& decoder_families();

// The families of each container, as their names list them in messages.
std::vector<std::string> hf_decoder_model_types();
std::vector<std::string> gguf_decoder_architectures();

// The row of a model_type or general.architecture, or null.
const FamilySpec* family_of_model_type(const std::string& model_type);
const FamilySpec* family_of_architecture(const std::string& architecture);

// Block settings of the family's q/k norms (none: nothing) with the model's norm epsilon.
void set_qk_norm(const FamilySpec& family, double epsilon, LayerWeights& layer);

// Whether block `layer` slides under `rule` (from_layer: from layer `first_sliding` on; pattern:
// all but every `pattern`-th).
bool layer_slides(WindowRule rule, int64_t layer, int64_t first_sliding, int64_t pattern);

// A name pattern of DecoderTensorNames for block `layer`, with `suffix` (".weight", ".bias").
std::string block_tensor(const std::string& pattern, int64_t layer, const char* suffix = ".weight");

}  // namespace attn_viz
