// Qwen2, Qwen3, Gemma 2, Gemma 3 text and Phi-3 from GGUF (read_gguf_llama and the streaming reader
// model_files.hpp picks): random Hugging Face folders of scripts/reference_hf_llama.py and
// reference_hf_gemma.py converted as llama.cpp's convert_hf_to_gguf.py does
// (gguf_decoder_conversion.hpp) read to the folder's weights, and run to the float64 reference's
// attention and logits (T = 1, 7, 33, past each sliding window); what GGUF cannot say (Gemma's
// query_pre_attn_scalar); hostile files.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf_decoder_conversion.hpp"
#include "gguf_llama.hpp"
#include "hf_llama_checkpoint.hpp"
#include "model_files.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// Each folder of `script` and `cases` converted: the GGUF's weights equal the folder's (Gemma's
// norms to the float32 rounding of the converter's 1 + w), and the streamed GGUF model's attention
// (1e-5) and logits (1e-5 of their scale) are the reference's.
void check_converted(const std::string& script, const std::vector<std::string>& cases) {
    OnednnBackend backend;
    for (const std::string& arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, script, arguments);
        convert_decoder_folder(dir.path().string(), dir / "model.gguf");
        const bool gemma = script == "reference_hf_gemma.py";
        check_same_model(read_gguf_llama(GgufFile(dir / "model.gguf")), read_hf_llama_folder(dir.path().string()),
                         gemma ? 3e-7 : 0.0);
        const std::unique_ptr<WholeModel> model = open_whole_model(backend, dir / "model.gguf");
        const ModelRun run = model->run(read_ids(dir / "ids.txt"));
        double attention_error = 0;
        for (size_t l = 0; l < run.layers.size(); ++l)
            attention_error = std::max(
                attention_error, max_abs_diff(run.layers[l].attention,
                                              read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))));
        const Tensor expected_logits = read_npy(dir / "expected_logits.npy");
        MESSAGE(arguments << ": max attention error " << attention_error << ", max logit error "
                          << max_abs_diff(run.logits, expected_logits));
        CHECK(attention_error < 1e-5);
        CHECK(max_abs_diff(run.logits, expected_logits) < 1e-5 * magnitude(expected_logits));
    }
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "GGUF qwen2 files converted from HF folders: q/k/v biases, rows kept in Hugging Face's order, reference "
    "forward") {
    check_converted("reference_hf_llama.py",
                    {
                        "--model-type qwen2 --d-model 24 --heads 4 --kv-heads 2 --layers 2 --ffn 37 --vocab 53 "
                        "--tokens 7",
                        "--model-type qwen2 --d-model 6 --heads 1 --kv-heads 1 --layers 1 --ffn 5 --vocab 11 "
                        "--tokens 1 --tied",
                        "--model-type qwen2 --d-model 20 --heads 5 --kv-heads 1 --layers 3 --ffn 16 --vocab 40 "
                        "--tokens 33 --rope-theta 1000000 --eps 1e-6",
                        "--model-type qwen2 --d-model 16 --heads 2 --kv-heads 2 --head-dim 6 --layers 2 --ffn 9 "
                        "--vocab 29 --tokens 9",
                    });
}

TEST_CASE(
    "GGUF qwen3 files converted from HF folders: the folders' weights (q/k norms, head_dim, biases) and reference "
    "forward") {
    check_converted("reference_hf_llama.py", {
                                                 "--model-type qwen3 --d-model 24 --heads 4 --kv-heads 2 --head-dim 10 "
                                                 "--layers 2 --ffn 37 --vocab 53 --tokens 7",
                                                 "--model-type qwen3 --d-model 8 --heads 1 --kv-heads 1 --head-dim 6 "
                                                 "--layers 1 --ffn 11 --vocab 17 --tokens 1 --tied",
                                                 "--model-type qwen3 --d-model 16 --heads 4 --kv-heads 1 --head-dim 8 "
                                                 "--layers 2 --ffn 20 --vocab 30 --tokens 33 "
                                                 "--attention-bias --rope-theta 1000000 --eps 1e-6",
                                             });
}

