// Hugging Face Llama-family model folders: random small models of each family (llama, mistral,
// qwen2 with biases; GQA, one head, T = 1, tied or separate lm_head, one file or two shards) against
// the float64 forward of scripts/reference_hf_llama.py, written from transformers' definition;
// the stories260K folder against the llama2.c checkpoint it was converted from; hostile folders.
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>

#include "decoder_reference.hpp"
#include "expect_error.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_reference_folder.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_checkpoint.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

void make_reference_folder(const ScratchDir& dir, const std::string& arguments) {
    test_support::make_reference_folder(dir, "reference_hf_llama.py", arguments);
}

void check_against_reference(const std::vector<std::string>& cases) {
    check_decoder_folders("reference_hf_llama.py", cases);
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "HF Llama-family folders: attention and logits equal a float64 forward written from transformers' definition") {
    const char* cases[] = {
        "--model-type llama --d-model 24 --heads 4 --kv-heads 2 --layers 2 --ffn 37 --vocab 53 --tokens 9 --tied",
        "--model-type qwen2 --d-model 18 --heads 3 --kv-heads 1 --layers 2 --ffn 29 --vocab 41 --tokens 7 --shards 2 "
        "--eps 1e-6 --rope-theta 1000000",
        "--model-type mistral --d-model 8 --heads 1 --kv-heads 1 --layers 1 --ffn 11 --vocab 17 --tokens 1",
        "--model-type llama --d-model 32 --heads 8 --kv-heads 8 --layers 3 --ffn 48 --vocab 64 --tokens 23 --shards 2",
    };
    check_against_reference({std::begin(cases), std::end(cases)});
}

// A small rope_theta and head size 16 put the 8 frequency pairs on every side of llama3's
// wavelength bounds (original 64 / high 4 = 16, original 64 / low 1 = 64): kept, blended, scaled;
// 23 tokens turn the scaled pairs far enough to tell the scaling apart.
TEST_CASE("HF Llama folders with rope_scaling linear and llama3 equal the reference's scaled frequencies") {
    check_against_reference({
        "--model-type llama --d-model 32 --heads 2 --kv-heads 1 --layers 2 --ffn 40 --vocab 50 --tokens 23 "
        "--rope-theta 100 "
        "--rope-scaling linear --factor 4",
        "--model-type llama --d-model 32 --heads 2 --kv-heads 2 --layers 2 --ffn 40 --vocab 50 --tokens 23 "
        "--rope-theta 100 "
        "--rope-scaling llama3 --factor 8 --low-freq-factor 1 --high-freq-factor 4 --original-max-positions 64",
        "--model-type qwen2 --d-model 24 --heads 3 --kv-heads 1 --layers 1 --ffn 30 --vocab 40 --tokens 1 "
        "--rope-scaling llama3 --factor 32 --low-freq-factor 2 --high-freq-factor 5 --original-max-positions 512",
    });
}

// Each config key that changes the forward pass, on random folders at sizes where it shows:
// sliding windows shorter than the sequence (Mistral on every layer, Qwen2 from max_window_layers
// on, and not at all without use_sliding_window), each gated activation, Llama's biases, a head
// size other than hidden_size / heads, and transformers v5's rope_parameters.
TEST_CASE(
    "HF Llama-family config keys: sliding windows, hidden_act, biases, head_dim and v5 rope_parameters equal the "
    "reference") {
    check_against_reference({
        "--model-type mistral --d-model 16 --heads 4 --kv-heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 19 "
        "--sliding-window 5",
        "--model-type mistral --d-model 12 --heads 2 --kv-heads 1 --layers 1 --ffn 10 --vocab 20 --tokens 6 "
        "--sliding-window 1",
        "--model-type qwen2 --d-model 18 --heads 3 --kv-heads 1 --layers 3 --ffn 22 --vocab 25 --tokens 17 "
        "--sliding-window 4 "
        "--use-sliding-window --max-window-layers 1 --rope-format v5 --rope-theta 1000000",
        "--model-type qwen2 --d-model 18 --heads 3 --kv-heads 3 --layers 2 --ffn 22 --vocab 25 --tokens 11 "
        "--sliding-window 3",
        "--model-type llama --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 24 --vocab 30 --tokens 10 "
        "--hidden-act gelu_pytorch_tanh "
        "--mlp-bias --attention-bias --head-dim 12",
        "--model-type llama --d-model 16 --heads 4 --kv-heads 2 --layers 2 --ffn 24 --vocab 30 --tokens 8 --hidden-act "
        "gelu --head-dim 2",
        "--model-type llama --d-model 16 --heads 2 --kv-heads 2 --layers 2 --ffn 24 --vocab 30 --tokens 8 --hidden-act "
        "gelu_new --mlp-bias",
        "--model-type llama --d-model 32 --heads 2 --kv-heads 1 --layers 2 --ffn 40 --vocab 50 --tokens 23 "
        "--rope-format v5 "
        "--rope-theta 500000 --rope-scaling llama3 --factor 8 --low-freq-factor 1 --high-freq-factor 4 "
        "--original-max-positions 64",
        "--model-type qwen2 --d-model 24 --heads 2 --kv-heads 1 --layers 1 --ffn 30 --vocab 40 --tokens 21 "
        "--rope-format v5 --rope-theta 1000000",
    });
}

