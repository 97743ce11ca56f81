// BERT models from GGUF (read_gguf_transformer, architecture "bert"): random Hugging Face BERT
// folders of scripts/reference_hf_transformer.py converted to GGUF with llama.cpp's names
// (gguf_transformer_conversion.hpp), then read both ways: the weights must be identical to the
// folder's, the attention and final hidden states those of the float64 reference, and
// open_whole_model gives an encoder without logits. Hostile metadata and tensors.
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

TEST_CASE("GGUF bert files converted from HF folders read to the folders' weights and run to the reference encoder") {
    const char* cases[] = {
        "--model-type bert --prefix --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 53 --tokens 9 --eps 1e-12",
        "--model-type bert --d-model 10 --heads 1 --layers 1 --ffn 13 --vocab 17 --tokens 1",
        "--model-type bert --prefix --gamma-beta --d-model 21 --heads 3 --layers 3 --ffn 30 --vocab 31 --tokens 16 "
        "--positions 16",
    };
    OnednnBackend backend;
    for (const std::string arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        WholeModel model(backend, converted_weights(dir, arguments));
        CHECK_FALSE(model.has_logits());
        const ModelRun run = model.run(read_ids(dir / "ids.txt"));
        for (size_t l = 0; l < run.layers.size(); ++l) {
            CHECK_FALSE(run.layers[l].visibility.causal);
            CHECK(max_abs_diff(run.layers[l].attention,
                               read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))) < 1e-5);
        }
        const Tensor expected_hidden = read_npy(dir / "expected_hidden.npy");
        CHECK(max_abs_diff(run.hidden_states, expected_hidden) < 1e-5 * magnitude(expected_hidden));
        CHECK(run.logits.empty());
    }
}

TEST_CASE("open_whole_model takes a GGUF bert file as the folder's encoder, without logits") {
    OnednnBackend backend;
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_transformer.py",
                          "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 9 --vocab 31 --tokens 5");
    convert_folder(dir.path().string(), dir / "model.gguf");
    const std::unique_ptr<WholeModel> gguf = open_whole_model(backend, dir / "model.gguf");
    const std::unique_ptr<WholeModel> folder = open_whole_model(backend, dir.path().string());
    CHECK(gguf->description().architecture == "bert");
    CHECK(gguf->description().n_layers == 2);
    CHECK(gguf->description().max_tokens == folder->description().max_tokens);
    CHECK_FALSE(gguf->has_logits());
    const std::vector<int> ids = read_ids(dir / "ids.txt");
    const ModelRun a = gguf->run(ids), b = folder->run(ids);
    for (size_t l = 0; l < a.layers.size(); ++l)
        CHECK(max_abs_diff(a.layers[l].attention, b.layers[l].attention) < 1e-6);
    CHECK(a.logits.empty());
}

TEST_CASE("hostile GGUF bert files are refused naming the file and the key or tensor") {
    ScratchDir bert;
    make_reference_folder(bert, "reference_hf_transformer.py",
                          "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    auto expect_refused = [&](const Spoil& spoil, const std::string& fragment) {
        CAPTURE(fragment);
        const std::string path = bert / "bad.gguf";
        convert_folder(bert.path().string(), path, spoil);
        expect_error(ErrorKind::bad_input, [&] { read_gguf_transformer(GgufFile(path)); }, {"bad.gguf", fragment});
    };
    expect_refused({{"blk.1.attn_k.weight"}, {}, ""}, "has no tensor \"blk.1.attn_k.weight\"");
    expect_refused({{"token_types.weight"}, {}, ""}, "has no tensor \"token_types.weight\"");
    expect_refused({{"token_embd_norm.bias"}, {}, ""}, "has no tensor \"token_embd_norm.bias\"");
    expect_refused({{"blk.0.layer_output_norm.weight"}, {}, ""}, "has no tensor \"blk.0.layer_output_norm.weight\"");
    expect_refused({{"position_embd.weight"}, {}, ""}, "has no tensor \"position_embd.weight\"");
    expect_refused({{}, {{"bert.feed_forward_length", 24}}, ""},
                   "tensor \"blk.0.ffn_up.weight\" has shape [20, 16], expected [24, 16]");
    expect_refused({{}, {{"bert.context_length", 512}}, ""},
                   "tensor \"position_embd.weight\" has shape [64, 16], expected [512, 16]");
    expect_refused({{}, {{"bert.embedding_length", 18}}, ""},
                   "tensor \"token_embd.weight\" has shape [30, 16], expected [30, 18]");
    expect_refused({{}, {{"bert.block_count", 3}}, ""}, "has no tensor \"blk.2.attn_q.weight\"");
    expect_refused({{}, {{"bert.attention.head_count", 3}}, ""},
                   "bert.embedding_length 16 is not divisible by 3 heads");
    expect_refused({{}, {}, "", true}, "bert.attention.causal is true");
}

}  // TEST_SUITE("model")
