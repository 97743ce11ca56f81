// GPT-2 and GPT-NeoX models from GGUF (read_gguf_transformer): random Hugging Face folders of
// scripts/reference_hf_transformer.py converted to GGUF as llama.cpp's convert_hf_to_gguf.py does
// (gguf_transformer_conversion.hpp), then read both ways: the weights must be identical to the
// folder's, and the model's attention and logits those of the float64 reference. Hostile metadata
// and tensors.
#include <string>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_transformer.hpp"
#include "gguf_transformer_conversion.hpp"
#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE(
    "GGUF gpt2 and gptneox files converted from HF folders read to the folders' weights and run to the reference "
    "forward") {
    const char* cases[] = {
        "--model-type gpt2 --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 53 --tokens 9",
        "--model-type gpt2 --prefix --d-model 15 --heads 1 --layers 1 --ffn 7 --vocab 19 --tokens 1 --lm-head separate",
        "--model-type gpt_neox --prefix --d-model 30 --heads 3 --layers 2 --ffn 41 --vocab 37 --tokens 13 --rotary-pct "
        "0.4",
        "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 23 --vocab 29 --tokens 7 --sequential-residual "
        "--rotary-base 500 --lm-head tied",
    };
    OnednnBackend backend;
    for (const std::string arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        WholeModel model(backend, converted_weights(dir, arguments));
        const ModelRun run = model.run(read_ids(dir / "ids.txt"));
        for (size_t l = 0; l < run.layers.size(); ++l)
            CHECK(max_abs_diff(run.layers[l].attention,
                               read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))) < 1e-5);
        const Tensor expected_logits = read_npy(dir / "expected_logits.npy");
        CHECK(max_abs_diff(run.logits, expected_logits) < 1e-5 * magnitude(expected_logits));
    }
}

TEST_CASE("open_whole_model takes GGUF gpt2 and gptneox files as the folders' WholeModel") {
    OnednnBackend backend;
    for (const std::string arguments :
         {"--model-type gpt2 --d-model 12 --heads 3 --layers 2 --ffn 17 --vocab 23 --tokens 6",
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
        for (size_t l = 0; l < a.layers.size(); ++l)
            CHECK(max_abs_diff(a.layers[l].attention, b.layers[l].attention) < 1e-6);
        CHECK(max_abs_diff(a.logits, b.logits) < 1e-5 * magnitude(b.logits));
    }
}

TEST_CASE("hostile GGUF gpt2 and gptneox files are refused naming the file and the key or tensor") {
    ScratchDir gpt2, neox;
    make_reference_folder(gpt2, "reference_hf_transformer.py",
                          "--model-type gpt2 --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    make_reference_folder(neox, "reference_hf_transformer.py",
                          "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    auto expect_refused = [](const ScratchDir& dir, const Spoil& spoil, const std::string& fragment) {
        CAPTURE(fragment);
        const std::string path = dir / "bad.gguf";
        convert_folder(dir.path().string(), path, spoil);
        expect_error(ErrorKind::bad_input, [&] { read_gguf_transformer(GgufFile(path)); }, {"bad.gguf", fragment});
    };
    expect_refused(
        gpt2, {{}, {}, "bloom"},
        "general.architecture is \"bloom\"; this reader takes GGUF models of architecture gpt2, gptneox or bert");
    expect_refused(gpt2, {{"blk.1.attn_qkv.weight"}, {}, ""}, "has no tensor \"blk.1.attn_qkv.weight\"");
    expect_refused(gpt2, {{"position_embd.weight"}, {}, ""}, "has no tensor \"position_embd.weight\"");
    expect_refused(gpt2, {{"blk.0.ffn_norm.bias"}, {}, ""}, "has no tensor \"blk.0.ffn_norm.bias\"");
    expect_refused(gpt2, {{}, {{"gpt2.feed_forward_length", 24}}, ""},
                   "tensor \"blk.0.ffn_up.weight\" has shape [20, 16], expected [24, 16]");
    expect_refused(gpt2, {{}, {{"gpt2.context_length", 1024}}, ""},
                   "tensor \"position_embd.weight\" has shape [64, 16], expected [1024, 16]");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count", 3}}, ""},
                   "gpt2.embedding_length 16 is not divisible by 3 heads");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count", 0}}, ""},
                   "gpt2.attention.head_count is 0, outside 1..2^24");
    expect_refused(gpt2, {{}, {{"gpt2.attention.head_count_kv", 1}}, ""},
                   "gpt2.attention.head_count_kv differs from the head count");
    expect_refused(neox, {{}, {{"gptneox.rope.dimension_count", 3}}, ""},
                   "gptneox.rope.dimension_count 3 is not an even count");
    expect_refused(neox, {{}, {{"gptneox.rope.dimension_count", 10}}, ""}, "of at most the head size 8");
    expect_refused(neox, {{}, {{"gptneox.block_count", 3}}, ""}, "has no tensor \"blk.2.attn_qkv.weight\"");
    expect_refused(neox, {{"output_norm.weight"}, {}, ""}, "has no tensor \"output_norm.weight\"");
}

}  // TEST_SUITE("model")
