// attn-viz model --model FILE.gguf on stories260K as GGUF (skipped with a message where
// ../shared/models/stories260K-gguf is absent): the F32 file against the llama2.c checkpoint, the
// Q8_0 copy, and a llama2.c checkpoint without its tokenizer.
#include <doctest/doctest.h>

#include <filesystem>

#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE("model --model stories260K.gguf: the attention of stories260K.bin, its own tokenizer, and Q8_0 runs") {
    const std::string bin = stories260k_dir();
    if (bin.empty()) return;
    const std::string gguf = bin + "-gguf";
    if (!std::filesystem::exists(gguf + "/stories260K.gguf")) {
        MESSAGE("skipped: " << gguf << " is absent");
        return;
    }
    ScratchDir dir;
    const std::string text = " --text \"Once upon a time, there was a little girl named Lily.\" --generate 8";
    const CommandResult from_bin = run_attn_viz("model -q --checkpoint " + bin + "/stories260K.bin --tokenizer " + bin + "/tok512.bin" +
                                                text + " --out " + (dir / "bin") + " --dump-attention " + (dir / "bin.npy"));
    REQUIRE_MESSAGE(from_bin.exit_code == 0, from_bin.output);
    for (const char* file : {"stories260K.gguf", "stories260K-Q8_0.gguf"}) {
        CAPTURE(file);
        const std::string name = file;
        const CommandResult r = run_attn_viz("model --timings --model " + gguf + "/" + name + text + " --out " + (dir / name) +
                                             " --dump-attention " + (dir / (name + ".npy")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find("peak RSS") != std::string::npos);
        CHECK(r.output.find("greedy continuation: Once upon a time, there was a little girl named Lily. She loved") != std::string::npos);
        CHECK(std::filesystem::exists(dir / (name + "/layer_04/head_07.png")));
        const double difference = max_abs_diff(read_npy(dir / (name + ".npy")), read_npy(dir / "bin.npy"));
        if (name == "stories260K.gguf") CHECK(difference < 1e-5);
        else CHECK((difference > 0 && difference < 0.05));
    }
    const CommandResult no_tokenizer = run_attn_viz("model -q --checkpoint " + bin + "/stories260K.bin --tokens 1,2 --out " + (dir / "x"));
    CHECK(no_tokenizer.exit_code == 3);
    CHECK(no_tokenizer.output.find("stories260K.bin: is a llama2.c checkpoint, whose tokenizer is a separate file") != std::string::npos);
}

}  // TEST_SUITE
