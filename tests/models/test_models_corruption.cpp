// Randomly corrupted and truncated loader inputs: every outcome is a clean load or an
// attn_viz::Error, never a crash, another exception type or a runaway allocation (run under
// ATTN_VIZ_SANITIZE=ON to check memory safety too).
#include <cstring>
#include <functional>

#include <doctest/doctest.h>

#include "error.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "safetensors.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// Writes `variants` corruptions of `good` (a few bytes overwritten, or cut short) and runs `load`
// on each; returns how many were rejected.
int corrupt_and_load(const std::string& good, size_t header_bytes, const std::string& path, int variants,
                     const std::function<void()>& load) {
    int rejected = 0;
    for (int v = 0; v < variants; ++v) {
        std::string bytes = good;
        if (v % 4 == 3) {
            bytes.resize(rng()() % bytes.size());
        } else {
            const int edits = 1 + static_cast<int>(rng()() % 4);
            for (int e = 0; e < edits; ++e) {
                // Mostly inside the header, where the structure is.
                const size_t span = (rng()() % 4 != 0) ? std::min(header_bytes, bytes.size()) : bytes.size();
                bytes[rng()() % span] = static_cast<char>(rng()() & 0xff);
            }
        }
        write_text(path, bytes);
        try {
            load();
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::bad_input);
            ++rejected;
        }
    }
    return rejected;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("corrupted safetensors files load or fail cleanly") {
    ScratchDir dir;
    write_safetensors(
        dir / "ok.safetensors",
        {{"a.weight", random_tensor({3, 4})}, {"a.bias", random_tensor({4})}, {"b", random_tensor({2, 2, 2})}},
        SafetensorsDtype::bf16);
    const std::string good = read_text(dir / "ok.safetensors");
    uint64_t header_length = 0;
    std::memcpy(&header_length, good.data(), 8);
    const int rejected = corrupt_and_load(good, 8 + header_length, dir / "c.safetensors", 400, [&] {
        SafetensorsFile file(dir / "c.safetensors");
        for (const std::string& name : file.names()) file.load(name);
    });
    CHECK(rejected > 100);
}

TEST_CASE("corrupted llama2.c checkpoints and tokenizers load or fail cleanly") {
    ScratchDir dir;
    const int32_t header[7] = {8, 12, 2, 2, 1, 6, 4};
    std::string checkpoint(reinterpret_cast<const char*>(header), sizeof header);
    const int64_t floats = 6 * 8 + 2 * (2 * 8 + 8 * 8 + 2 * 4 * 8 + 8 * 8 + 3 * 8 * 12) + 8 + 4 * 4;
    const Tensor values = random_tensor({floats});
    checkpoint.append(reinterpret_cast<const char*>(values.ptr()), values.data.size() * 4);
    write_text(dir / "ok.bin", checkpoint);
    REQUIRE(read_llama2c_checkpoint(dir / "ok.bin").blocks->n_layers() == 2);
    CHECK(corrupt_and_load(checkpoint, sizeof header, dir / "c.bin", 300,
                           [&] { read_llama2c_checkpoint(dir / "c.bin"); }) > 50);

    std::string tokenizer("\x06\x00\x00\x00", 4);
    for (const std::string piece : {"<unk>", "<s>", "</s>", " ", "a", "ab", " ab", "b"}) {
        const float score = static_cast<float>(piece.size());
        const int32_t length = static_cast<int32_t>(piece.size());
        tokenizer.append(reinterpret_cast<const char*>(&score), 4);
        tokenizer.append(reinterpret_cast<const char*>(&length), 4);
        tokenizer += piece;
    }
    write_text(dir / "ok.tok", tokenizer);
    REQUIRE(Llama2cTokenizer(dir / "ok.tok").vocab_size() == 8);
    CHECK(corrupt_and_load(tokenizer, tokenizer.size(), dir / "c.tok", 300, [&] {
              const Llama2cTokenizer t(dir / "c.tok");
              t.decode(t.encode("ab ba", true, true));
          }) > 50);
}

}  // TEST_SUITE("models")
