// attn-viz model --stream-layers on stories260K as GGUF (skipped with a message where
// ../shared/models/stories260K-gguf is absent), on random folders of the other families and on
// encoder-decoders (BART, T5): the whole run's head statistics, pictures (--scale head) and dumps,
// pairs within layers; streaming by itself when the layers do not fit the budget together; the
// options that need every layer at once refused; a folder's truncated shard refused in one line.
#include <algorithm>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_folder_fixture.hpp"
#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace test_support;

namespace {

nlohmann::json stats(const std::string& dir) { return nlohmann::json::parse(read_text(dir + "/stats.json")); }

// `run` whole into dir/whole and with --stream-layers into dir/streamed, each dumping its
// attention (whole.npy, streamed.npy); both must succeed, with the same dump.
void run_whole_and_streamed(const std::string& run, const ScratchDir& dir) {
    const CommandResult whole =
        run_attn_viz(run + " --out " + (dir / "whole") + " --dump-attention " + (dir / "whole.npy"));
    REQUIRE_MESSAGE(whole.exit_code == 0, whole.output);
    const CommandResult streamed = run_attn_viz(run + " --stream-layers --out " + (dir / "streamed") +
                                                " --dump-attention " + (dir / "streamed.npy"));
    REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
    CHECK(read_text(dir / "streamed.npy") == read_text(dir / "whole.npy"));
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model --stream-layers on a folder with a truncated shard: one line naming the file, exit 3") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    const std::filesystem::path shard = folders.sharded / "model-00002-of-00002.safetensors";
    std::filesystem::resize_file(shard, std::filesystem::file_size(shard) - 7);
    const CommandResult r = run_attn_viz("model -q --model " + folders.sharded.string() +
                                         " --tokens 1,2,3 --stream-layers --out " + (dir / "out"));
    CHECK(r.exit_code == 3);  // bad input
    CHECK(r.output.find(shard.string()) != std::string::npos);
    CHECK(r.output.find("file truncated?") != std::string::npos);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(dir / "out"));
}

TEST_CASE_FIXTURE(Stories260kGgufFixture,
                  "model --stream-layers: the whole run's heads, pictures and dump, pairs within layers") {
    if (gguf.empty()) return;
    const std::string model = gguf + "/stories260K.gguf";
    run_whole_and_streamed("model -q --model " + model + " --induction 20 --scale head --svg 3:2", dir);
    for (const std::string file :
         {"layer_00/head_00.png", "layer_04/head_07.png", "layer_03/head_02.svg", "overview.png"}) {
        CAPTURE(file);
        CHECK(read_text(dir / ("streamed/" + file)) == read_text(dir / ("whole/" + file)));
    }
    const nlohmann::json a = stats(dir / "whole"), b = stats(dir / "streamed");
    CHECK(b["heads"] == a["heads"]);
    CHECK(b["induction_input"] == a["induction_input"]);
    CHECK(b["pair_scope"] == "layer");
    CHECK(b["js_distance"][0][1] == a["js_distance"][0][1]);  // L0H0 and L0H1
    CHECK(b["js_distance"][0][8].is_null());                  // L0H0 and L1H0
    CHECK(!a["js_distance"][0][8].is_null());
    CHECK(!std::filesystem::exists(dir / "streamed/report.html"));
}

// GPT-2, GPT-NeoX and BERT run their blocks through the same visitor as the Llama family.
TEST_CASE("model --stream-layers on GPT-2, GPT-NeoX and BERT folders: the whole run's heads and dump") {
    for (const std::string arguments :
         {"--model-type gpt2 --d-model 24 --heads 4 --layers 3 --ffn 37 --vocab 270 --tokens 9",
          "--model-type gpt_neox --d-model 30 --heads 3 --layers 2 --ffn 41 --vocab 271 --tokens 7 --rotary-pct 0.4",
          "--model-type bert --d-model 16 --heads 2 --layers 3 --ffn 20 --vocab 70 --tokens 6 --eps 1e-12"}) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_transformer.py", arguments + " --tokenizer");
        const std::string run =
            "model -q --model " + dir.path().string() + " --text \"the cat sat on the mat\" --scale head";
        run_whole_and_streamed(run, dir);
        CHECK(read_text(dir / "streamed/layer_01/head_01.png") == read_text(dir / "whole/layer_01/head_01.png"));
        const nlohmann::json a = stats(dir / "whole"), b = stats(dir / "streamed");
        CHECK(a["heads"].size() > 2);
        CHECK(b["heads"] == a["heads"]);
        CHECK(b["pair_scope"] == "layer");
    }
}