TEST_CASE(
    "GGUF gemma2 files converted from HF folders: stored 1 + w norms, soft-caps, even sliding layers, reference "
    "forward") {
    check_converted("reference_hf_gemma.py", {
                                                 "--model-type gemma2 --d-model 24 --heads 4 --kv-heads 2 --head-dim "
                                                 "10 --layers 2 --ffn 37 --vocab 53 --tokens 7 "
                                                 "--attn-softcap 2 --final-softcap 3",
                                                 "--model-type gemma2 --d-model 8 --heads 1 --kv-heads 1 --head-dim 6 "
                                                 "--layers 1 --ffn 11 --vocab 17 --tokens 1 "
                                                 "--attn-softcap 50 --final-softcap 30",
                                                 "--model-type gemma2 --d-model 16 --heads 4 --kv-heads 1 --head-dim 8 "
                                                 "--layers 3 --ffn 20 --vocab 30 --tokens 33 "
                                                 "--sliding-window 5 --attn-softcap 5 --final-softcap 30 --eps 1e-5",
                                             });
}

TEST_CASE(
    "GGUF gemma3 files converted from HF folders: q/k norms, five sliding layers of six with base 10000, linear "
    "scaling") {
    check_converted("reference_hf_gemma.py",
                    {
                        "--model-type gemma3_text --d-model 24 --heads 4 --kv-heads 2 --head-dim 10 --layers 2 --ffn "
                        "37 --vocab 53 --tokens 7",
                        "--model-type gemma3_text --d-model 8 --heads 1 --kv-heads 1 --head-dim 6 --layers 1 --ffn 11 "
                        "--vocab 17 --tokens 1 --final-softcap 4",
                        "--model-type gemma3_text --d-model 16 --heads 4 --kv-heads 1 --head-dim 8 --layers 7 --ffn 20 "
                        "--vocab 30 --tokens 33 "
                        "--sliding-window 6 --rope-theta 1000000 --linear-scaling 4",
                    });
}

TEST_CASE(
    "GGUF phi3 files converted from HF folders: fused attn_qkv and ffn_up, partial rotary, sliding window, reference "
    "forward") {
    check_converted(
        "reference_hf_llama.py",
        {
            "--model-type phi3 --d-model 24 --heads 4 --kv-heads 2 --layers 2 --ffn 37 --vocab 53 --tokens 7 --eps "
            "1e-5",
            "--model-type phi3 --d-model 8 --heads 1 --kv-heads 1 --layers 1 --ffn 11 --vocab 17 --tokens 1 --tied",
            "--model-type phi3 --d-model 32 --heads 4 --kv-heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 33 "
            "--partial-rotary 0.75 "
            "--sliding-window 6",
        });
}

// GGUF has no query_pre_attn_scalar: llama.cpp scales Gemma's scores by the key length (by
// D / H for the 27B models), so a folder whose scalar differs reads with that scale instead.
TEST_CASE("GGUF gemma2: the score scale is llama.cpp's key length, not the folder's query_pre_attn_scalar") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_gemma.py",
        "--model-type gemma2 --d-model 8 --heads 2 --kv-heads 1 --head-dim 4 --layers 1 --ffn 9 --vocab 12 --tokens 3 "
        "--query-pre-attn-scalar 9 --attn-softcap 5 --final-softcap 6");
    convert_decoder_folder(dir.path().string(), dir / "model.gguf");
    const ModelWeights weights = read_gguf_llama(GgufFile(dir / "model.gguf"));
    CHECK(weights.blocks->held(0)->attention.score_scale == doctest::Approx(0.5));
    CHECK(read_hf_llama_folder(dir.path().string()).blocks->held(0)->attention.score_scale ==
          doctest::Approx(1.0 / 3.0));
}

