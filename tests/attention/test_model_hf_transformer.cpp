// Hugging Face GPT-2, GPT-NeoX (Pythia) and BERT folders: random small models of each family (one
// head, T = 1, odd sizes, prefixed and bare tensor names, one file or two shards, partial rotary,
// parallel and sequential residuals, tied and separate classifiers, TensorFlow's gamma/beta
// names) against the float64 forward of scripts/reference_hf_transformer.py, written from
// transformers' definitions; head ablation against the reference's forward with that head zeroed;
// hostile folders.
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "head_ablation.hpp"
#include "hf_reference_folder.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

void make_reference_folder(const ScratchDir& dir, const std::string& arguments) {
    test_support::make_reference_folder(dir, "reference_hf_transformer.py", arguments);
}

// Runs the folder's model on its ids and compares attention (1e-5) and the final hidden states
// and logits (1e-5 of their largest magnitude) with the reference's. A decoder has logits and a
// causal mask; an encoder neither, unless `causal` (BERT's is_decoder).
void check_against_reference(OnednnBackend& backend, const ScratchDir& dir, bool decoder, bool causal = false) {
    WholeModel model(backend, read_hf_transformer_folder(dir.path().string()));
    CHECK(model.has_logits() == decoder);
    // A text pair's token types where the reference wrote them (--pair-at), else every token of type 0.
    const std::vector<int> types =
        std::filesystem::exists(dir / "types.txt") ? read_ids(dir / "types.txt") : std::vector<int>{};
    const ModelRun run = model.run(read_ids(dir / "ids.txt"), {.token_types = types});
    CHECK(run.token_types == types);
    double attention_error = 0;
    for (size_t l = 0; l < run.layers.size(); ++l) {
        const LayerResult& layer = run.layers[l];
        attention_error = std::max(
            attention_error,
            max_abs_diff(layer.attention, read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))));
        CHECK(layer.visibility.causal == (decoder || causal));
        CHECK(layer.contribution_norms.shape == std::vector<int64_t>{layer.attention.dim(0), layer.attention.dim(1)});
    }
    const Tensor expected_hidden = read_npy(dir / "expected_hidden.npy");
    const double hidden_error = max_abs_diff(run.hidden_states, expected_hidden);
    MESSAGE("max attention error " << attention_error << ", max hidden-state error " << hidden_error << " of "
                                   << magnitude(expected_hidden));
    CHECK(attention_error < 1e-5);
    CHECK(hidden_error < 1e-5 * magnitude(expected_hidden));
    if (!decoder) {
        CHECK(run.logits.empty());
        return;
    }
    const Tensor expected_logits = read_npy(dir / "expected_logits.npy");
    const double logit_error = max_abs_diff(run.logits, expected_logits);
    MESSAGE("max logit error " << logit_error << " of " << magnitude(expected_logits));
    CHECK(logit_error < 1e-5 * magnitude(expected_logits));
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "HF GPT-2, GPT-NeoX and BERT folders: attention, hidden states and logits equal a float64 forward written from "
    "transformers' definitions") {
    const char* cases[] = {
        "--model-type gpt2 --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 53 --tokens 9",
        "--model-type gpt2 --prefix --d-model 15 --heads 1 --layers 1 --ffn 7 --vocab 19 --tokens 1 --shards 2",
        "--model-type gpt2 --prefix --d-model 21 --heads 3 --layers 3 --ffn 40 --vocab 31 --tokens 20 --positions 20 "
        "--eps 1e-6 --lm-head separate",
        "--model-type gpt_neox --prefix --d-model 30 --heads 3 --layers 2 --ffn 41 --vocab 37 --tokens 13 --rotary-pct "
        "0.4",
        "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 23 --vocab 29 --tokens 7 --sequential-residual "
        "--shards 2 --rotary-base 500",
        "--model-type gpt_neox --prefix --d-model 12 --heads 1 --layers 1 --ffn 5 --vocab 13 --tokens 1 --rotary-pct "
        "1.0 --lm-head tied",
        "--model-type bert --prefix --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 53 --tokens 9 --eps 1e-12",
        "--model-type bert --d-model 10 --heads 1 --layers 1 --ffn 13 --vocab 17 --tokens 1 --eps 1e-12",
        // Text pairs: segment B (token type 1) from position 4 of 11, and a pair whose B is all but the first token.
        "--model-type bert --d-model 18 --heads 3 --layers 2 --ffn 25 --vocab 29 --tokens 11 --eps 1e-12 --pair-at 4",
        "--model-type bert --prefix --d-model 9 --heads 1 --layers 1 --ffn 11 --vocab 13 --tokens 5 --eps 1e-12 "
        "--pair-at 1",
        "--model-type bert --prefix --gamma-beta --d-model 21 --heads 3 --layers 3 --ffn 30 --vocab 31 --tokens 16 "
        "--positions 16 --shards 2",
    };
    OnednnBackend backend;
    for (const std::string arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, arguments);
        check_against_reference(backend, dir, arguments.find("bert") == std::string::npos);
    }
}

