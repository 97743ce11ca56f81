// Random Hugging Face folders of scripts/reference_hf_transformer.py converted to GGUF as
// llama.cpp's convert_hf_to_gguf.py does (GPT2Model: Conv1D weights transposed, output = a copy of
// token_embd; GPTNeoXModel: the per-head interleaved query_key_value rows regrouped as all q, all
// k, all v; BertModel: names only, and a folder's WordPiece tokenizer.json in llama.cpp's spelling),
// and the check that two ModelWeights are the same.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_transformer.hpp"
#include "hf_config.hpp"
#include "hf_reference_folder.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "model_weights.hpp"
#include "safetensors_shards.hpp"
#include "support.hpp"

namespace test_support {

using namespace attn_viz;

// What a test changes in the conversion: tensors left out, metadata values replaced.
struct Spoil {
    std::set<std::string> omit;
    std::map<std::string, uint32_t> u32;
    std::string architecture;     // "" = the family's
    bool causal = false;          // BERT's bert.attention.causal
    std::set<std::string> extra;  // [2] tensors added that the conversion of these folders never writes (decoders)
    std::map<std::string, float> f32 = {};  // float metadata replaced (decoders), by full key
};

// BERT (BertModel): nn.Linear weights as they are ([out, in]), q, k, v separate, the token type
// table whole, no pooler; `put` / `get` / `put_norm` as in convert_folder.
template <typename Put, typename Get, typename PutNorm>
void convert_bert_tensors(int64_t layers, const Put& put, const Get& get, const PutNorm& put_norm) {
    put("token_embd.weight", get("embeddings.word_embeddings.weight"));
    put("position_embd.weight", get("embeddings.position_embeddings.weight"));
    put("token_types.weight", get("embeddings.token_type_embeddings.weight"));
    put_norm("token_embd_norm", "embeddings.LayerNorm");
    for (int64_t l = 0; l < layers; ++l) {
        const std::string blk = "blk." + std::to_string(l) + ".", layer = "encoder.layer." + std::to_string(l) + ".";
        const std::pair<const char*, const char*> linears[] = {
            {"attn_q", "attention.self.query"}, {"attn_k", "attention.self.key"},
            {"attn_v", "attention.self.value"}, {"attn_output", "attention.output.dense"},
            {"ffn_up", "intermediate.dense"},   {"ffn_down", "output.dense"}};
        for (const auto& [name, hf_name] : linears)
            for (const char* part : {".weight", ".bias"}) put(blk + name + part, get(layer + hf_name + part));
        put_norm(blk + "attn_output_norm", layer + "attention.output.LayerNorm");
        put_norm(blk + "layer_output_norm", layer + "output.LayerNorm");
    }
}

// A WordPiece tokenizer.json's vocabulary as BertModel.set_vocab writes it for `vocab_size`
// embedding rows: ids it lacks as "[PAD<id>]" (unused, 5), its special added tokens control (3),
// the rest normal (1); every non-control token spelled with "\u2581" in front, or without its
// "##"; the special ids by name.
inline void add_wordpiece_vocabulary(GgufBuilder& b, const std::string& tokenizer_json, int64_t vocab_size) {
    const nlohmann::json doc = nlohmann::json::parse(read_text(tokenizer_json));
    std::map<int64_t, std::string> by_id;
    for (const auto& [token, id] : doc["model"]["vocab"].items()) by_id[id.get<int64_t>()] = token;
    std::set<int64_t> special;
    for (const nlohmann::json& added : doc["added_tokens"])
        if (added.value("special", false)) special.insert(added["id"].get<int64_t>());
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    for (int64_t id = 0; id < vocab_size; ++id) {
        const auto found = by_id.find(id);
        const std::string token = found == by_id.end() ? "[PAD" + std::to_string(id) + "]" : found->second;
        types.push_back(found == by_id.end() ? 5 : special.count(id) ? 3 : 1);
        tokens.push_back(types.back() == 3         ? token
                         : token.starts_with("##") ? token.substr(2)
                                                   : "\xe2\x96\x81" + token);
    }
    b.add_string("tokenizer.ggml.model", "bert");
    b.add_string_array("tokenizer.ggml.tokens", tokens);
    b.add_i32_array("tokenizer.ggml.token_type", types);
    for (const auto& [key, name] : {std::pair{"unknown_token_id", "[UNK]"}, std::pair{"cls_token_id", "[CLS]"},
                                    std::pair{"seperator_token_id", "[SEP]"}, std::pair{"padding_token_id", "[PAD]"}})
        b.add_u32(std::string("tokenizer.ggml.") + key, doc["model"]["vocab"][name].get<uint32_t>());
}

// The folder's checkpoint written as `path` (F32 GGUF v3) with llama.cpp's names and layout.
inline void convert_folder(const std::string& folder, const std::string& path, const Spoil& spoil = {}) {
    const HfConfig hf = read_hf_config(folder + "/config.json");
    const SafetensorsShards source(folder);
    const bool neox = hf.model_type == "gpt_neox", bert = hf.model_type == "bert";
    const std::string arch = neox ? "gptneox" : bert ? "bert" : "gpt2";
    const int64_t d = *hf.d_model, heads = *hf.num_heads, d_h = d / heads;
    GgufBuilder b;
    b.add_string("general.architecture", spoil.architecture.empty() ? arch : spoil.architecture);
    auto u32 = [&](const std::string& key, int64_t value) {
        const auto replaced = spoil.u32.find(arch + "." + key);
        b.add_u32(arch + "." + key, replaced != spoil.u32.end() ? replaced->second : static_cast<uint32_t>(value));
    };
    u32("block_count", *hf.num_layers);
    u32("context_length", *hf.max_positions);
    u32("embedding_length", d);
    u32("feed_forward_length",
        hf.intermediate_size.value_or(4 * d));  // the converter writes 4 D for GPT-2; the folders set n_inner
    u32("attention.head_count", heads);
    b.add_f32(arch + ".attention.layer_norm_epsilon",
              static_cast<float>(hf.norm_epsilon.value_or(bert ? 1e-12 : 1e-5)));
    if (bert) b.add_bool("bert.attention.causal", spoil.causal);
    if (bert && std::filesystem::exists(folder + "/tokenizer.json"))
        add_wordpiece_vocabulary(b, folder + "/tokenizer.json", *hf.vocab_size);
    for (const auto& [key, value] : spoil.u32)
        if (key == arch + ".attention.head_count_kv") b.add_u32(key, value);
    if (neox) {
        u32("rope.dimension_count", static_cast<int64_t>(static_cast<double>(d_h) * hf.rotary_fraction.value_or(0.25)));
        b.add_bool("gptneox.use_parallel_residual", hf.parallel_residual.value_or(true));
        if (hf.rope_base) b.add_f32("gptneox.rope.freq_base", static_cast<float>(*hf.rope_base));
    }
    const std::string prefix = neox   ? (source.contains("gpt_neox.embed_in.weight") ? "gpt_neox." : "")
                               : bert ? (source.contains("bert.embeddings.word_embeddings.weight") ? "bert." : "")
                                      : (source.contains("transformer.wte.weight") ? "transformer." : "");
    // A row-major [a, b] tensor is stored with dims [b, a].
    auto put = [&](const std::string& name, const Tensor& t) {
        if (!spoil.omit.count(name)) b.add_f32_tensor(name, {t.shape.rbegin(), t.shape.rend()}, t.data);
    };
    auto get = [&](const std::string& name) { return source.load(prefix + name); };
    // LayerNorm weight and bias, or BERT's older gamma and beta (the converter maps both).
    auto put_norm = [&](const std::string& name, const std::string& hf_name) {
        const bool gamma_beta = source.contains(prefix + hf_name + ".gamma");
        put(name + ".weight", get(hf_name + (gamma_beta ? ".gamma" : ".weight")));
        put(name + ".bias", get(hf_name + (gamma_beta ? ".beta" : ".bias")));
    };
    // GPT-NeoX: rows (3 h + part) d_h .. of each head to part D + h d_h.
    auto regroup_qkv = [&](const Tensor& t) {
        Tensor out(t.shape);
        const int64_t cols = t.rank() == 2 ? t.dim(1) : 1;
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t part = 0; part < 3; ++part)
                std::copy_n(t.ptr() + (3 * h + part) * d_h * cols, d_h * cols, out.ptr() + (part * d + h * d_h) * cols);
        return out;
    };
    if (bert) {
        convert_bert_tensors(*hf.num_layers, put, get, put_norm);
        write_text(path, b.bytes());
        return;
    }
    put("token_embd.weight", get(neox ? "embed_in.weight" : "wte.weight"));
    if (!neox) put("position_embd.weight", get("wpe.weight"));
    for (int64_t l = 0; l < *hf.num_layers; ++l) {
        const std::string blk = "blk." + std::to_string(l) + ".",
                          layer = (neox ? "layers." : "h.") + std::to_string(l) + ".";
        if (neox) {
            put_norm(blk + "attn_norm", layer + "input_layernorm");
            put(blk + "attn_qkv.weight", regroup_qkv(get(layer + "attention.query_key_value.weight")));
            put(blk + "attn_qkv.bias", regroup_qkv(get(layer + "attention.query_key_value.bias")));
            put(blk + "attn_output.weight", get(layer + "attention.dense.weight"));
            put(blk + "attn_output.bias", get(layer + "attention.dense.bias"));
            put_norm(blk + "ffn_norm", layer + "post_attention_layernorm");
            put(blk + "ffn_up.weight", get(layer + "mlp.dense_h_to_4h.weight"));
            put(blk + "ffn_up.bias", get(layer + "mlp.dense_h_to_4h.bias"));
            put(blk + "ffn_down.weight", get(layer + "mlp.dense_4h_to_h.weight"));
            put(blk + "ffn_down.bias", get(layer + "mlp.dense_4h_to_h.bias"));
        } else {  // Conv1D [in, out] -> [out, in]
            put_norm(blk + "attn_norm", layer + "ln_1");
            put(blk + "attn_qkv.weight", transposed(get(layer + "attn.c_attn.weight")));
            put(blk + "attn_qkv.bias", get(layer + "attn.c_attn.bias"));
            put(blk + "attn_output.weight", transposed(get(layer + "attn.c_proj.weight")));
            put(blk + "attn_output.bias", get(layer + "attn.c_proj.bias"));
            put_norm(blk + "ffn_norm", layer + "ln_2");
            put(blk + "ffn_up.weight", transposed(get(layer + "mlp.c_fc.weight")));
            put(blk + "ffn_up.bias", get(layer + "mlp.c_fc.bias"));
            put(blk + "ffn_down.weight", transposed(get(layer + "mlp.c_proj.weight")));
            put(blk + "ffn_down.bias", get(layer + "mlp.c_proj.bias"));
        }
    }
    put_norm("output_norm", neox ? "final_layer_norm" : "ln_f");
    const char* head = neox ? "embed_out.weight" : "lm_head.weight";
    if (source.contains(head))
        put("output.weight", source.load(head));
    else if (!neox)
        put("output.weight", get("wte.weight"));  // GPT2Model's copy of the tied embedding
    write_text(path, b.bytes());
}