TEST_CASE("HF Llama-family folders: the windows and masks a config asks for, and none it does not") {
    OnednnBackend backend;
    auto windows_of = [&](const std::string& arguments) {
        ScratchDir dir;
        make_reference_folder(dir, arguments);
        WholeModel model(backend, read_hf_llama_folder(dir.path().string()));
        std::vector<int64_t> windows;
        for (const LayerResult& layer : model.run(read_ids(dir / "ids.txt")).layers) {
            CHECK(layer.visibility.causal);
            windows.push_back(layer.visibility.window);
        }
        return windows;
    };
    CHECK(windows_of("--model-type mistral --d-model 8 --heads 2 --kv-heads 1 --layers 2 --ffn 9 --vocab 12 --tokens 7 "
                     "--sliding-window 3") == std::vector<int64_t>{3, 3});
    CHECK(windows_of(
              "--model-type mistral --d-model 8 --heads 2 --kv-heads 1 --layers 2 --ffn 9 --vocab 12 --tokens 7") ==
          std::vector<int64_t>{0, 0});  // "sliding_window": null
    CHECK(windows_of("--model-type qwen2 --d-model 8 --heads 2 --kv-heads 1 --layers 3 --ffn 9 --vocab 12 --tokens 7 "
                     "--sliding-window 3 "
                     "--use-sliding-window --max-window-layers 2") == std::vector<int64_t>{0, 0, 3});
    CHECK(windows_of("--model-type qwen2 --d-model 8 --heads 2 --kv-heads 1 --layers 2 --ffn 9 --vocab 12 --tokens 7 "
                     "--sliding-window 3 "
                     "--max-window-layers 0") == std::vector<int64_t>{0, 0});  // use_sliding_window false
}

TEST_CASE("a model's description gives config.json's head_dim, or dim / heads without one (memory estimates use it)") {
    OnednnBackend backend;
    auto head_dim_of = [&](const std::string& arguments) {
        ScratchDir dir;
        make_reference_folder(dir, arguments);
        return WholeModel(backend, read_hf_llama_folder(dir.path().string())).description().head_dim;
    };
    CHECK(head_dim_of("--model-type llama --d-model 16 --heads 2 --kv-heads 1 --layers 1 --ffn 24 --vocab 30 --tokens "
                      "4 --head-dim 12") == 12);
    CHECK(head_dim_of(
              "--model-type llama --d-model 16 --heads 4 --kv-heads 2 --layers 1 --ffn 24 --vocab 30 --tokens 4") == 4);
}

