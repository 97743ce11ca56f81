// The decoder family table.
#include "family_table.hpp"

#include <fmt/format.h>

namespace attn_viz {

namespace {

// Llama's tensors in each container: Hugging Face's (LlamaForCausalLM's state dict) beside
// GGUF's (gguf-py's tensor map).
struct NameRow {
    std::string DecoderTensorNames::*role;
    const char* hf;
    const char* gguf;
};
const NameRow llama_name_rows[] = {
    // attention
    {&DecoderTensorNames::q, "model.layers.{}.self_attn.q_proj", "blk.{}.attn_q"},
    {&DecoderTensorNames::k, "model.layers.{}.self_attn.k_proj", "blk.{}.attn_k"},
    {&DecoderTensorNames::v, "model.layers.{}.self_attn.v_proj", "blk.{}.attn_v"},
    {&DecoderTensorNames::o, "model.layers.{}.self_attn.o_proj", "blk.{}.attn_output"},
    // norms
    {&DecoderTensorNames::attention_norm, "model.layers.{}.input_layernorm", "blk.{}.attn_norm"},
    {&DecoderTensorNames::feed_forward_norm, "model.layers.{}.post_attention_layernorm", "blk.{}.ffn_norm"},
    // feed-forward
    {&DecoderTensorNames::gate, "model.layers.{}.mlp.gate_proj", "blk.{}.ffn_gate"},
    {&DecoderTensorNames::up, "model.layers.{}.mlp.up_proj", "blk.{}.ffn_up"},
    {&DecoderTensorNames::down, "model.layers.{}.mlp.down_proj", "blk.{}.ffn_down"},
};

DecoderTensorNames llama_names(Container container) {
    DecoderTensorNames names;
    for (const NameRow& row : llama_name_rows) names.*row.role = container == Container::hf ? row.hf : row.gguf;
    const bool hf = container == Container::hf;  // outside the blocks
    names.embedding = hf ? "model.embed_tokens" : "token_embd";
    names.final_norm = hf ? "model.norm" : "output_norm";
    names.classifier = hf ? "lm_head" : "output";
    return names;
}
DecoderTensorNames hf_llama_names() { return llama_names(Container::hf); }
DecoderTensorNames gguf_llama_names() { return llama_names(Container::gguf); }

// The bias rules of the table: Llama's attention_bias (q/k/v/o) and mlp_bias, Starcoder2's use_bias
// (every projection, true by default), Qwen2's q/k/v biases without a key.
const BiasRule attention_bias_key{&HfConfig::attention_bias, "attention_bias"};
const BiasRule mlp_bias_key{&HfConfig::mlp_bias, "mlp_bias"};
const BiasRule use_bias_key{&HfConfig::use_bias, "use_bias", true};
const BiasRule enable_bias_key{&HfConfig::enable_bias, "enable_bias", true};
const BiasRule always_biased{.by_default = true};

// GPT-2's names outside attention (GPT-Neo's, GPTBigCode's): LayerNorms ln_1, ln_2 and ln_f, the MLP
// c_fc / c_proj, token and position embeddings wte and wpe, lm_head.
DecoderTensorNames gpt2_names() {
    return {.attention_norm = "transformer.h.{}.ln_1",
            .feed_forward_norm = "transformer.h.{}.ln_2",
            .up = "transformer.h.{}.mlp.c_fc",
            .down = "transformer.h.{}.mlp.c_proj",
            .embedding = "transformer.wte",
            .final_norm = "transformer.ln_f",
            .classifier = "lm_head",
            .position_embedding = "transformer.wpe"};
}

// Qwen3's and Gemma 3's per-head q/k norms, OLMo 2's across heads.
FamilySpec with_qk_norm(FamilySpec f, QkNorm kind = QkNorm::per_head) {
    f.qk_norm = kind;
    f.hf_names.q_norm = "model.layers.{}.self_attn.q_norm", f.hf_names.k_norm = "model.layers.{}.self_attn.k_norm";
    f.gguf_names.q_norm = "blk.{}.attn_q_norm", f.gguf_names.k_norm = "blk.{}.attn_k_norm";
    return f;
}

// Gemma 2/3's sandwich norms: transformers' post_attention_layernorm is on the attention output.
FamilySpec with_sandwich_norms(FamilySpec f) {
    f.residual = ResidualLayout::sandwich;
    DecoderTensorNames& hf = f.hf_names;
    hf.attention_output_norm = "model.layers.{}.post_attention_layernorm";
    hf.feed_forward_norm = "model.layers.{}.pre_feedforward_layernorm";
    hf.feed_forward_output_norm = "model.layers.{}.post_feedforward_layernorm";
    f.gguf_names.attention_output_norm = "blk.{}.post_attention_norm";
    f.gguf_names.feed_forward_output_norm = "blk.{}.post_ffw_norm";
    return f;
}

// Every Gemma: (1 + w) norms, sqrt(D) embeddings, GeGLU, head size 256, tied classifier.
FamilySpec gemma_row(const char* name, const char* model_type, const char* architecture) {
    return {.name = name,
            .hf_model_type = model_type,
            .gguf_architecture = architecture,
            .hf_names = hf_llama_names(),
            .gguf_names = gguf_llama_names(),
            .norm = NormKind::rms_offset_one,
            .scaled_embeddings = true,
            .default_activation = "gelu_pytorch_tanh",
            .qkv_biases = attention_bias_key,
            .o_bias = attention_bias_key,
            .default_head_dim = 256,
            .default_tied = true};
}

std::vector<FamilySpec> make_families() {
    const FamilySpec llama{.name = "llama",
                           .hf_model_type = "llama",
                           .gguf_architecture = "llama",
                           .hf_names = hf_llama_names(),
                           .gguf_names = gguf_llama_names(),
                           .gguf_rope = RopeStyle::interleaved,
                           .qkv_biases = attention_bias_key,
                           .o_bias = attention_bias_key,
                           .mlp_biases = mlp_bias_key,
                           .gguf_llama_rules = true};
    // GGUF: convert_hf_to_gguf.py writes MistralForCausalLM as architecture llama (LlamaModel),
    // without its window, which llama.cpp's llama does not apply: the llama row reads it.
    const FamilySpec mistral{.name = "mistral",
                             .hf_model_type = "mistral",
                             .hf_names = hf_llama_names(),
                             .windows = WindowRule::every_layer,
                             .default_window = 4096};
    // Ministral (8B-2410): Mistral's block, its sliding layers chosen by layer_types (every layer by
    // default); llama.cpp has no architecture of its own for it.
    FamilySpec ministral = mistral;
    ministral.name = "ministral", ministral.hf_model_type = "ministral", ministral.reads_layer_types = true;
    // GGUF: llama.cpp's qwen2 turns heads by halves (the converter keeps q/k rows) and applies no window.
    const FamilySpec qwen2{.name = "qwen2",
                           .hf_model_type = "qwen2",
                           .gguf_architecture = "qwen2",
                           .hf_names = hf_llama_names(),
                           .gguf_names = gguf_llama_names(),
                           .windows = WindowRule::from_layer,
                           .default_window = 4096,
                           .qkv_biases = always_biased,
                           .reads_layer_types = true};
    const FamilySpec qwen3 = with_qk_norm({.name = "qwen3",
                                           .hf_model_type = "qwen3",
                                           .gguf_architecture = "qwen3",
                                           .hf_names = hf_llama_names(),
                                           .gguf_names = gguf_llama_names(),
                                           .windows = WindowRule::from_layer,
                                           .default_window = 4096,
                                           .qkv_biases = attention_bias_key,
                                           .o_bias = attention_bias_key,
                                           .default_head_dim = 128,
                                           .reads_layer_types = true});
    // Gemma 1: Gemma 2 without soft-caps, post-norms and query_pre_attn_scalar (modeling_gemma).
    FamilySpec gemma = gemma_row("gemma", "gemma", "gemma");
    gemma.gelu_means_tanh = true;
    const std::vector<std::string> gemma_keys = {"attn_logit_softcapping", "final_logit_softcapping",
                                                 "query_pre_attn_scalar"};
    FamilySpec gemma2 = with_sandwich_norms(gemma_row("gemma2", "gemma2", "gemma2"));
    gemma2.reads_hidden_activation = true;
    gemma2.score_scale = ScoreScale::query_pre_attn_scalar;
    gemma2.windows = WindowRule::alternating, gemma2.default_window = 4096;
    gemma2.softcaps = true, gemma2.default_attn_softcap = 50.0, gemma2.default_final_softcap = 30.0;
    gemma2.gguf_wide_scale_layers = 46;
    gemma2.reads_layer_types = true, gemma2.implemented_keys = gemma_keys;
    FamilySpec gemma3 = with_qk_norm(with_sandwich_norms(gemma_row("gemma3", "gemma3_text", "gemma3")));
    gemma3.reads_hidden_activation = true;
    gemma3.score_scale = ScoreScale::query_pre_attn_scalar;
    gemma3.windows = WindowRule::pattern, gemma3.default_window = 4096;
    gemma3.gguf_window_required = true, gemma3.gguf_window_pattern = 6;
    gemma3.local_rope_base = 10000.0;
    gemma3.default_rope_base = 1000000.0;
    gemma3.softcaps = true, gemma3.hf_attn_softcap = false;
    gemma3.gguf_wide_scale_layers = 62;
    gemma3.reads_layer_types = true, gemma3.implemented_keys = gemma_keys;
    FamilySpec phi3{.name = "phi3",
                    .hf_model_type = "phi3",
                    .gguf_architecture = "phi3",
                    .hf_names = hf_llama_names(),
                    .gguf_names = gguf_llama_names(),
                    .partial_rotary = true,
                    .windows = WindowRule::every_layer,
                    .default_epsilon = 1e-5};
    for (DecoderTensorNames* names : {&phi3.hf_names, &phi3.gguf_names})  // fused: no q, k, v, gate, up of their own
        names->q = names->k = names->v = names->gate = names->up = "";
    phi3.hf_names.qkv = "model.layers.{}.self_attn.qkv_proj",
    phi3.hf_names.gate_up = "model.layers.{}.mlp.gate_up_proj";
    phi3.gguf_names.qkv = "blk.{}.attn_qkv", phi3.gguf_names.gate_up = "blk.{}.ffn_up";
    // StarCoder 2: LayerNorms with biases, a plain GELU (tanh) MLP c_fc / c_proj, every projection
    // biased as use_bias says, a window on every layer when sliding_window is set (GGUF: none, as
    // llama.cpp runs starcoder2).
    FamilySpec starcoder2{.name = "starcoder2",
                          .hf_model_type = "starcoder2",
                          .gguf_architecture = "starcoder2",
                          .hf_names = hf_llama_names(),
                          .gguf_names = gguf_llama_names(),
                          .norm = NormKind::layer_norm,
                          .feed_forward = FeedForwardKind::plain,
                          .default_activation = "gelu_pytorch_tanh",
                          .windows = WindowRule::every_layer,
                          .gguf_windowless = true,
                          .qkv_biases = use_bias_key,
                          .o_bias = use_bias_key,
                          .mlp_biases = use_bias_key,
                          .default_epsilon = 1e-5,
                          .default_tied = true};
    starcoder2.hf_names.gate = starcoder2.gguf_names.gate = "";
    starcoder2.hf_names.up = "model.layers.{}.mlp.c_fc", starcoder2.hf_names.down = "model.layers.{}.mlp.c_proj";
    // SmolLM3: Llama's block, no RoPE on every fourth layer (no_rope_layers), windows as layer_types say.
    FamilySpec smollm3{.name = "smollm3",
                       .hf_model_type = "smollm3",
                       .hf_names = hf_llama_names(),
                       .windows = WindowRule::no_rope,
                       .qkv_biases = attention_bias_key,
                       .o_bias = attention_bias_key,
                       .mlp_biases = mlp_bias_key,
                       .default_tied = true,
                       .reads_layer_types = true,
                       .reads_no_rope_layers = true};
    // StableLM (2): LayerNorms with biases, Llama's gated MLP, RoPE on a quarter of each head by
    // default, q/k/v biases as use_qkv_bias says, parallel blocks as use_parallel_residual says (GGUF:
    // blocks without ffn_norm); the per-head q/k LayerNorms of StableLM 2 12B (qk_layernorm) are refused.
    const FamilySpec stablelm{.name = "stablelm",
                              .hf_model_type = "stablelm",
                              .gguf_architecture = "stablelm",
                              .hf_names = hf_llama_names(),
                              .gguf_names = gguf_llama_names(),
                              .norm = NormKind::layer_norm,
                              .partial_rotary = true,
                              .default_rotary_fraction = 0.25,
                              .head_size_of_width = true,
                              .reads_parallel_residual = true,
                              .qkv_biases = {&HfConfig::use_qkv_bias, "use_qkv_bias"},
                              .default_epsilon = 1e-5};
    // OLMo (1): Llama's block with LayerNorms that have no weights or biases, epsilon 1e-5 whatever
    // config.json says (OlmoLayerNorm); clip_qkv is refused. GGUF: the converter permutes q/k rows,
    // as for llama, and writes the epsilon.
    const FamilySpec olmo{.name = "olmo",
                          .hf_model_type = "olmo",
                          .gguf_architecture = "olmo",
                          .hf_names = hf_llama_names(),
                          .gguf_names = gguf_llama_names(),
                          .norm = NormKind::layer_norm,
                          .parameterless_norms = true,
                          .gguf_rope = RopeStyle::interleaved,
                          .qkv_biases = attention_bias_key,
                          .o_bias = attention_bias_key,
                          .default_epsilon = 1e-5,
                          .fixed_epsilon = true};
    // OLMo 2: RMSNorms after attention and feed-forward only (post_attention_layernorm and
    // post_feedforward_layernorm, none before them), q/k norms over each token's whole projection,
    // epsilon 1e-5 by default. GGUF: rows as they are (half-split RoPE), and OLMo 3's sliding window
    // (written as olmo2) refused.
    FamilySpec olmo2 = with_qk_norm({.name = "olmo2",
                                     .hf_model_type = "olmo2",
                                     .gguf_architecture = "olmo2",
                                     .hf_names = hf_llama_names(),
                                     .gguf_names = gguf_llama_names(),
                                     .residual = ResidualLayout::post_sublayer,
                                     .gguf_windowless = true,
                                     .qkv_biases = attention_bias_key,
                                     .o_bias = attention_bias_key,
                                     .default_epsilon = 1e-5},
                                    QkNorm::across_heads);
    olmo2.hf_names.attention_norm = olmo2.hf_names.feed_forward_norm = "";
    olmo2.hf_names.attention_output_norm = "model.layers.{}.post_attention_layernorm";
    olmo2.hf_names.feed_forward_output_norm = "model.layers.{}.post_feedforward_layernorm";
    olmo2.gguf_names.attention_norm = olmo2.gguf_names.feed_forward_norm = "";
    olmo2.gguf_names.attention_output_norm = "blk.{}.post_attention_norm";
    olmo2.gguf_names.feed_forward_output_norm = "blk.{}.post_ffw_norm";
    // Granite (3.x): Llama's block with four multipliers: embeddings (embedding_multiplier), scores
    // (attention_multiplier, 1 by default, in place of 1 / sqrt(d_h)), each sublayer's output before
    // its residual add (residual_multiplier), logits (divided by logits_scaling). GGUF: the converter
    // permutes q/k rows, as for llama, and writes them as embedding_scale, attention.scale,
    // residual_scale and logit_scale (llama.cpp: 1 / sqrt(d_h) without attention.scale).
    FamilySpec granite = llama;
    granite.name = granite.hf_model_type = granite.gguf_architecture = "granite";
    granite.gguf_llama_rules = false;
    granite.reads_multipliers = true, granite.score_scale = ScoreScale::attention_multiplier;
    granite.implemented_keys = {"embedding_multiplier", "attention_multiplier", "residual_multiplier",
                                "logits_scaling"};
    // Cohere (Command R, Aya 23): parallel blocks from the one input_layernorm, LayerNorms with a
    // weight and no bias, RoPE on interleaved pairs (its rotate_half and repeat_interleave), logits
    // times logit_scale (0.0625 by default), a tied classifier; q/k/v/o biases as attention_bias
    // says; the per-head q/k LayerNorms of Command R+ (use_qk_norm) are refused. GGUF: command-r,
    // rows as they are (llama.cpp's rope type is NORM, interleaved), logit_scale required.
    const FamilySpec cohere{.name = "cohere",
                            .hf_model_type = "cohere",
                            .gguf_architecture = "command-r",
                            .hf_names = hf_llama_names(),
                            .gguf_names = gguf_llama_names(),
                            .norm = NormKind::layer_norm,
                            .layer_norm_biases = false,
                            .residual = ResidualLayout::parallel,
                            .reads_logit_scale = true,
                            .default_logit_scale = 0.0625,
                            .hf_rope = RopeStyle::interleaved,
                            .gguf_rope = RopeStyle::interleaved,
                            .qkv_biases = attention_bias_key,
                            .o_bias = attention_bias_key,
                            .default_epsilon = 1e-5,
                            .default_tied = true};
    // GPT-Neo (TinyStories, GPT-Neo 125M-2.7B): GPT-2's block (LayerNorms with biases, a plain
    // MLP c_fc / c_proj, learned positions, a tied classifier) with separate q/k/v projections
    // without biases, unscaled scores and a window of window_size keys on the layers
    // attention_types calls local; intermediate_size 4 D when null. llama.cpp has no GPT-Neo.
    FamilySpec gpt_neo{.name = "gpt_neo",
                       .hf_model_type = "gpt_neo",
                       .norm = NormKind::layer_norm,
                       .feed_forward = FeedForwardKind::plain,
                       .default_activation = "gelu_new",
                       .score_scale = ScoreScale::none,
                       .windows = WindowRule::local_layers,
                       .default_window = 256,
                       .o_bias = always_biased,
                       .mlp_biases = always_biased,
                       .default_ffn_factor = 4,
                       .default_epsilon = 1e-5,
                       .default_tied = true};
    gpt_neo.hf_names = gpt2_names();
    gpt_neo.hf_names.q = "transformer.h.{}.attn.attention.q_proj",
    gpt_neo.hf_names.k = "transformer.h.{}.attn.attention.k_proj";
    gpt_neo.hf_names.v = "transformer.h.{}.attn.attention.v_proj",
    gpt_neo.hf_names.o = "transformer.h.{}.attn.attention.out_proj";
    // OPT (125m-66b): q/k/v/out_proj and fc1/fc2 with biases as enable_bias says, LayerNorms with
    // biases (epsilon 1e-5: nn.LayerNorm's, config.json has no key), a plain ReLU MLP, learned positions
    // offset by 2, before-norms or (do_layer_norm_before false: OPT-350m) norms after each residual add
    // and no final norm, a tied classifier. llama.cpp has no OPT.
    FamilySpec opt{.name = "opt",
                   .hf_model_type = "opt",
                   .norm = NormKind::layer_norm,
                   .feed_forward = FeedForwardKind::plain,
                   .default_activation = "relu",
                   .qkv_biases = enable_bias_key,
                   .o_bias = enable_bias_key,
                   .mlp_biases = enable_bias_key,
                   .position_offset = 2,
                   .reads_layer_norm_before = true,
                   .default_epsilon = 1e-5,
                   .fixed_epsilon = true,
                   .default_tied = true};
    opt.hf_names = {.q = "model.decoder.layers.{}.self_attn.q_proj",
                    .k = "model.decoder.layers.{}.self_attn.k_proj",
                    .v = "model.decoder.layers.{}.self_attn.v_proj",
                    .o = "model.decoder.layers.{}.self_attn.out_proj",
                    .attention_norm = "model.decoder.layers.{}.self_attn_layer_norm",
                    .feed_forward_norm = "model.decoder.layers.{}.final_layer_norm",
                    .up = "model.decoder.layers.{}.fc1",
                    .down = "model.decoder.layers.{}.fc2",
                    .embedding = "model.decoder.embed_tokens",
                    .final_norm = "model.decoder.final_layer_norm",
                    .classifier = "lm_head",
                    .position_embedding = "model.decoder.embed_positions"};
    // GPTBigCode (SantaCoder, StarCoder 1, TinyStarCoder): GPT-2's block with nn.Linear layers, one
    // key/value head (multi_query), [q; k; v] in c_attn, every projection biased, learned positions,
    // scale_attn_weights, n_inner 4 D when null, a tied classifier. (GGUF starcoder: not read yet.)
    FamilySpec gpt_bigcode{.name = "gpt_bigcode",
                           .hf_model_type = "gpt_bigcode",
                           .norm = NormKind::layer_norm,
                           .feed_forward = FeedForwardKind::plain,
                           .multi_query = true,
                           .reads_scale_attn_weights = true,
                           .default_activation = "gelu_pytorch_tanh",
                           .qkv_biases = always_biased,
                           .o_bias = always_biased,
                           .mlp_biases = always_biased,
                           .default_ffn_factor = 4,
                           .default_epsilon = 1e-5,
                           .default_tied = true};
    gpt_bigcode.hf_names = gpt2_names();
    gpt_bigcode.hf_names.qkv = "transformer.h.{}.attn.c_attn", gpt_bigcode.hf_names.o = "transformer.h.{}.attn.c_proj";
    return {llama,   mistral,  ministral, qwen2, qwen3,   gemma,  gemma2,  gemma3, phi3,       starcoder2,
            smollm3, stablelm, olmo,      olmo2, granite, cohere, gpt_neo, opt,    gpt_bigcode};
}

}  // namespace

const std::vector<FamilySpec>& decoder_families() {
    static const std::vector<FamilySpec> families = make_families();
    return families;
}

// The names gathered by hand, not through std::views: clang 14, which builds the fuzz targets,
// cannot compile libstdc++ 12's ranges.
std::vector<std::string> hf_decoder_model_types() {
    std::vector<std::string> names;
    for (const FamilySpec& family : decoder_families())
        if (!family.hf_model_type.empty()) names.push_back(family.hf_model_type);
    return names;
}

std::vector<std::string> gguf_decoder_architectures() {
    std::vector<std::string> names;
    for (const FamilySpec& family : decoder_families())
        if (!family.gguf_architecture.empty()) names.push_back(family.gguf_architecture);
    return names;
}

const FamilySpec* family_of_model_type(const std::string& model_type) {
    for (const FamilySpec& family : decoder_families())
        if (!family.hf_model_type.empty() && family.hf_model_type == model_type) return &family;
    return nullptr;
}

const FamilySpec* family_of_architecture(const std::string& architecture) {
    for (const FamilySpec& family : decoder_families())
        if (!family.gguf_architecture.empty() && family.gguf_architecture == architecture) return &family;
    return nullptr;
}

void set_qk_norm(const FamilySpec& family, double epsilon, LayerWeights& layer) {
    if (family.qk_norm == QkNorm::none) return;
    layer.qk_norm_epsilon = epsilon;
    layer.qk_norm_offset = family.norm == NormKind::rms_offset_one ? 1.0f : 0.0f;
    layer.qk_norm_across_heads = family.qk_norm == QkNorm::across_heads;
}

bool layer_slides(WindowRule rule, int64_t layer, int64_t first_sliding, int64_t pattern) {
    switch (rule) {
        case WindowRule::none:
            return false;
        case WindowRule::every_layer:
            return true;
        case WindowRule::from_layer:
            return layer >= first_sliding;
        case WindowRule::alternating:
            return layer % 2 == 0;
        case WindowRule::pattern:
            return (layer + 1) % pattern != 0;
        case WindowRule::no_rope:       // which layers have no RoPE is config.json's (hf_llama_checkpoint.cpp)
        case WindowRule::local_layers:  // which layers are local is config.json's attention_types
            return false;
    }
    return false;
}

std::string block_tensor(const std::string& pattern, int64_t layer, const char* suffix) {
    return fmt::format("{}{}", fmt::format(fmt::runtime(pattern), layer), suffix);
}

}  // namespace attn_viz