// The decoder families of issue 23 through the CLI, by token ids (the bytes of "Hello world!" in
// the folders' small byte-level tokenizer): each runs whole and layer by layer with the same heads
// and dump, and a sliding layer's cells outside the window are 0 in the dump.
TEST_CASE("model --stream-layers on Qwen3, Gemma 2, Gemma 3 and Phi-3 folders: the whole run's heads and dump") {
    const std::pair<const char*, std::string> families[] = {
        {"reference_hf_llama.py",
         "--model-type qwen3 --d-model 16 --heads 4 --kv-heads 2 --head-dim 6 --layers 2 --ffn 20 --vocab 270 "
         "--tokens 12 --sliding-window 4 --use-sliding-window --max-window-layers 1"},
        {"reference_hf_gemma.py",
         "--model-type gemma2 --d-model 16 --heads 2 --kv-heads 1 --head-dim 8 --layers 2 --ffn 20 --vocab 270 "
         "--tokens 12 --sliding-window 4 --attn-softcap 3 --final-softcap 5"},
        {"reference_hf_gemma.py",
         "--model-type gemma3_text --d-model 16 --heads 2 --kv-heads 1 --head-dim 8 --layers 2 --ffn 20 "
         "--vocab 270 --tokens 12 --sliding-window 4 --pattern 2"},
        {"reference_hf_llama.py",
         "--model-type phi3 --d-model 16 --heads 2 --kv-heads 1 --layers 2 --ffn 20 --vocab 270 --tokens 12 "
         "--sliding-window 4 --partial-rotary 0.5"},
    };
    for (const auto& [script, arguments] : families) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, script, arguments + " --tokenizer");
        const std::string ids = "72,101,108,108,111,32,119,111,114,108,100,33";
        run_whole_and_streamed("model -q --model " + dir.path().string() + " --tokens " + ids + " --scale head", dir);
        const nlohmann::json a = stats(dir / "whole"), b = stats(dir / "streamed");
        CHECK(a["heads"].size() >= 4);
        CHECK(b["heads"] == a["heads"]);
        // Layer 0 slides in each (qwen3 from max_window_layers 1: layer 1): query 11 sees keys 8..11 only.
        const attn_viz::Tensor dump = attn_viz::read_npy(dir / "whole.npy");  // [L, H, T, T]
        const int64_t H = dump.dim(1), T = dump.dim(2),
                      sliding = std::string(arguments).find("qwen3") != std::string::npos ? 1 : 0;
        double outside = 0, inside = 0;
        for (int64_t j = 0; j < T; ++j)
            (j < 8 ? outside : inside) += dump.data[static_cast<size_t>(((sliding * H) * T + 11) * T + j)];
        CHECK(outside == 0.0);
        CHECK(inside == doctest::Approx(1.0).epsilon(1e-5));

        // Circuits: attribution needs logits that are sums of head terms (not Gemma's post-norms and
        // soft-capped logits), composition a bilinear W_QK and W_OV (not q/k norms or post-norms).
        const bool gemma = arguments.find("gemma") != std::string::npos,
                   qwen3 = arguments.find("qwen3") != std::string::npos;
        const std::string model = "model -q --model " + dir.path().string() + " --tokens " + ids + " --out ";
        const CommandResult attribution = run_attn_viz(model + (dir / "dla") + " --logit-attribution");
        CHECK_MESSAGE(attribution.exit_code == (gemma ? 2 : 0), attribution.output);
        if (gemma)
            CHECK(
                attribution.output.find("--logit-attribution: this model's logits do not split into per-head terms") !=
                std::string::npos);
        const CommandResult composition = run_attn_viz(model + (dir / "composition") + " --composition");
        CHECK_MESSAGE(composition.exit_code == (gemma || qwen3 ? 2 : 0), composition.output);
        if (gemma || qwen3)
            CHECK(composition.output.find("--composition: composition scores do not describe this model's heads") !=
                  std::string::npos);
    }
}