TEST_CASE("HF Llama-family folders: every config key that is not implemented is refused naming key and value") {
    ScratchDir dir;
    make_reference_folder(
        dir, "--model-type llama --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    const std::string config_text = read_text(dir / "config.json"), config = dir / "config.json",
                      weights = dir / "model.safetensors";
    const std::string anchor = "\"rope_theta\": 10000.0";
    REQUIRE(config_text.find(anchor) != std::string::npos);
    auto expect_refused = [&](const std::string& from, const std::string& to, const std::vector<std::string>& needles) {
        CAPTURE(to);
        std::string text = config_text;
        REQUIRE(text.find(from) != std::string::npos);
        write_text(dir / "config.json", text.replace(text.find(from), from.size(), to));
        expect_error(
            ErrorKind::bad_input, [&] { read_hf_llama_folder(dir.path().string()); }, needles);
    };
    auto with_key = [&](const std::string& key_and_value, const std::vector<std::string>& needles) {
        expect_refused(anchor, anchor + ", " + key_and_value, needles);
    };
    expect_refused("\"hidden_act\": \"silu\"", "\"hidden_act\": \"quick_gelu\"",
                   {config,
                    "activation \"quick_gelu\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh, "
                    "gelu_fast, silu, swish, relu)"});
    expect_refused(
        "\"attention_bias\": false", "\"attention_bias\": true",
        {weights, "'model.layers.0.self_attn.q_proj.bias' is missing, but config.json's attention_bias is true"});
    expect_refused("\"mlp_bias\": false", "\"mlp_bias\": true",
                   {weights, "'model.layers.0.mlp.gate_proj.bias' is missing, but config.json's mlp_bias is true"});
    expect_refused(
        "\"model_type\": \"llama\"", "\"model_type\": \"falcon\"",
        {config,
         "model_type \"falcon\" is not supported (supported: llama, mistral, ministral, qwen2, qwen3, gemma, gemma2, "
         "gemma3_text, phi3, starcoder2, smollm3, stablelm, olmo, olmo2, granite, cohere, gpt_neo, opt, gpt_bigcode)"});
    with_key("\"head_dim\": 4",
             {weights, "'model.layers.0.self_attn.q_proj.weight' has 16 outputs, expected 2 heads x head size 4"});
    with_key("\"partial_rotary_factor\": 0.5", {config, "partial_rotary_factor 0.5 is not supported for llama"});
    // A string or a number is not the boolean transformers reads: refused, not run untied.
    for (const char* value : {"\"true\"", "\"false\"", "1", "0"})
        expect_refused("\"tie_word_embeddings\": false", std::string("\"tie_word_embeddings\": ") + value,
                       {config, std::string("\"tie_word_embeddings\" is ") + value + ", expected true or false"});
    with_key("\"attn_logit_softcapping\": 50.0", {config, "attn_logit_softcapping = 50.0 is not supported"});
    with_key("\"final_logit_softcapping\": 30", {config, "final_logit_softcapping = 30 is not supported"});
    with_key("\"use_qk_norm\": true", {config, "use_qk_norm = true is not supported"});
    expect_refused(anchor, "\"rope_parameters\": {\"rope_type\": \"yarn\", \"rope_theta\": 10000.0, \"factor\": 4}",
                   {config, "rope_scaling \"yarn\" is not supported (supported: linear, llama3)"});
    expect_refused(anchor, "\"rope_parameters\": {\"rope_theta\": 10000.0}",
                   {config, "rope_parameters has no \"rope_type\""});
    with_key("\"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": 500000.0}",
             {config, "rope_parameters' rope_theta 500000.0 disagrees with rope_theta 10000.0"});
    expect_refused(anchor,
                   "\"rope_parameters\": {\"full_attention\": {\"rope_type\": \"default\", \"rope_theta\": 10000.0}, "
                   "\"sliding_attention\": {\"rope_type\": \"default\", \"rope_theta\": 100.0}}",
                   {config, "rope_parameters per layer type are not supported for model_type \"llama\""});
    expect_refused(anchor,
                   "\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2}, \"rope_parameters\": {\"rope_type\": "
                   "\"default\"}",
                   {config, "both rope_scaling and rope_parameters are set"});
    // Mistral's and Qwen2's window keys.
    expect_refused("\"model_type\": \"llama\"", "\"model_type\": \"mistral\", \"sliding_window\": 0",
                   {config, "\"sliding_window\" is 0, expected a positive integer"});
    expect_refused("\"model_type\": \"llama\"", "\"model_type\": \"qwen2\", \"max_window_layers\": -1",
                   {config, "\"max_window_layers\" is -1, expected a non-negative integer"});
    // Qwen2 reads layer_types (transformers' Mistral and Phi-3 ignore the key: test_model_hf_decoders.cpp).
    expect_refused("\"model_type\": \"llama\"",
                   "\"model_type\": \"qwen2\", \"use_sliding_window\": true, \"layer_types\": [\"sliding_attention\"]",
                   {config, "layer_types lists 1 layers, num_hidden_layers is 2"});
    expect_refused(
        "\"model_type\": \"llama\"",
        "\"model_type\": \"mistral\", \"layer_types\": [\"chunked_attention\", \"full_attention\"]",
        {config, "layer_types holds \"chunked_attention\" (supported: \"full_attention\", \"sliding_attention\")"});
    // Mistral has no biases: tensors the checkpoint holds that transformers would not read.
    ScratchDir qwen;
    make_reference_folder(
        qwen, "--model-type qwen2 --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    std::string qwen_config = read_text(qwen / "config.json");
    qwen_config.replace(qwen_config.find("\"qwen2\""), 7, "\"mistral\"");
    write_text(qwen / "config.json", qwen_config);
    expect_error(ErrorKind::bad_input, [&] { read_hf_llama_folder(qwen.path().string()); },
                 {qwen / "model.safetensors",
                  "'model.layers.0.self_attn.q_proj.bias' is there, but mistral has no q/k/v biases"});
}

TEST_CASE("stories260K as a Hugging Face folder runs as the llama2.c checkpoint it was converted from") {
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors", "tokenizer.json"});
    const std::string llama2c = stories260k_dir();
    if (hf.empty() || llama2c.empty()) return;
    OnednnBackend backend;
    WholeModel from_folder(backend, read_hf_llama_folder(hf));
    WholeModel from_checkpoint(backend, read_llama2c_checkpoint(llama2c + "/stories260K.bin"));
    const HfTokenizer tokenizer = HfTokenizer::load(hf);
    const std::vector<int> ids = tokenizer.encode("Once upon a time, there was a little girl named Lily.", true);
    const ModelRun a = from_folder.run(ids), b = from_checkpoint.run(ids);
    REQUIRE(a.layers.size() == 5);
    for (size_t l = 0; l < a.layers.size(); ++l)
        CHECK(max_abs_diff(a.layers[l].attention, b.layers[l].attention) < 1e-5);
    CHECK(max_abs_diff(a.logits, b.logits) < 1e-4);
    const std::string story =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.";
    const std::string generated = tokenizer.decode(greedy_generate(from_folder, {*tokenizer.bos_id()}, 40));
    CHECK_MESSAGE(generated.rfind(story, 0) == 0, "generated: " << generated);
}

TEST_CASE("hostile model folders: lying configs and indexes get one-line errors naming the file") {
    ScratchDir dir;
    make_reference_folder(
        dir,
        "--model-type llama --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 20 --vocab 30 --tokens 3 --shards 2");
    const std::string config_text = read_text(dir / "config.json"),
                      index_text = read_text(dir / "model.safetensors.index.json");
    auto with_config = [&](const std::string& from, const std::string& to) {
        std::string text = config_text;
        REQUIRE(text.find(from) != std::string::npos);
        write_text(dir / "config.json", text.replace(text.find(from), from.size(), to));
        write_text(dir / "model.safetensors.index.json", index_text);
    };
    auto with_index = [&](const std::string& from, const std::string& to) {
        std::string text = index_text;
        for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
            text.replace(at, from.size(), to);
        write_text(dir / "config.json", config_text);
        write_text(dir / "model.safetensors.index.json", text);
    };
    const std::string config = dir / "config.json", index = dir / "model.safetensors.index.json";
    const auto read_folder = [&] { read_hf_llama_folder(dir.path().string()); };
    with_config("\"hidden_size\": 16", "\"hidden_size\": 32");
    expect_error(ErrorKind::bad_input, read_folder, {config, "tensors have width 16 but", "says 32"});
    with_config("\"vocab_size\": 30", "\"vocab_size\": 31");
    expect_error(ErrorKind::bad_input, read_folder,
                 {index, "\"model.embed_tokens.weight\" has shape [30, 16], expected [31, 16]"});
    with_config("\"intermediate_size\": 20", "\"intermediate_size\": 2000000");
    expect_error(ErrorKind::bad_input, read_folder,
                 {index, "\"model.layers.0.mlp.gate_proj.weight\" has shape [20, 16], expected [2000000, 16]"});
    with_config("\"num_key_value_heads\": 1", "\"num_key_value_heads\": 2");
    expect_error(ErrorKind::bad_input, read_folder, {index, "k_proj.weight' has 8 outputs, expected 2 key/value heads"},
                 Remedy::give_num_kv_heads);
    with_config("\"num_attention_heads\": 2", "\"num_attention_heads\": 3");
    expect_error(ErrorKind::bad_input, read_folder, {config, "head size"});
    with_config("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 3");
    expect_error(ErrorKind::bad_input, read_folder, {"layer 2 is out of range"});
    with_config("\"model_type\": \"llama\"", "\"model_type\": \"bloom\"");
    expect_error(
        ErrorKind::bad_input, read_folder,
        {config,
         "\"bloom\" is not supported (supported: llama, mistral, ministral, qwen2, qwen3, gemma, gemma2, "
         "gemma3_text, phi3, starcoder2, smollm3, stablelm, olmo, olmo2, granite, cohere, gpt_neo, opt, gpt_bigcode)"});
    // An untrusted name is quoted cut short, not whole.
    with_config("\"rope_theta\": 10000.0",
                "\"rope_theta\": 10000.0, \"rope_scaling\": {\"rope_type\": \"" + std::string(100000, 'y') + "\"}");
    CHECK(expect_error(ErrorKind::bad_input, read_folder, {"is not supported (supported: linear, llama3)"}).size() <
          400);
    with_config("\"vocab_size\": 30", "\"vocab_size\": -30");
    expect_error(ErrorKind::bad_input, read_folder, {config, "expected a positive integer"});
    with_config("\"rope_theta\": 10000.0",
                "\"rope_theta\": 10000.0, \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4}");
    expect_error(ErrorKind::bad_input, read_folder,
                 {config, "rope_scaling \"yarn\" is not supported (supported: linear, llama3)"});
    const std::pair<std::string, std::vector<std::string>> bad_scalings[] = {
        {R"({"rope_type": "dynamic", "factor": 2})",
         {"rope_scaling \"dynamic\" is not supported (supported: linear, llama3)"}},
        {R"({"type": "longrope", "factor": 2})", {"rope_scaling \"longrope\" is not supported"}},
        {R"({"rope_type": "linear", "factor": 0})", {"\"factor\" is 0, expected a positive number"}},
        {R"({"rope_type": "linear", "factor": -2.5})", {"\"factor\" is -2.5, expected a positive number"}},
        {R"({"rope_type": "linear", "factor": "4"})", {"\"factor\" is \"4\", expected a positive number"}},
        {R"({"rope_type": "linear"})", {"rope_scaling (linear) has no \"factor\""}},
        {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4})",
         {"rope_scaling (llama3) has no \"original_max_position_embeddings\""}},
        {R"({"rope_type": "llama3", "factor": 8, "high_freq_factor": 4, "original_max_position_embeddings": 64})",
         {"rope_scaling (llama3) has no \"low_freq_factor\""}},
        {R"({"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 4, "original_max_position_embeddings": 64})",
         {"high_freq_factor (4.000000) must be above its low_freq_factor (4.000000)"}},
        {R"({"factor": 8})", {"rope_scaling has no \"rope_type\""}},
        {R"({"rope_type": 3})", {"\"rope_type\" is 3, expected a string"}},
        {R"("linear")", {"\"rope_scaling\" is \"linear\", expected an object"}},
    };
    for (const auto& [scaling, message] : bad_scalings) {
        CAPTURE(scaling);
        with_config("\"rope_theta\": 10000.0", "\"rope_theta\": 10000.0, \"rope_scaling\": " + scaling);
        std::vector<std::string> expected = message;
        expected.insert(expected.begin(), config);
        expect_error(ErrorKind::bad_input, read_folder, expected);
    }
    with_index("model-00002-of-00002.safetensors", "../../etc/passwd");
    expect_error(ErrorKind::bad_input, read_folder, {index, "is not a file name in the folder"});
    with_index("model-00002-of-00002.safetensors", "model-00001-of-00002.safetensors");
    expect_error(ErrorKind::bad_input, read_folder, {index, "which does not hold it"});
    with_index("\"weight_map\"", "\"weights\"");
    expect_error(ErrorKind::bad_input, read_folder, {index, "no \"weight_map\""});
    // An index pointing at a shard that is not there: an I/O error naming the shard.
    with_index("model-00002-of-00002.safetensors", "model-00003-of-00003.safetensors");
    expect_error(ErrorKind::io, read_folder, {"model-00003-of-00003.safetensors"});
}

}  // TEST_SUITE("model")
