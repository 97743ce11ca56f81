// attn-viz model --model DIR on stories260K as a Hugging Face folder (skipped with a message where
// ../shared/models/stories260K-hf is absent): the same attention, labels and story as the llama2.c
// checkpoint it was converted from, compare between the two formats, and a folder of a family
// model mode does not run.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE(
    "model --model stories260K-hf: the attention, tokens and story of stories260K.bin, and compare between them") {
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors", "tokenizer.json"});
    const std::string bin = stories260k_dir();
    if (hf.empty() || bin.empty()) return;
    ScratchDir dir;
    const std::string text = " --text \"Once upon a time, there was a little girl named Lily.\" --generate 8";
    const CommandResult from_bin =
        run_attn_viz("model -q --checkpoint " + bin + "/stories260K.bin --tokenizer " + bin + "/tok512.bin" + text +
                     " --out " + (dir / "bin") + " --dump-attention " + (dir / "bin.npy"));
    REQUIRE_MESSAGE(from_bin.exit_code == 0, from_bin.output);
    const CommandResult r =
        run_attn_viz("model --model " + hf + text + " --out " + (dir / "hf") + " --dump-attention " + (dir / "hf.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("prompt: Once upon a time, there was a little girl named Lily.\ngreedy continuation (8 "
                        "tokens): She loved") != std::string::npos);
    CHECK(max_abs_diff(read_npy(dir / "hf.npy"), read_npy(dir / "bin.npy")) < 1e-5);
    const nlohmann::json hf_stats = nlohmann::json::parse(read_text(dir / "hf/stats.json"));
    const nlohmann::json bin_stats = nlohmann::json::parse(read_text(dir / "bin/stats.json"));
    CHECK(hf_stats["tokens"] == bin_stats["tokens"]);  // the same labels: "<s>", " Once", ...

    // compare: the folder against the checkpoint, every head alike (JS distance, a square root, ~1e-5).
    const CommandResult compared = run_attn_viz("compare " + hf + " " + bin + "/stories260K.bin --tokenizer " + bin +
                                                "/tok512.bin --text \"Lily saw a dog.\" --fail-above 1e-3");
    CHECK_MESSAGE(compared.exit_code == 0, compared.output);
}

TEST_CASE("model --model on a folder of a family model mode does not run names the supported ones") {
    ScratchDir dir;
    write_text(dir / "config.json", R"({"model_type": "mbart", "d_model": 8})");
    const CommandResult r = run_attn_viz("model --model " + dir.path().string() + " --text hi --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("config.json") != std::string::npos);
    CHECK(r.output.find("\"mbart\" is not supported (supported: llama, mistral, ministral, qwen2, qwen3, gemma, "
                        "gemma2, gemma3_text, "
                        "phi3, starcoder2, smollm3, stablelm, olmo, olmo2, granite, cohere, gpt_neo, opt, gpt_bigcode, "
                        "gpt2, gpt_neox, "
                        "bert, bart, t5)") != std::string::npos);
}

}  // TEST_SUITE("model")