// Equal, or within `tolerance` (Gemma's norms: GGUF stores 1 + w rounded to float32).
inline void check_same(const Tensor& a, const Tensor& b, const std::string& what, double tolerance = 0.0) {
    CAPTURE(what);
    REQUIRE(a.shape == b.shape);
    if (tolerance == 0.0)
        CHECK(a.data == b.data);
    else
        CHECK(max_abs_diff(a, b) <= tolerance);
}

inline void check_same_layer(const LayerWeights& a, const LayerWeights& b, const std::string& where,
                             double norm_tolerance = 0.0) {
    CAPTURE(where);
    auto sizes = [](const LayerWeights& w) {
        return std::tuple(w.d_model, w.num_heads, w.num_kv_heads, w.d_head, w.causal, w.rope, w.rope_dims,
                          w.sliding_window, w.rope_scaling.kind, w.qk_norm_offset);
    };
    CHECK(sizes(a) == sizes(b));
    CHECK(a.rope_base == doctest::Approx(b.rope_base));
    CHECK(a.rope_scaling.factor == doctest::Approx(b.rope_scaling.factor));
    CHECK(a.score_scale == doctest::Approx(b.score_scale));
    CHECK(a.logit_softcap == doctest::Approx(b.logit_softcap));
    CHECK(a.qk_norm_epsilon == doctest::Approx(b.qk_norm_epsilon));  // float32 in GGUF
    check_same(a.q_norm, b.q_norm, where + " q_norm", norm_tolerance);
    check_same(a.k_norm, b.k_norm, where + " k_norm", norm_tolerance);
    const std::pair<const Tensor*, const Tensor*> tensors[] = {{&a.w_q, &b.w_q}, {&a.w_k, &b.w_k}, {&a.w_v, &b.w_v},
                                                               {&a.w_o, &b.w_o}, {&a.b_q, &b.b_q}, {&a.b_k, &b.b_k},
                                                               {&a.b_v, &b.b_v}, {&a.b_o, &b.b_o}};
    for (const auto& [x, y] : tensors) check_same(*x, *y, where + " projection");
}

