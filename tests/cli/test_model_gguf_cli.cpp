// attn-viz model --model FILE.gguf on stories260K as GGUF (skipped with a message where
// ../shared/models/stories260K-gguf is absent): the F32 file against the llama2.c checkpoint, the
// Q8_0 copy, a llama2.c checkpoint without its tokenizer, and compare between the formats.
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// ../shared/models/stories260K-gguf, or "" (with a message) where it is absent.
std::string gguf_dir(const std::string& bin) {
    if (bin.empty()) return "";
    if (std::filesystem::exists(bin + "-gguf/stories260K-Q8_0.gguf")) return bin + "-gguf";
    MESSAGE("skipped: " << bin << "-gguf is absent");
    return "";
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model --model stories260K.gguf: the attention of stories260K.bin, its own tokenizer, and Q8_0 runs") {
    const std::string bin = stories260k_dir();
    if (bin.empty()) return;
    const std::string gguf = gguf_dir(bin);
    if (gguf.empty()) return;
    ScratchDir dir;
    const std::string text = " --text \"Once upon a time, there was a little girl named Lily.\" --generate 8";
    const CommandResult from_bin =
        run_attn_viz("model -q --checkpoint " + bin + "/stories260K.bin --tokenizer " + bin + "/tok512.bin" + text +
                     " --out " + (dir / "bin") + " --dump-attention " + (dir / "bin.npy"));
    REQUIRE_MESSAGE(from_bin.exit_code == 0, from_bin.output);
    for (const char* file : {"stories260K.gguf", "stories260K-Q8_0.gguf"}) {
        CAPTURE(file);
        const std::string name = file;
        const CommandResult r = run_attn_viz("model --timings --model " + gguf + "/" + name + text + " --out " +
                                             (dir / name) + " --dump-attention " + (dir / (name + ".npy")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find("peak RSS") != std::string::npos);
        CHECK(r.output.find("prompt: Once upon a time, there was a little girl named Lily.\ngreedy continuation (8 "
                            "tokens): She loved") != std::string::npos);
        CHECK(std::filesystem::exists(dir / (name + "/layer_04/head_07.png")));
        const double difference = max_abs_diff(read_npy(dir / (name + ".npy")), read_npy(dir / "bin.npy"));
        if (name == "stories260K.gguf")
            CHECK(difference < 1e-5);
        else
            CHECK((difference > 0 && difference < 0.05));
    }
    const CommandResult no_tokenizer =
        run_attn_viz("model -q --checkpoint " + bin + "/stories260K.bin --tokens 1,2 --out " + (dir / "x"));
    CHECK(no_tokenizer.exit_code == 3);
    CHECK(no_tokenizer.output.find("stories260K.bin: is a llama2.c checkpoint, whose tokenizer is a separate file") !=
          std::string::npos);
}

TEST_CASE("compare between two models of one architecture in any format: F32 vs Q8_0 GGUF, GGUF vs llama2.c") {
    const std::string bin = stories260k_dir(), gguf = gguf_dir(bin);
    if (gguf.empty()) return;
    ScratchDir dir;
    const std::string text = " --text \"Once upon a time, there was a little girl named Lily. She loved to play.\"";
    const CommandResult r = run_attn_viz("compare " + gguf + "/stories260K.gguf " + gguf + "/stories260K-Q8_0.gguf" +
                                         text + " --out " + (dir / "q8"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("top-1") != std::string::npos);
    CHECK(std::filesystem::exists(dir / "q8/js_distance.png"));
    const nlohmann::json q8 = nlohmann::json::parse(read_text(dir / "q8/compare.json"));
    REQUIRE(q8["heads"].size() == 40);
    for (const auto& head : q8["heads"]) {
        CAPTURE(head.dump());
        const double js = head["map_js_distance"], top1 = head["top1_agreement"];
        CHECK(js > 0);
        CHECK(js < 0.05);  // quantization moves every head's maps a little
        CHECK(top1 > 0.8);
    }
    // The F32 GGUF against the llama2.c checkpoint it was converted from: identical maps. The copy's
    // name has no .bin: compare tells a whole model from a layer by the file's content.
    std::filesystem::copy_file(bin + "/stories260K.bin", dir / "stories.ckpt");
    const CommandResult same = run_attn_viz("compare -q " + gguf + "/stories260K.gguf " + (dir / "stories.ckpt") +
                                            text + " --out " + (dir / "same") + " --fail-above 1e-6");
    CHECK_MESSAGE(same.exit_code == 0, same.output);
    const nlohmann::json identical = nlohmann::json::parse(read_text(dir / "same/compare.json"));
    for (const auto& head : identical["heads"]) CHECK(double(head["map_js_distance"]) < 1e-6);
    // --fail-above as for layers; a model needs --text or --tokens.
    const CommandResult fails = run_attn_viz("compare -q " + gguf + "/stories260K.gguf " + gguf +
                                             "/stories260K-Q8_0.gguf --tokens 1,403,407,261 --fail-above 1e-9");
    CHECK(fails.exit_code == 1);
    CHECK(fails.output.find("js_distance") != std::string::npos);
    const CommandResult no_text =
        run_attn_viz("compare " + gguf + "/stories260K.gguf " + gguf + "/stories260K-Q8_0.gguf");
    CHECK(no_text.exit_code == 2);
    CHECK(no_text.output.find("--text or --tokens") != std::string::npos);
}

}  // TEST_SUITE("model")