// Encoder-decoders stream each stack's attention layers into its folder: the encoder's first, then
// per decoder layer its self- and cross-attention (cross maps [T, S], their alignment statistics).
TEST_CASE(
    "model --stream-layers on BART and T5 folders: the whole run's heads, pictures and three dumps, pairs within "
    "layers") {
    for (const std::string arguments :
         {"--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 20 "
          "--vocab 300 --source-tokens 9 --target-tokens 6",
          "--model-type t5 --d-model 10 --heads 2 --head-dim 5 --encoder-layers 1 --decoder-layers 2 "
          "--ffn 13 --vocab 300 --source-tokens 7 --target-tokens 1 --gated"}) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_seq2seq.py", arguments + " --tokenizer");
        const std::string run = "model -q --model " + dir.path().string() + " --tokens " +
                                id_list(read_ids(dir / "source_ids.txt")) + " --target-tokens " +
                                id_list(read_ids(dir / "target_ids.txt")) + " --scale head";
        const CommandResult whole =
            run_attn_viz(run + " --out " + (dir / "whole") + " --dump-attention " + (dir / "whole.npy"));
        REQUIRE_MESSAGE(whole.exit_code == 0, whole.output);
        const CommandResult streamed = run_attn_viz(run + " --stream-layers --out " + (dir / "streamed") +
                                                    " --dump-attention " + (dir / "streamed.npy"));
        REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
        for (const std::string stack : {"encoder", "decoder", "cross"}) {
            CAPTURE(stack);
            CHECK(read_text(dir / ("streamed." + stack + ".npy")) == read_text(dir / ("whole." + stack + ".npy")));
            for (const std::string file : {"/layer_00/head_01.png", "/overview.png"})
                CHECK(read_text(dir / ("streamed/" + stack + file)) == read_text(dir / ("whole/" + stack + file)));
            const nlohmann::json a = stats(dir / ("whole/" + stack)), b = stats(dir / ("streamed/" + stack));
            CHECK(b["heads"] == a["heads"]);
            CHECK(b["tokens"] == a["tokens"]);
            CHECK(b.value("key_tokens", nlohmann::json()) == a.value("key_tokens", nlohmann::json()));
            CHECK(b["pair_scope"] == "layer");
            CHECK(b["js_distance"][0][1] == a["js_distance"][0][1]);        // L0H0 and L0H1
            const size_t next_layer = b["js_distance"].size() > 4 ? 4 : 2;  // L1H0: 4 heads a layer (bart), 2 (t5)
            if (b["js_distance"].size() > next_layer) CHECK(b["js_distance"][0][next_layer].is_null());
        }
        const nlohmann::json a = stats(dir / "whole"), b = stats(dir / "streamed");
        CHECK(b["heads"] == a["heads"]);  // every stack's heads, the cross heads with their alignment
        CHECK(b["stacks"] == a["stacks"]);
        CHECK(b["source_tokens"] == a["source_tokens"]);
        CHECK(b["target_tokens"] == a["target_tokens"]);
        CHECK(b["pair_scope"] == "layer");
        CHECK(!a.contains("pair_scope"));
    }
}