// Every field of the two models is the same (norm weights within `norm_tolerance`).
inline void check_same_model(const ModelWeights& gguf, const ModelWeights& hf, double norm_tolerance = 0.0) {
    const ModelConfig &a = gguf.config, &b = hf.config;
    auto fields = [](const ModelConfig& c) {
        return std::tuple(c.architecture, c.d_model, c.ffn_dim, c.vocab_size, c.n_layers, c.n_heads, c.n_kv_heads,
                          c.head_dim, c.max_tokens, c.norm, c.feed_forward, c.residual, c.activation,
                          c.embedding_scale);  // classifiers compared as tensors (GPT2Model copies a tied one)
    };
    CHECK(fields(a) == fields(b));
    CHECK(a.norm_epsilon == doctest::Approx(b.norm_epsilon));  // float32 in GGUF
    CHECK(a.rope_base == doctest::Approx(b.rope_base));
    CHECK(a.final_logit_softcap == doctest::Approx(b.final_logit_softcap));
    REQUIRE(gguf.blocks->n_layers() == hf.blocks->n_layers());
    for (int64_t l = 0; l < gguf.blocks->n_layers(); ++l) {
        const BlockWeights x = gguf.blocks->load(l), y = hf.blocks->load(l);
        const std::string where = "layer " + std::to_string(l);
        check_same_layer(x.attention, y.attention, where, norm_tolerance);
        for (const auto& [p, q] :
             {std::pair{&x.attention_norm, &y.attention_norm}, std::pair{&x.feed_forward_norm, &y.feed_forward_norm},
              std::pair{&x.attention_output_norm, &y.attention_output_norm},
              std::pair{&x.feed_forward_output_norm, &y.feed_forward_output_norm}}) {
            check_same(p->weight, q->weight, where + " norm", norm_tolerance);
            check_same(p->bias, q->bias, where + " norm");
        }
        check_same(x.w_in, y.w_in, where + " w_in");
        check_same(x.b_in, y.b_in, where + " b_in");
        check_same(x.w_up, y.w_up, where + " w_up");
        check_same(x.b_up, y.b_up, where + " b_up");
        check_same(x.w_out, y.w_out, where + " w_out");
        check_same(x.b_out, y.b_out, where + " b_out");
    }
    check_same(gguf.token_embedding, hf.token_embedding, "token_embedding");
    check_same(gguf.position_embedding, hf.position_embedding, "position_embedding");
    check_same(gguf.final_norm.weight, hf.final_norm.weight, "final_norm", norm_tolerance);
    check_same(gguf.final_norm.bias, hf.final_norm.bias, "final_norm");
    check_same(gguf.classifier_matrix(), hf.classifier_matrix(), "classifier");
    check_same(gguf.token_type_embedding, hf.token_type_embedding, "token_type_embedding");
    check_same(gguf.embedding_norm.weight, hf.embedding_norm.weight, "embedding_norm");
    check_same(gguf.embedding_norm.bias, hf.embedding_norm.bias, "embedding_norm");
}

// A random folder of reference_hf_transformer.py `arguments` made in `dir`, converted to
// dir/model.gguf and read back: its weights, checked to be the folder's.
inline ModelWeights converted_weights(const ScratchDir& dir, const std::string& arguments) {
    make_reference_folder(dir, "reference_hf_transformer.py", arguments);
    convert_folder(dir.path().string(), dir / "model.gguf");
    ModelWeights weights = read_gguf_transformer(GgufFile(dir / "model.gguf"));
    check_same_model(weights, read_hf_transformer_folder(dir.path().string()));
    return weights;
}

}  // namespace test_support