TEST_CASE("HF config keys beside the families' defaults: BERT's is_decoder, GPT-NeoX's v5 rope_parameters") {
    OnednnBackend backend;
    ScratchDir bert, neox, neox_v5;
    make_reference_folder(
        bert,
        "--model-type bert --d-model 12 --heads 3 --layers 2 --ffn 17 --vocab 19 --tokens 11 --eps 1e-12 --is-decoder");
    check_against_reference(backend, bert, false, true);
    // rope_theta 500000 and a quarter of each head rotated, read from rope_parameters alone.
    make_reference_folder(neox,
                          "--model-type gpt_neox --d-model 32 --heads 2 --layers 2 --ffn 23 --vocab 29 --tokens 21 "
                          "--rope-format v5 --rotary-base 500000 --rotary-pct 0.25");
    CHECK(read_text(neox / "config.json").find("rotary_pct") == std::string::npos);
    check_against_reference(backend, neox, true);
    make_reference_folder(neox_v5,
                          "--model-type gpt_neox --d-model 16 --heads 2 --layers 1 --ffn 11 --vocab 13 --tokens 9 "
                          "--rope-format v5 --rotary-base 1000000 --rotary-pct 1.0");
    check_against_reference(backend, neox_v5, true);
}

TEST_CASE(
    "GPT-2 and GPT-NeoX head ablation: the loss and KL of the reference's forward with that head's output zeroed") {
    const char* cases[] = {
        "--model-type gpt2 --d-model 24 --heads 4 --layers 3 --ffn 37 --vocab 53 --tokens 9 --ablate 1:2",
        "--model-type gpt2 --prefix --d-model 15 --heads 3 --layers 2 --ffn 7 --vocab 19 --tokens 5 --ablate 1:0",
        "--model-type gpt_neox --prefix --d-model 30 --heads 3 --layers 3 --ffn 41 --vocab 37 --tokens 13 --rotary-pct "
        "0.4 --ablate 0:1",
        "--model-type gpt_neox --d-model 16 --heads 2 --layers 2 --ffn 23 --vocab 29 --tokens 7 --sequential-residual "
        "--ablate 0:0",
    };
    OnednnBackend backend;
    for (const std::string arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, arguments);
        const std::string head = arguments.substr(arguments.find("--ablate ") + 9);
        const AblatedHead id{std::stoi(head.substr(0, head.find(':'))), std::stoi(head.substr(head.find(':') + 1))};
        WholeModel model(backend, read_hf_transformer_folder(dir.path().string()));
        const std::vector<int> ids = read_ids(dir / "ids.txt");
        const ModelRun clean = model.run(ids);
        // Rerunning from any block with its own attention output gives the clean logits back.
        for (size_t l = 0; l < clean.layers.size(); ++l)
            CHECK(max_abs_diff(model.logits_from(clean, l, clean.layers[l].output), clean.logits) <
                  1e-5 * magnitude(clean.logits));

        const AblationReport report = ablate_heads(model, backend, clean, {id}, AblationMode::zero);
        const Tensor expected_clean = read_npy(dir / "expected_logits.npy"),
                     expected_ablated = read_npy(dir / "expected_ablated_logits.npy");
        const double loss = next_token_loss(expected_ablated, ids),
                     kl = mean_next_token_kl(expected_clean, expected_ablated);
        MESSAGE("ablated loss " << report.heads[0].loss << " (reference " << loss << "), KL " << report.heads[0].kl
                                << " (reference " << kl << ")");
        CHECK(report.clean_loss == doctest::Approx(next_token_loss(expected_clean, ids)).epsilon(1e-5));
        CHECK(report.heads[0].loss == doctest::Approx(loss).epsilon(1e-5));
        CHECK(report.heads[0].kl == doctest::Approx(kl).epsilon(1e-3).scale(1e-3));
        CHECK(kl > 1e-5);  // the head matters, so a wrong head or layer would show
    }
}

