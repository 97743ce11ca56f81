// attn-viz model on a GGUF bert file: a random BERT folder with its WordPiece tokenizer.json
// (scripts/reference_hf_transformer.py) converted as llama.cpp's BertModel does
// (gguf_transformer_conversion.hpp) runs with the file's own tokenizer to the folder's tokens and
// attention, and refuses --generate as the folder does.
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "gguf_transformer_conversion.hpp"
#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE(
    "model --model BERT.gguf: its own WordPiece tokenizer ([CLS] ... [SEP]) and the folder's attention; no "
    "--generate") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_transformer.py",
        "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 70 --tokens 3 --tokenizer");
    convert_folder(dir.path().string(), dir / "bert.gguf");
    auto run = [&](const std::string& model, const std::string& name) {
        const CommandResult r = run_attn_viz("model -q --model " + model + " --text \"The cat sat.\" --out " +
                                             (dir / name) + " --dump-attention " + (dir / (name + ".npy")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        return nlohmann::json::parse(read_text(dir / (name + "/stats.json")));
    };
    const nlohmann::json from_gguf = run(dir / "bert.gguf", "gguf"), from_folder = run(dir.path().string(), "folder");
    CHECK(from_gguf["tokens"] == nlohmann::json::array({"[CLS]", "the", "cat", "sat", ".", "[SEP]"}));
    CHECK(from_gguf["tokens"] == from_folder["tokens"]);
    CHECK(from_gguf["heads"].size() == 4);
    // GGUF keeps the norm epsilon as float32: the runs agree to rounding.
    CHECK(max_abs_diff(read_npy(dir / "gguf.npy"), read_npy(dir / "folder.npy")) < 1e-6);

    const CommandResult refused =
        run_attn_viz("model --model " + (dir / "bert.gguf") + " --text \"The cat\" --generate 3 --out " + (dir / "no"));
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find("--generate needs a model that predicts next tokens, but this is a bert model") !=
          std::string::npos);
    CHECK(!std::filesystem::exists(dir / "no"));
}

}  // TEST_SUITE("model")