TEST_CASE("hostile GGUF qwen3, gemma2, gemma3 and phi3 files are refused naming the file and the key or tensor") {
    ScratchDir qwen3, gemma2, gemma3, phi3;
    make_reference_folder(qwen3, "reference_hf_llama.py",
                          "--model-type qwen3 --d-model 16 --heads 4 --kv-heads 2 --head-dim 4 --layers 2 --ffn 20 "
                          "--vocab 30 --tokens 3");
    make_reference_folder(gemma2, "reference_hf_gemma.py",
                          "--model-type gemma2 --d-model 16 --heads 4 --kv-heads 2 --head-dim 4 --layers 2 --ffn 20 "
                          "--vocab 30 --tokens 3 "
                          "--attn-softcap 5 --final-softcap 6");
    make_reference_folder(gemma3, "reference_hf_gemma.py",
                          "--model-type gemma3_text --d-model 16 --heads 4 --kv-heads 2 --head-dim 4 --layers 2 --ffn "
                          "20 --vocab 30 --tokens 3");
    make_reference_folder(
        phi3, "reference_hf_llama.py",
        "--model-type phi3 --d-model 16 --heads 4 --kv-heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    auto expect_refused = [](const ScratchDir& dir, const Spoil& spoil, const std::string& fragment) {
        CAPTURE(fragment);
        const std::string path = dir / "bad.gguf";
        convert_decoder_folder(dir.path().string(), path, spoil);
        expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(path)); }, {"bad.gguf", fragment});
        expect_error(ErrorKind::bad_input, [&] { read_model_weights(open_model_files(path)); }, {"bad.gguf", fragment});
    };
    expect_refused(
        qwen3, {{}, {}, "qwen9"},
        "general.architecture is \"qwen9\"; attn-viz runs GGUF models of architecture llama, qwen2, qwen3, gemma, "
        "gemma2, gemma3, phi3, starcoder2");
    expect_refused(qwen3, {{"blk.1.attn_k_norm.weight"}, {}, ""}, "has no tensor \"blk.1.attn_k_norm.weight\"");
    expect_refused(qwen3, {{}, {{"qwen3.attention.key_length", 6}, {"qwen3.attention.value_length", 6}}, ""},
                   "tensor \"blk.0.attn_output.weight\" has shape [16, 16], expected [16, 24]");
    expect_refused(gemma2, {{"blk.0.post_ffw_norm.weight"}, {}, ""}, "has no tensor \"blk.0.post_ffw_norm.weight\"");
    expect_refused(gemma2, {{}, {{"gemma2.feed_forward_length", 24}}, ""},
                   "tensor \"blk.0.ffn_down.weight\" has shape [16, 20], expected [16, 24]");
    expect_refused(gemma2, {{}, {{"gemma2.attention.head_count_kv", 3}}, ""},
                   "gemma2.attention.head_count 4 is not divisible by gemma2.attention.head_count_kv 3");
    expect_refused(gemma2, {{}, {{"gemma2.attention.head_count", 2}}, ""},
                   "tensor \"blk.0.attn_output.weight\" has shape [16, 16], expected [16, 8]");
    // cap * tanh(x / cap) is NaN for an infinite cap: refused as a negative or NaN one is.
    for (const char* key : {"gemma2.attn_logit_softcapping", "gemma2.final_logit_softcapping"})
        for (const float cap : {std::numeric_limits<float>::infinity(), -1.0f, std::nanf("")}) {
            Spoil spoiled;
            spoiled.f32 = {{key, cap}};
            expect_refused(gemma2, spoiled, std::string(key) + " is ");
        }
    expect_refused(gemma3, {{"output_norm.weight"}, {}, ""}, "has no tensor \"output_norm.weight\"");
    expect_refused(gemma3, {{}, {{"gemma3.block_count", 3}}, ""}, "has no tensor \"blk.2.attn_norm.weight\"");
    expect_refused(phi3, {{"blk.0.attn_qkv.weight"}, {}, ""}, "has no tensor \"blk.0.attn_qkv.weight\"");
    expect_refused(phi3, {{}, {{"phi3.rope.dimension_count", 3}}, ""},
                   "phi3.rope.dimension_count is not the head size 4 or an even count below it");
    Spoil longrope;
    longrope.extra = {"rope_factors_long.weight"};
    expect_refused(phi3, longrope,
                   "has tensor \"rope_factors_long.weight\": Phi-3's LongRoPE scaling is not supported");
    // Its fused ffn_up is read without biases: a feed-forward bias is refused by name, not ignored.
    for (const char* bias : {"blk.1.ffn_up.bias", "blk.0.ffn_down.bias"}) {
        Spoil biased;
        biased.extra = {bias};
        expect_refused(phi3, biased, std::string(bias) + ": feed-forward biases are not read for phi3 GGUF files");
    }
}

}  // TEST_SUITE("model")
