// The decoder families added to the Llama-family reader (family_table.hpp): Qwen3, Gemma 2,
// Gemma 3 text and Phi-3 random folders (one layer, one head, GQA, head sizes other than
// hidden / heads, T = 1, 7, 33 and past each sliding window) against the float64 forwards of
// scripts/reference_hf_llama.py (qwen3, phi3) and scripts/reference_hf_gemma.py, written from
// transformers' modeling code; the keys each family refuses.
#include <cmath>

#include <doctest/doctest.h>

#include "decoder_reference.hpp"
#include "expect_error.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// Replaces the first `from` in the folder's config.json by `to`.
void edit_config(const ScratchDir& dir, const std::string& from, const std::string& to) {
    std::string text = read_text(dir / "config.json");
    REQUIRE(text.find(from) != std::string::npos);
    write_text(dir / "config.json", text.replace(text.find(from), from.size(), to));
}

// Replaces `from` by `to` in the folder's config.json, expects read_hf_llama_folder to refuse it
// with a message holding `needles`, and puts `from` back.
void expect_refused(const ScratchDir& dir, const std::string& from, const std::string& to,
                    const std::vector<std::string>& needles) {
    CAPTURE(to);
    edit_config(dir, from, to);
    expect_error(
        ErrorKind::bad_input, [&] { read_hf_llama_folder(dir.path().string()); }, needles);
    edit_config(dir, to, from);
}

}  // namespace

TEST_SUITE("model") {

// Qwen3: q_norm / k_norm before RoPE, explicit head_dim, GQA, attention_bias, Qwen2's windows.
TEST_CASE("HF Qwen3 folders: attention and logits equal a float64 forward written from transformers' modeling_qwen3") {
    check_decoder_folders("reference_hf_llama.py",
                          {
                              "--model-type qwen3 --d-model 24 --heads 4 --kv-heads 2 --head-dim 10 --layers 2 --ffn "
                              "37 --vocab 53 --tokens 7",
                              "--model-type qwen3 --d-model 8 --heads 1 --kv-heads 1 --head-dim 6 --layers 1 --ffn 11 "
                              "--vocab 17 --tokens 1 --tied",
                              "--model-type qwen3 --d-model 16 --heads 4 --kv-heads 1 --head-dim 8 --layers 3 --ffn 20 "
                              "--vocab 30 --tokens 33 "
                              "--sliding-window 5 --use-sliding-window --max-window-layers 1 --attention-bias",
                              "--model-type qwen3 --d-model 16 --heads 2 --kv-heads 2 --head-dim 4 --layers 2 --ffn 20 "
                              "--vocab 30 --tokens 33 "
                              "--rope-format v5 --rope-theta 1000000 --eps 1e-6",
                          });
}

TEST_CASE("HF Qwen3 folders: missing q/k norms and keys Qwen3 does not have are refused naming file and key") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_llama.py",
        "--model-type qwen3 --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    const std::string config = dir / "config.json", type = "\"model_type\": \"qwen3\"";
    expect_refused(dir, type, type + ", \"attn_logit_softcapping\": 30.0",
                   {config,
                    "attn_logit_softcapping = 30.0 is not supported (attn-viz does not implement "
                    "attn_logit_softcapping for qwen3)"});
    expect_refused(dir, type, type + ", \"partial_rotary_factor\": 0.5",
                   {config, "partial_rotary_factor 0.5 is not supported for qwen3"});
    // A Llama folder called qwen3 (with head_dim: Qwen3's default is 128): no q/k norms.
    ScratchDir llama;
    make_reference_folder(
        llama, "reference_hf_llama.py",
        "--model-type llama --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    edit_config(llama, "\"model_type\": \"llama\"", "\"model_type\": \"qwen3\", \"head_dim\": 4");
    expect_error(ErrorKind::bad_input, [&] { read_hf_llama_folder(llama.path().string()); },
                 {"model.layers.0.self_attn.q_norm.weight"});
}

// Gemma 2: GeGLU, (1 + w) sandwich norms, sqrt(D) embeddings, query_pre_attn_scalar, attention and
// final soft-caps small enough to bend the scores, even layers sliding (or layer_types).
TEST_CASE(
    "HF Gemma 2 folders: attention and logits equal a float64 forward written from transformers' modeling_gemma2") {
    check_decoder_folders("reference_hf_gemma.py", {
                                                       "--model-type gemma2 --d-model 24 --heads 4 --kv-heads 2 "
                                                       "--head-dim 10 --layers 2 --ffn 37 --vocab 53 --tokens 7 "
                                                       "--attn-softcap 2 --final-softcap 3 --query-pre-attn-scalar 16",
                                                       "--model-type gemma2 --d-model 8 --heads 1 --kv-heads 1 "
                                                       "--head-dim 6 --layers 1 --ffn 11 --vocab 17 --tokens 1",
                                                       "--model-type gemma2 --d-model 16 --heads 4 --kv-heads 1 "
                                                       "--head-dim 8 --layers 3 --ffn 20 --vocab 30 --tokens 33 "
                                                       "--sliding-window 5 --attn-softcap 5 --final-softcap 30",
                                                       "--model-type gemma2 --d-model 16 --heads 2 --kv-heads 2 "
                                                       "--head-dim 4 --layers 2 --ffn 20 --vocab 30 --tokens 33 "
                                                       "--sliding-window 7 --layer-types --eps 1e-5",
                                                   });
}

