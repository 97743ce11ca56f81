// GPT-2 and GPT-NeoX models from GGUF (read_gguf_transformer): random Hugging Face folders of
// scripts/reference_hf_transformer.py converted here to GGUF as llama.cpp's convert_hf_to_gguf.py
// does (GPT2Model: Conv1D weights transposed, output = a copy of token_embd; GPTNeoXModel: the
// per-head interleaved query_key_value rows regrouped as all q, all k, all v), then read both ways:
// the weights must be identical to the folder's, and the model's attention and logits those of the
// float64 reference. Hostile metadata and tensors.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "expect_input_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_transformer.hpp"
#include "hf_config.hpp"
#include "hf_reference_folder.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "safetensors_shards.hpp"
#include "support.hpp"
#include "transformer_model.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// What a test changes in the conversion: tensors left out, metadata values replaced.
struct Spoil {
    std::set<std::string> omit;
    std::map<std::string, uint32_t> u32;
    std::string architecture;  // "" = the family's
};

// The folder's checkpoint written as `path` (F32 GGUF v3) with llama.cpp's names and layout.
void convert_folder(const std::string& folder, const std::string& path, const Spoil& spoil = {}) {
    const HfConfig hf = read_hf_config(folder + "/config.json");
    const SafetensorsShards source(folder);
    const bool neox = hf.model_type == "gpt_neox";
    const std::string arch = neox ? "gptneox" : "gpt2";
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
    u32("feed_forward_length", hf.intermediate_size.value_or(4 * d));  // the converter writes 4 D for GPT-2; the folders set n_inner
    u32("attention.head_count", heads);
    b.add_f32(arch + ".attention.layer_norm_epsilon", static_cast<float>(hf.norm_epsilon.value_or(1e-5)));
    for (const auto& [key, value] : spoil.u32)
        if (key == arch + ".attention.head_count_kv") b.add_u32(key, value);
    if (neox) {
        u32("rope.dimension_count", static_cast<int64_t>(static_cast<double>(d_h) * hf.rotary_fraction.value_or(0.25)));
        b.add_bool("gptneox.use_parallel_residual", hf.parallel_residual.value_or(true));
        if (hf.rope_base) b.add_f32("gptneox.rope.freq_base", static_cast<float>(*hf.rope_base));
    }
    const std::string prefix = neox ? (source.contains("gpt_neox.embed_in.weight") ? "gpt_neox." : "")
                                    : (source.contains("transformer.wte.weight") ? "transformer." : "");
    // A row-major [a, b] tensor is stored with dims [b, a].
    auto put = [&](const std::string& name, const Tensor& t) {
        if (!spoil.omit.count(name)) b.add_f32_tensor(name, {t.shape.rbegin(), t.shape.rend()}, t.data);
    };
    auto get = [&](const std::string& name) { return source.load(prefix + name); };
    auto put_norm = [&](const std::string& name, const std::string& hf_name) {
        put(name + ".weight", get(hf_name + ".weight"));
        put(name + ".bias", get(hf_name + ".bias"));
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
    put("token_embd.weight", get(neox ? "embed_in.weight" : "wte.weight"));
    if (!neox) put("position_embd.weight", get("wpe.weight"));
    for (int64_t l = 0; l < *hf.num_layers; ++l) {
        const std::string blk = "blk." + std::to_string(l) + ".", layer = (neox ? "layers." : "h.") + std::to_string(l) + ".";
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
    if (source.contains(head)) put("output.weight", source.load(head));
    else if (!neox) put("output.weight", get("wte.weight"));  // GPT2Model's copy of the tied embedding
    write_text(path, b.bytes());
}

void check_same(const Tensor& a, const Tensor& b, const std::string& what) {
    CAPTURE(what);
    CHECK(a.shape == b.shape);
    CHECK(a.data == b.data);
}

void check_same_layer(const LayerWeights& a, const LayerWeights& b, const std::string& where) {
    CAPTURE(where);
    auto sizes = [](const LayerWeights& w) { return std::tuple(w.d_model, w.num_heads, w.num_kv_heads, w.d_head, w.causal, w.rope, w.rope_dims); };
    CHECK(sizes(a) == sizes(b));
    CHECK(a.rope_base == doctest::Approx(b.rope_base));
    const std::pair<const Tensor*, const Tensor*> tensors[] = {{&a.w_q, &b.w_q}, {&a.w_k, &b.w_k}, {&a.w_v, &b.w_v}, {&a.w_o, &b.w_o},
                                                               {&a.b_q, &b.b_q}, {&a.b_k, &b.b_k}, {&a.b_v, &b.b_v}, {&a.b_o, &b.b_o}};
    for (const auto& [x, y] : tensors) check_same(*x, *y, where + " projection");
}

// Every field of the two models is the same.
void check_same_model(const TransformerWeights& gguf, const TransformerWeights& hf) {
    const TransformerConfig &a = gguf.config, &b = hf.config;
    auto fields = [](const TransformerConfig& c) {
        return std::tuple(c.model_type, c.d_model, c.ffn_dim, c.vocab_size, c.num_layers, c.max_positions, c.post_norm, c.parallel_residual,
                          c.activation);
    };
    CHECK(fields(a) == fields(b));
    CHECK(a.norm_epsilon == doctest::Approx(b.norm_epsilon));  // float32 in GGUF
    REQUIRE(gguf.layers.size() == hf.layers.size());
    for (size_t l = 0; l < gguf.layers.size(); ++l) {
        const TransformerBlockWeights &x = gguf.layers[l], &y = hf.layers[l];
        const std::string where = "layer " + std::to_string(l);
        check_same_layer(x.attention, y.attention, where);
        for (const auto& [p, q] : {std::pair{&x.attention_norm, &y.attention_norm}, std::pair{&x.mlp_norm, &y.mlp_norm}}) {
            check_same(p->weight, q->weight, where + " norm");
            check_same(p->bias, q->bias, where + " norm");
        }
        check_same(x.w_in, y.w_in, where + " w_in");
        check_same(x.b_in, y.b_in, where + " b_in");
        check_same(x.w_out, y.w_out, where + " w_out");
        check_same(x.b_out, y.b_out, where + " b_out");
    }
    check_same(gguf.token_embedding, hf.token_embedding, "token_embedding");
    check_same(gguf.position_embedding, hf.position_embedding, "position_embedding");
    check_same(gguf.final_norm.weight, hf.final_norm.weight, "final_norm");
    check_same(gguf.final_norm.bias, hf.final_norm.bias, "final_norm");
    check_same(gguf.classifier, hf.classifier, "classifier");
    CHECK(gguf.token_type_embedding.empty());
    CHECK(gguf.embedding_norm.weight.empty());
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("GGUF gpt2 and gptneox files converted from HF folders read to the folders' weights and run to the reference forward") {
    const char* cases[] = {
        "--model-type gpt2 --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 53 --tokens 9",
        "--model-type gpt2 --prefix --d-model 15 --heads 1 --layers 1 --ffn 7 --vocab 19 --tokens 1 --lm-head separate",
        "--model-type gpt_neox --prefix --d-model 30 --heads 3 --layers 2 --ffn 41 --vocab 37 --tokens 13 --rotary-pct 0.4",
        "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 23 --vocab 29 --tokens 7 --sequential-residual --rotary-base 500 --lm-head tied",
    };
    OnednnBackend backend;
    for (const std::string arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_transformer.py", arguments);
        convert_folder(dir.path().string(), dir / "model.gguf");
        TransformerWeights weights = read_gguf_transformer(GgufFile(dir / "model.gguf"));
        check_same_model(weights, read_hf_transformer_folder(dir.path().string()));

        TransformerModel model(backend, std::move(weights));
        const ModelRun run = model.run(read_ids(dir / "ids.txt"));
        for (size_t l = 0; l < run.layers.size(); ++l)
            CHECK(max_abs_diff(run.layers[l].attention, read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))) < 1e-5);
        const Tensor expected_logits = read_npy(dir / "expected_logits.npy");
        CHECK(max_abs_diff(run.logits, expected_logits) < 1e-5 * magnitude(expected_logits));
    }
}

TEST_CASE("open_whole_model takes GGUF gpt2 and gptneox files as the folders' TransformerModel") {
    OnednnBackend backend;
    for (const std::string arguments : {"--model-type gpt2 --d-model 12 --heads 3 --layers 2 --ffn 17 --vocab 23 --tokens 6",
                                        "--model-type gpt_neox --d-model 16 --heads 2 --layers 3 --ffn 9 --vocab 31 --tokens 5"}) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_transformer.py", arguments);
        convert_folder(dir.path().string(), dir / "model.gguf");
        const std::unique_ptr<WholeModel> gguf = open_whole_model(backend, dir / "model.gguf");
        const std::unique_ptr<WholeModel> folder = open_whole_model(backend, dir.path().string());
        CHECK(gguf->description().architecture == folder->description().architecture);
        CHECK(gguf->description().n_layers == folder->description().n_layers);
        const std::vector<int> ids = read_ids(dir / "ids.txt");
        const ModelRun a = gguf->run(ids), b = folder->run(ids);
        // GGUF keeps the norm epsilon as float32: the runs agree to rounding, not bit for bit.
        for (size_t l = 0; l < a.layers.size(); ++l) CHECK(max_abs_diff(a.layers[l].attention, b.layers[l].attention) < 1e-6);
        CHECK(max_abs_diff(a.logits, b.logits) < 1e-5 * magnitude(b.logits));
    }
}