TEST_CASE("model on an encoder-decoder streams by itself when its three stacks do not fit the memory budget together") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 20 --vocab 300 "
        "--source-tokens 64 --target-tokens 48 --tokenizer");
    // 300 KB holds one attention layer (and the model's files), not the ~750 KB of all eight.
    const std::string run = "model -q --model " + dir.path().string() + " --tokens " +
                            id_list(read_ids(dir / "source_ids.txt")) + " --target-tokens " +
                            id_list(read_ids(dir / "target_ids.txt")) + " --max-memory 300k --out ";
    const CommandResult streamed = run_attn_viz(run + (dir / "auto"));
    REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
    CHECK(stats(dir / "auto")["pair_scope"] == "layer");
    CHECK(stats(dir / "auto/cross")["pair_scope"] == "layer");
    // --html needs every layer at once: the whole run, which does not fit, is refused as before.
    const CommandResult html = run_attn_viz(run + (dir / "html") + " --html");
    CHECK(html.exit_code == 3);
    CHECK(html.output.find("running an encoder-decoder over 64 source and 48 target tokens needs") !=
          std::string::npos);
    CHECK(!std::filesystem::exists(dir / "html"));
    for (const std::string option : {"--html", "--ablate cross/all"}) {
        const CommandResult refused = run_attn_viz(run + (dir / "refused") + " --stream-layers " + option);
        CHECK(refused.exit_code == 2);
        CHECK(refused.output.find("--stream-layers writes each layer's report before the next layer runs: " +
                                  option.substr(0, option.find(' ')) + " need every layer at once") !=
              std::string::npos);
    }
    CHECK(!std::filesystem::exists(dir / "refused"));
}

TEST_CASE_FIXTURE(Stories260kGgufFixture,
                  "model streams by itself when its layers do not fit the memory budget together") {
    if (gguf.empty()) return;
    const std::string model = gguf + "/stories260K.gguf";
    // 400 KB holds one layer of 41 tokens (~280 KB), not five.
    const std::string run = "model -q --model " + model + " --induction 20 --max-memory 400k";
    const CommandResult streamed = run_attn_viz(run + " --out " + (dir / "auto"));
    REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
    CHECK(stats(dir / "auto")["pair_scope"] == "layer");
    const CommandResult whole = run_attn_viz("model -q --model " + model + " --induction 20 --out " + (dir / "whole"));
    REQUIRE_MESSAGE(whole.exit_code == 0, whole.output);
    CHECK(!stats(dir / "whole").contains("pair_scope"));
    // An option that needs every layer at once keeps the whole run, which does not fit: refused as before.
    const CommandResult html = run_attn_viz(run + " --html --out " + (dir / "html"));
    CHECK(html.exit_code == 3);
    CHECK(html.output.find("running 5 layers on 41 tokens needs") != std::string::npos);
    const CommandResult tiny =
        run_attn_viz("model -q --model " + model + " --induction 20 --max-memory 200k --out " + (dir / "tiny"));
    CHECK(tiny.exit_code == 3);
    CHECK(tiny.output.find("running one layer on 41 tokens needs") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "html"));
    CHECK(!std::filesystem::exists(dir / "tiny"));
}

TEST_CASE_FIXTURE(Stories260kGgufFixture, "model --stream-layers refuses what needs every layer at once") {
    if (gguf.empty()) return;
    const std::string model = gguf + "/stories260K.gguf";
    const std::string run = "model -q --model " + model + " --induction 8 --stream-layers --out " + (dir / "out");
    for (const std::string option : {"--html", "--generate 3", "--rollout", "--ablate all", "--flow"}) {
        CAPTURE(option);
        const CommandResult r = run_attn_viz(run + " " + option);
        CHECK(r.exit_code == 2);
        CHECK(r.output.find("--stream-layers writes each layer's report before the next layer runs: " +
                            option.substr(0, option.find(' ')) + " need every layer at once") != std::string::npos);
    }
    const CommandResult corpus = run_attn_viz("model -q --model " + model + " --inputs " + (dir / "c.jsonl") +
                                              " --stream-layers --out " + (dir / "out"));
    CHECK(corpus.exit_code == 2);
    CHECK(!std::filesystem::exists(dir / "out"));
}

}  // TEST_SUITE("model")
