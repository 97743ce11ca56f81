// Random Hugging Face folders of the decoder families (scripts/reference_hf_llama.py for qwen2, qwen3
// and phi3, reference_hf_gemma.py for gemma2 and gemma3_text) converted to GGUF as llama.cpp's
// convert_hf_to_gguf.py does (Qwen3Model, Gemma2Model, Gemma3Model, Phi3MiniModel): TextModel's
// keys plus each class's own, tensors renamed by gguf-py's tensor map and left as they are (no q/k
// permutation: llama.cpp runs these with NEOX RoPE), except Gemma's "*norm.weight" plus 1. The
// folders have no tokenizer.model: a stand-in SentencePiece vocabulary of the embedding's size
// takes its place (so the CLI opens the file; Gemma's with Gemma's special ids), and token_embd keeps every row
// (Gemma3Model would cut it to the real vocabulary).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gguf_transformer_conversion.hpp"

namespace test_support {

// general.architecture of a folder's model_type.
inline std::string gguf_architecture_of(const std::string& model_type) {
    return model_type == "gemma3_text" ? "gemma3" : model_type;
}

// tokenizer.ggml.* of a SentencePiece ("llama") vocabulary. Llama's order: <unk>, <s>, </s>, then
// normal pieces "\u2581w<id>". Gemma's (gemma): <pad>, <eos>, <bos>, <unk> with BOS 2, EOS 1 and
// add_space_prefix false, as Gemma2Model writes it, then "\u2581", "a", "b", "c" and the merges
// "ab", "abc", "\u2581a" (scores -2, -1, -3: "abc abc" is <bos> abc \u2581 abc without a prefix),
// then "\u2581w<id>".
inline void add_stand_in_vocabulary(GgufBuilder& b, int64_t vocab_size, bool gemma) {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    std::vector<float> scores(3, 0.0f);
    if (gemma) {
        tokens = {"<pad>",
                  "<eos>",
                  "<bos>",
                  "<unk>",
                  "\xe2\x96\x81",
                  "a",
                  "b",
                  "c",
                  "ab",
                  "abc",
                  "\xe2\x96\x81"
                  "a"};
        types = {3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1};
        scores = {0, 0, 0, 0, -10, -10, -10, -10, -2, -1, -3};
    }
    for (auto id = static_cast<int64_t>(tokens.size()); id < vocab_size; ++id)
        tokens.push_back("\xe2\x96\x81w" + std::to_string(id)), types.push_back(1), scores.push_back(-20.0f);
    b.add_string("tokenizer.ggml.model", "llama");
    b.add_string_array("tokenizer.ggml.tokens", tokens);
    b.add_f32_array("tokenizer.ggml.scores", scores);
    b.add_i32_array("tokenizer.ggml.token_type", types);
    b.add_u32("tokenizer.ggml.bos_token_id", gemma ? 2 : 1);
    b.add_u32("tokenizer.ggml.eos_token_id", gemma ? 1 : 2);
    b.add_u32("tokenizer.ggml.unknown_token_id", gemma ? 3 : 0);
    if (gemma) b.add_bool("tokenizer.ggml.add_space_prefix", false);
}

// The folder's checkpoint written as `path` (F32 GGUF v3); `spoil` as in convert_folder.
inline void convert_decoder_folder(const std::string& folder, const std::string& path, const Spoil& spoil = {}) {
    const HfConfig hf = read_hf_config(folder + "/config.json");
    const SafetensorsShards source(folder);
    const std::string arch = gguf_architecture_of(hf.model_type);
    const bool gemma = arch == "gemma2" || arch == "gemma3", phi3 = arch == "phi3";
    GgufBuilder b;
    b.add_string("general.architecture", spoil.architecture.empty() ? arch : spoil.architecture);
    auto u32 = [&](const std::string& key, int64_t value) {
        const auto replaced = spoil.u32.find(arch + "." + key);
        b.add_u32(arch + "." + key, replaced != spoil.u32.end() ? replaced->second : static_cast<uint32_t>(value));
    };
    auto f32 = [&](const std::string& key, double value) {
        const auto replaced = spoil.f32.find(arch + "." + key);
        b.add_f32(arch + "." + key, replaced != spoil.f32.end() ? replaced->second : static_cast<float>(value));
    };
    const int64_t d = *hf.d_model, heads = *hf.num_heads;
    u32("context_length", *hf.max_positions);
    u32("embedding_length", d);
    u32("feed_forward_length", *hf.intermediate_size);
    u32("block_count", *hf.num_layers);
    u32("attention.head_count", heads);
    u32("attention.head_count_kv", hf.num_kv_heads.value_or(heads));
    f32("attention.layer_norm_rms_epsilon", *hf.norm_epsilon);
    if (arch != "gemma2")
        f32("rope.freq_base", hf.rope_base.value_or(10000.0));  // Gemma2Model writes none (llama.cpp: 10000)
    if (hf.head_dim) {
        u32("attention.key_length", *hf.head_dim);
        u32("attention.value_length", *hf.head_dim);
    }
    if (arch == "gemma2") {
        if (hf.attn_logit_softcapping) f32("attn_logit_softcapping", *hf.attn_logit_softcapping);
        if (hf.final_logit_softcapping) f32("final_logit_softcapping", *hf.final_logit_softcapping);
        u32("attention.sliding_window", *hf.sliding_window);
    }
    if (arch == "gemma3") {
        if (hf.final_logit_softcapping.value_or(0) != 0) f32("final_logit_softcapping", *hf.final_logit_softcapping);
        u32("attention.sliding_window", *hf.sliding_window);
        if (hf.rope_scaling == "linear") {  // TextModel's rope_scaling keys
            b.add_string(arch + ".rope.scaling.type", "linear");
            f32("rope.scaling.factor", hf.rope_scaling_parameters.factor);
        }
    }
    if (phi3) {
        const double fraction = hf.rotary_fraction.value_or(1.0);
        u32("rope.dimension_count", static_cast<int64_t>(fraction * static_cast<double>(d)) / heads);
        u32("attention.sliding_window", hf.sliding_window.value_or(0));
    }
    add_stand_in_vocabulary(b, *hf.vocab_size, gemma);
    auto put = [&](const std::string& name, const Tensor& t) {
        if (!spoil.omit.count(name)) b.add_f32_tensor(name, {t.shape.rbegin(), t.shape.rend()}, t.data);
    };
    // Gemma's RMSNorm weights plus 1, in float32 as the converter adds it to the float32 tensor.
    auto put_norm = [&](const std::string& name, const std::string& hf_name) {
        Tensor t = source.load(hf_name);
        if (gemma)
            for (float& v : t.data) v += 1.0f;
        put(name, t);
    };
    for (const std::string& name : spoil.extra) b.add_f32_tensor(name, {2}, std::vector<float>{1.0f, 1.0f});
    put("token_embd.weight", source.load("model.embed_tokens.weight"));
    put_norm("output_norm.weight", "model.norm.weight");
    if (source.contains("lm_head.weight") && arch != "gemma2") put("output.weight", source.load("lm_head.weight"));
    for (int64_t l = 0; l < *hf.num_layers; ++l) {
        const std::string blk = "blk." + std::to_string(l) + ".", layer = "model.layers." + std::to_string(l) + ".";
        put_norm(blk + "attn_norm.weight", layer + "input_layernorm.weight");
        put_norm(blk + "ffn_norm.weight",
                 layer + (gemma ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight"));
        if (gemma) {
            put_norm(blk + "post_attention_norm.weight", layer + "post_attention_layernorm.weight");
            put_norm(blk + "post_ffw_norm.weight", layer + "post_feedforward_layernorm.weight");
        }
        std::vector<std::pair<std::string, std::string>> same = {{"attn_output", "self_attn.o_proj"},
                                                                 {"ffn_down", "mlp.down_proj"}};
        if (phi3) {
            same.insert(same.end(), {{"attn_qkv", "self_attn.qkv_proj"}, {"ffn_up", "mlp.gate_up_proj"}});
        } else {
            same.insert(same.end(), {{"attn_q", "self_attn.q_proj"},
                                     {"attn_k", "self_attn.k_proj"},
                                     {"attn_v", "self_attn.v_proj"},
                                     {"ffn_gate", "mlp.gate_proj"},
                                     {"ffn_up", "mlp.up_proj"}});
        }
        for (const auto& [name, hf_name] : same)
            for (const char* part : {".weight", ".bias"})
                if (source.contains(layer + hf_name + part))
                    put(blk + name + part, source.load(layer + hf_name + part));
        if (source.contains(layer + "self_attn.q_norm.weight")) {
            put_norm(blk + "attn_q_norm.weight", layer + "self_attn.q_norm.weight");
            put_norm(blk + "attn_k_norm.weight", layer + "self_attn.k_norm.weight");
        }
    }
    write_text(path, b.bytes());
}

}  // namespace test_support