TEST_CASE("hostile GGUF gpt2 and gptneox files are refused naming the file and the key or tensor") {
    ScratchDir gpt2, neox;
    make_reference_folder(gpt2, "reference_hf_transformer.py", "--model-type gpt2 --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    make_reference_folder(neox, "reference_hf_transformer.py", "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    auto expect_refused = [](const ScratchDir& dir, const Spoil& spoil, const std::string& fragment) {
        CAPTURE(fragment);
        const std::string path = dir / "bad.gguf";
        convert_folder(dir.path().string(), path, spoil);
        expect_input_error([&] { read_gguf_transformer(GgufFile(path)); }, {"bad.gguf", fragment});
    };
    expect_refused(gpt2, {{}, {}, "bloom"}, "general.architecture is \"bloom\"; this reader takes GGUF models of architecture gpt2 or gptneox");
    expect_refused(gpt2, {{"blk.1.attn_qkv.weight"}, {}, ""}, "has no tensor \"blk.1.attn_qkv.weight\" (needed for a gpt2 model)");
    expect_refused(gpt2, {{"position_embd.weight"}, {}, ""}, "has no tensor \"position_embd.weight\"");
    expect_refused(gpt2, {{"blk.0.ffn_norm.bias"}, {}, ""}, "has no tensor \"blk.0.ffn_norm.bias\"");
    expect_refused(gpt2, {{}, {{"gpt2.feed_forward_length", 24}}, ""}, "tensor \"blk.0.ffn_up.weight\" has shape [20, 16], expected [24, 16]");
    expect_refused(gpt2, {{}, {{"gpt2.context_length", 1024}}, ""}, "tensor \"position_embd.weight\" has shape [64, 16], expected [1024, 16]");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count", 3}}, ""}, "gpt2.embedding_length 16 is not divisible by 3 heads");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count", 0}}, ""}, "gpt2.attention.head_count is 0, outside 1..2^24");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count_kv", 1}}, ""}, "gpt2.attention.head_count_kv differs from the head count");
    expect_refused(neox, {{}, {{"gptneox.rope.dimension_count", 3}}, ""}, "gptneox.rope.dimension_count 3 is not an even count");
    expect_refused(neox, {{}, {{"gptneox.rope.dimension_count", 10}}, ""}, "of at most the head size 8");
    expect_refused(neox, {{}, {{"gptneox.block_count", 3}}, ""}, "has no tensor \"blk.2.attn_qkv.weight\" (needed for a gptneox model)");
    expect_refused(neox, {{"output_norm.weight"}, {}, ""}, "has no tensor \"output_norm.weight\"");
}

}  // TEST_SUITE