// Gemma 3: Gemma 2's block without soft-caps, (1 + w) q/k norms, five sliding layers of six (here
// of three), the local RoPE base on sliding layers and rope_scaling on full ones only.
TEST_CASE(
    "HF Gemma 3 text folders: attention and logits equal a float64 forward written from transformers' "
    "modeling_gemma3") {
    check_decoder_folders(
        "reference_hf_gemma.py",
        {
            "--model-type gemma3_text --d-model 24 --heads 4 --kv-heads 2 --head-dim 10 --layers 2 --ffn 37 --vocab 53 "
            "--tokens 7 "
            "--query-pre-attn-scalar 24",
            "--model-type gemma3_text --d-model 8 --heads 1 --kv-heads 1 --head-dim 6 --layers 1 --ffn 11 --vocab 17 "
            "--tokens 1",
            "--model-type gemma3_text --d-model 16 --heads 4 --kv-heads 1 --head-dim 8 --layers 4 --ffn 20 --vocab 30 "
            "--tokens 33 "
            "--sliding-window 6 --pattern 3 --rope-theta 1000000 --rope-local-base 100 --linear-scaling 4",
            "--model-type gemma3_text --d-model 16 --heads 2 --kv-heads 2 --head-dim 4 --layers 2 --ffn 20 --vocab 30 "
            "--tokens 33 "
            "--sliding-window 4 --pattern 2 --layer-types --attn-softcap 3 --final-softcap 4",
            // transformers v5 writes the bases as rope_parameters per layer type.
            "--model-type gemma3_text --d-model 16 --heads 4 --kv-heads 2 --head-dim 8 --layers 3 --ffn 20 --vocab 30 "
            "--tokens 12 "
            "--sliding-window 3 --pattern 3 --rope-theta 1000000 --rope-local-base 100 --linear-scaling 4 "
            "--rope-format v5",
        });
}

TEST_CASE("HF Gemma folders: each layer's window and RoPE base as transformers picks them") {
    auto layers_of = [](const std::string& arguments) {
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_gemma.py", arguments);
        std::vector<std::pair<int64_t, double>> layers;
        const ModelWeights w = read_hf_llama_folder(dir.path().string());
        for (int64_t l = 0; l < w.blocks->n_layers(); ++l)
            layers.emplace_back(w.blocks->held(l)->attention.sliding_window, w.blocks->held(l)->attention.rope_base);
        return layers;
    };
    using Layers = std::vector<std::pair<int64_t, double>>;
    CHECK(layers_of("--model-type gemma2 --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 3 --ffn 9 --vocab 12 "
                    "--tokens 2 "
                    "--sliding-window 3") == Layers{{3, 10000}, {0, 10000}, {3, 10000}});
    CHECK(layers_of("--model-type gemma3_text --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 7 --ffn 9 "
                    "--vocab 12 --tokens 2 "
                    "--sliding-window 3 --rope-theta 500000 --rope-local-base 50") ==
          Layers{{3, 50}, {3, 50}, {3, 50}, {3, 50}, {3, 50}, {0, 500000}, {3, 50}});
}

// Gemma2Config's defaults where config.json has no soft-cap keys (a null one means none).
TEST_CASE("HF Gemma 2 folders without soft-cap keys get transformers' defaults 50 and 30") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_gemma.py",
        "--model-type gemma2 --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 1 --ffn 9 --vocab 12 --tokens 3 "
        "--query-pre-attn-scalar 9");
    edit_config(dir, "\"attn_logit_softcapping\": null", "\"absent_a\": null");
    edit_config(dir, "\"final_logit_softcapping\": null", "\"absent_b\": null");
    const ModelWeights weights = read_hf_llama_folder(dir.path().string());
    CHECK(weights.blocks->held(0)->attention.logit_softcap == 50.0);
    CHECK(weights.blocks->held(0)->attention.score_scale == doctest::Approx(1.0 / 3.0));
    CHECK(weights.config.final_logit_softcap == 30.0);
    CHECK(weights.config.embedding_scale == static_cast<float>(std::sqrt(8.0)));
}