TEST_CASE("a BERT model has no logits to rerun from") {
    ScratchDir dir;
    make_reference_folder(dir, "--model-type bert --d-model 8 --heads 2 --layers 2 --ffn 12 --vocab 10 --tokens 3");
    OnednnBackend backend;
    WholeModel model(backend, read_hf_transformer_folder(dir.path().string()));
    const ModelRun run = model.run(read_ids(dir / "ids.txt"));
    CHECK(run.residual.size() == 2);
    CHECK_THROWS_AS(model.logits_from(run, 0, run.layers[0].output), Error);
}

TEST_CASE("hostile GPT-2, GPT-NeoX and BERT folders: lying configs get one-line errors naming the file") {
    ScratchDir gpt2, neox, bert;
    make_reference_folder(
        gpt2, "--model-type gpt2 --prefix --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    make_reference_folder(
        neox,
        "--model-type gpt_neox --prefix --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3 --shards 2");
    make_reference_folder(bert, "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 30 --tokens 3");
    // Replaces `from` by `to` in the folder's config.json, expects `needles` in the error, restores it.
    auto expect_config_error = [](const ScratchDir& dir, const std::string& from, const std::string& to,
                                  std::vector<std::string> needles) {
        CAPTURE(to);
        const std::string original = read_text(dir / "config.json");
        std::string text = original;
        REQUIRE(text.find(from) != std::string::npos);
        write_text(dir / "config.json", text.replace(text.find(from), from.size(), to));
        expect_error(
            ErrorKind::bad_input, [&] { read_hf_transformer_folder(dir.path().string()); }, needles);
        write_text(dir / "config.json", original);
    };
    const std::string gpt2_weights = gpt2 / "model.safetensors", neox_index = neox / "model.safetensors.index.json";
    expect_config_error(gpt2, "\"n_embd\": 16", "\"n_embd\": 32",
                        {gpt2_weights, "tensors have width 16 but", "says 32"});
    expect_config_error(gpt2, "\"n_inner\": 20", "\"n_inner\": 24",
                        {gpt2_weights, "mlp.c_fc.weight\" has shape [16, 20], expected [16, 24]"});
    expect_config_error(gpt2, "\"n_positions\": 64", "\"n_positions\": 1024",
                        {gpt2_weights, "wpe.weight\" has shape [64, 16], expected [1024, 16]"});
    expect_config_error(gpt2, "\"n_layer\": 2", "\"n_layer\": 3", {"layer 2 is out of range"});
    expect_config_error(gpt2, "\"scale_attn_weights\": true",
                        "\"scale_attn_weights\": true, \"scale_attn_by_inverse_layer_idx\": true",
                        {gpt2 / "config.json", "scale_attn_by_inverse_layer_idx"});
    expect_config_error(gpt2, "\"activation_function\": \"gelu_new\"", "\"activation_function\": \"quick_gelu\"",
                        {gpt2 / "config.json",
                         "activation \"quick_gelu\" is not supported (supported: gelu, gelu_new, gelu_pytorch_tanh"});
    expect_config_error(gpt2, "\"scale_attn_weights\": true",
                        "\"scale_attn_weights\": true, \"attn_logit_softcapping\": 20",
                        {gpt2 / "config.json", "attn_logit_softcapping = 20 is not supported"});
    expect_config_error(
        gpt2, "\"model_type\": \"gpt2\"", "\"model_type\": \"mbart\"",
        {gpt2 / "config.json",
         "\"mbart\" is not supported (supported: llama, mistral, ministral, qwen2, qwen3, gemma, gemma2, gemma3_text, "
         "phi3, starcoder2, smollm3, stablelm, olmo, olmo2, granite, cohere, gpt_neo, opt, gpt_bigcode, gpt2, "
         "gpt_neox, bert, bart, "
         "t5)"});
    expect_config_error(neox, "\"intermediate_size\": 20", "\"intermediate_size\": 21",
                        {neox_index, "dense_h_to_4h.weight\" has shape [20, 16], expected [21, 16]"});
    expect_config_error(neox, "\"hidden_size\": 16", "\"hidden_size\": 20",
                        {neox_index, "query_key_value.weight\" has shape [48, 16], expected [60, 20]"});
    expect_config_error(neox, "\"num_attention_heads\": 2", "\"num_attention_heads\": 3",
                        {neox / "config.json", "not divisible by 3 heads"});
    expect_config_error(neox, "\"rotary_pct\": 0.25", "\"rotary_pct\": 0.4",
                        {neox / "config.json", "3 rotary features per head"});
    expect_config_error(neox, "\"rotary_pct\": 0.25", "\"rotary_pct\": 2.5",
                        {neox / "config.json", "expected at most 1"});
    expect_config_error(neox, "\"vocab_size\": 30", "\"vocab_size\": 31",
                        {neox_index, "embed_in.weight\" has shape [30, 16], expected [31, 16]"});
    expect_config_error(neox, "\"rotary_emb_base\": 10000.0",
                        "\"rotary_emb_base\": 10000.0, \"rope_scaling\": {\"type\": \"dynamic\"}",
                        {neox / "config.json", "rope_scaling \"dynamic\""});
    expect_config_error(
        bert, "\"max_position_embeddings\": 64", "\"max_position_embeddings\": 512",
        {bert / "model.safetensors", "position_embeddings.weight\" has shape [64, 16], expected [512, 16]"});
    expect_config_error(bert, "\"type_vocab_size\": 2", "\"type_vocab_size\": 1",
                        {bert / "model.safetensors", "token_type_embeddings.weight"});
    expect_config_error(bert, "\"position_embedding_type\": \"absolute\"",
                        "\"position_embedding_type\": \"relative_key\"",
                        {bert / "config.json", "\"relative_key\" is not supported"});
    expect_config_error(bert, "\"hidden_act\": \"gelu\"", "\"hidden_act\": 7",
                        {bert / "config.json", "\"hidden_act\" is 7, expected a string"});
    expect_config_error(bert, "\"num_hidden_layers\": 2", "\"num_hidden_layers\": -2",
                        {bert / "config.json", "expected a positive integer"});
}

TEST_CASE("a transformer run refuses more tokens than positions and ids outside the vocabulary") {
    ScratchDir dir;
    make_reference_folder(
        dir, "--model-type gpt2 --d-model 8 --heads 2 --layers 1 --ffn 12 --vocab 10 --tokens 2 --positions 4");
    OnednnBackend backend;
    WholeModel model(backend, read_hf_transformer_folder(dir.path().string()));
    expect_error(ErrorKind::bad_input,
                 [&] {
                     model.run({1, 2, 3, 4, 5});
                 },
                 {"5 tokens exceed the model's sequence length 4"});
    expect_error(ErrorKind::bad_input,
                 [&] {
                     model.run({1, 10});
                 },
                 {"token 1 is id 10, outside the vocabulary (0..9)"});
    expect_error(ErrorKind::bad_input, [&] { model.run({}); }, {"no tokens"});
}

}  // TEST_SUITE("model")
