// attn-viz model on a GGUF gemma2 file: a random Gemma 2 folder (scripts/reference_hf_gemma.py)
// converted as llama.cpp's Gemma2Model does (gguf_decoder_conversion.hpp) runs on --tokens to the
// float64 reference's attention, sliding layer included (the converter's stand-in vocabulary names
// the tokens), and on --text through that vocabulary laid out as Gemma's (BOS 2, no space prefix).
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "gguf_decoder_conversion.hpp"
#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE("model --model GEMMA2.gguf --tokens: the reference's attention (a sliding layer past its window)") {
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_gemma.py",
                          "--model-type gemma2 --d-model 16 --heads 2 --kv-heads 1 --head-dim 8 --layers 2 --ffn 20 "
                          "--vocab 30 --tokens 9 "
                          "--sliding-window 4 --attn-softcap 5 --final-softcap 6");
    convert_decoder_folder(dir.path().string(), dir / "gemma2.gguf");
    std::string ids;
    for (int id : read_ids(dir / "ids.txt")) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    const CommandResult r = run_attn_viz("model -q --model " + (dir / "gemma2.gguf") + " --tokens " + ids + " --out " +
                                         (dir / "gguf") + " --dump-attention " + (dir / "gguf.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const Tensor from_gguf = read_npy(dir / "gguf.npy");  // [L, H, T, T]
    REQUIRE(from_gguf.shape == std::vector<int64_t>{2, 2, 9, 9});
    const int64_t per_layer = 2 * 9 * 9;
    for (int64_t l = 0; l < 2; ++l) {
        const Tensor expected = read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"));
        for (int64_t i = 0; i < per_layer; ++i)
            CHECK(std::fabs(from_gguf.data[l * per_layer + i] - expected.data[i]) < 1e-5);
    }
    CHECK(from_gguf.data[8 * 9 + 0] == 0.0f);  // layer 0 slides: the last query does not see the first key
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "gguf/stats.json"));
    CHECK(stats["heads"].size() == 4);

    // --text through the file's own (Gemma-style) vocabulary: BOS 2 first, no space prefix.
    const CommandResult text =
        run_attn_viz("model -q --model " + (dir / "gemma2.gguf") + " --text \"abc abc\" --out " + (dir / "text"));
    REQUIRE_MESSAGE(text.exit_code == 0, text.output);
    const nlohmann::json text_stats = nlohmann::json::parse(read_text(dir / "text/stats.json"));
    CHECK(text_stats["tokens"] == nlohmann::json{"<bos>", "abc", " ", "abc"});
}

}  // TEST_SUITE("model")