TEST_CASE("HF Gemma folders: keys and forms attn-viz does not implement are refused naming file and key") {
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_gemma.py",
                          "--model-type gemma3_text --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 2 --ffn 9 "
                          "--vocab 12 --tokens 3");
    const std::string config = dir / "config.json", anchor = "\"rope_theta\": 10000.0";
    expect_refused(dir, anchor, anchor + ", \"use_bidirectional_attention\": true",
                   {config,
                    "use_bidirectional_attention = true is not supported (attn-viz does not implement "
                    "use_bidirectional_attention for gemma3_text)"});
    expect_refused(dir, "\"final_logit_softcapping\": null", "\"final_logit_softcapping\": -1",
                   {config, "\"final_logit_softcapping\" is -1, expected a positive number"});
    expect_refused(dir, "\"hidden_activation\": \"gelu_pytorch_tanh\"", "\"hidden_activation\": \"quick_gelu\"",
                   {config, "activation \"quick_gelu\" is not supported"});
    // transformers v5's per-layer-type rope_parameters: both types, the sliding one unscaled.
    const std::string full = "\"full_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}";
    expect_refused(
        dir, anchor,
        "\"rope_parameters\": {\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}}",
        {config, "rope_parameters per layer type need both \"full_attention\" and \"sliding_attention\""});
    expect_refused(
        dir, anchor,
        "\"rope_parameters\": {" + full + ", \"sliding_attention\": {\"rope_type\": \"linear\", \"factor\": 2}}",
        {config, "rope_parameters' sliding_attention has rope_type \"linear\" (supported: \"default\""});
    expect_refused(dir, anchor,
                   "\"rope_parameters\": {" + full + ", \"chunked_attention\": {\"rope_type\": \"default\"}}",
                   {config, "rope_parameters per layer type hold \"chunked_attention\""});
}

// Phi-3: q, k, v split from qkv_proj and gate, up from gate_up_proj; partial rotary; sliding_window
// on every layer.
TEST_CASE("HF Phi-3 folders: attention and logits equal a float64 forward written from transformers' modeling_phi3") {
    check_decoder_folders(
        "reference_hf_llama.py",
        {
            "--model-type phi3 --d-model 24 --heads 4 --kv-heads 2 --layers 2 --ffn 37 --vocab 53 --tokens 7 --eps "
            "1e-5",
            "--model-type phi3 --d-model 8 --heads 1 --kv-heads 1 --layers 1 --ffn 11 --vocab 17 --tokens 1 --tied",
            "--model-type phi3 --d-model 32 --heads 4 --kv-heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 33 "
            "--partial-rotary 0.75 "
            "--sliding-window 6",
            "--model-type phi3 --d-model 24 --heads 3 --kv-heads 3 --layers 2 --ffn 20 --vocab 30 --tokens 33 "
            "--partial-rotary 0.5 "
            "--rope-theta 250000",
            // int(8 * 0.1) = 0 rotary features: transformers turns nothing.
            "--model-type phi3 --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 20 --vocab 30 --tokens 9 "
            "--partial-rotary 0.1",
        });
}

TEST_CASE(
    "HF Phi-3 folders: an odd rotary count is refused naming the key; layer_types changes nothing, as in "
    "transformers") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_llama.py",
        "--model-type phi3 --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 9 --vocab 12 --tokens 3 "
        "--sliding-window 5");
    const std::string config = dir / "config.json", anchor = "\"rope_theta\": 10000.0";
    // int(8 * 0.375) = 3 rotary features per head.
    expect_refused(dir, anchor, anchor + ", \"partial_rotary_factor\": 0.375",
                   {config, "partial_rotary_factor 0.375 gives 3 rotary features per head of 8; an even count"});
    // transformers' Phi-3 never reads layer_types: every layer keeps its window.
    edit_config(dir, anchor, anchor + ", \"layer_types\": [\"full_attention\", \"full_attention\"]");
    const ModelWeights phi3 = read_hf_llama_folder(dir.path().string());
    for (int64_t l = 0; l < phi3.blocks->n_layers(); ++l) CHECK(phi3.blocks->held(l)->attention.sliding_window == 5);
}

TEST_CASE("HF Phi-3 folders: longrope and misshapen fused projections are refused naming file and tensor") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_llama.py",
        "--model-type phi3 --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    const std::string config = dir / "config.json", anchor = "\"rope_theta\": 10000.0";
    expect_refused(dir, anchor,
                   anchor + ", \"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": [1], \"long_factor\": [1]}",
                   {config, "rope_scaling \"longrope\" is not supported (supported: linear, llama3)"});
    expect_refused(dir, "\"num_key_value_heads\": 1", "\"num_key_value_heads\": 2",
                   {dir / "model.safetensors",
                    "\"model.layers.0.self_attn.qkv_proj.weight\" has shape [16, 8], expected [24, 8]"});
}

}  // TEST_SUITE("model")
