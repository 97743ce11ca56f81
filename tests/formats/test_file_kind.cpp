// Telling a file's kind from its bytes, so that a file given in the wrong place is named for what
// it is (the CLI tests check the messages users see).
#include <cstdint>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "file_kind.hpp"
#include "mapped_file.hpp"
#include "npy.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

FileKind kind_of(const std::string& path) {
    const MappedFile file(path, "");
    return sniff_file_kind(file.data(), file.size());
}

FileKind kind_of_bytes(const std::string& bytes) {
    return sniff_file_kind(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace

TEST_SUITE("formats") {

TEST_CASE("each kind of file is told from its bytes, whatever its name") {
    ScratchDir dir;
    write_npy(dir / "a.bin", random_tensor({3, 4}));
    write_safetensors(dir / "b.bin", {{"w", random_tensor({2, 2})}});
    write_text(dir / "c.bin", llama2c_checkpoint_bytes(16, 32, 2, 4, 2, 40, 8));
    write_text(dir / "d.bin", llama2c_tokenizer_bytes(40));
    write_text(dir / "e.bin", " \n{\"format\": \"attn-viz/weights@1\"}");
    write_text(dir / "f.bin", "[1, 2]");
    write_text(dir / "g.bin", "hello, world");
    CHECK(kind_of(dir / "a.bin") == FileKind::npy);
    CHECK(kind_of(dir / "b.bin") == FileKind::safetensors);
    CHECK(kind_of(dir / "c.bin") == FileKind::llama2c_checkpoint);
    CHECK(kind_of(dir / "d.bin") == FileKind::llama2c_tokenizer);
    CHECK(kind_of(dir / "e.bin") == FileKind::json);
    CHECK(kind_of(dir / "f.bin") == FileKind::json);
    CHECK(kind_of(dir / "g.bin") == FileKind::unknown);
    CHECK(kind_of_bytes("") == FileKind::unknown);
}

TEST_CASE("edge cases: a tokenizer that starts with '{', a truncated tokenizer, an implausible checkpoint header") {
    std::string tokenizer = llama2c_tokenizer_bytes(12);
    const int32_t brace = '{';  // max_token_length 123: the first byte is '{'
    std::memcpy(tokenizer.data(), &brace, 4);
    CHECK(kind_of_bytes(tokenizer) == FileKind::llama2c_tokenizer);
    CHECK(kind_of_bytes(tokenizer.substr(0, tokenizer.size() - 1)) != FileKind::llama2c_tokenizer);
    std::string checkpoint = llama2c_checkpoint_bytes(16, 32, 1, 4, 2, 10, 8);
    const int32_t heads = 5;  // 16 is not divisible by 5
    std::memcpy(checkpoint.data() + 12, &heads, 4);
    CHECK(kind_of_bytes(checkpoint) != FileKind::llama2c_checkpoint);
    // A vocabulary size of INT32_MIN (negative: an unshared classifier) has no positive size: not a
    // checkpoint, and no overflow negating it (fuzz_llama2c_checkpoint's finding, which
    // UndefinedBehaviorSanitizer stops in the sanitizer build).
    checkpoint = llama2c_checkpoint_bytes(16, 32, 1, 4, 2, 10, 8);
    const int32_t lowest = INT32_MIN;
    std::memcpy(checkpoint.data() + 20, &lowest, 4);
    CHECK(kind_of_bytes(checkpoint) != FileKind::llama2c_checkpoint);
}

TEST_CASE("refuse_other_file_kind names what the file is and what was expected, with the remedy for swapped files") {
    const std::string tokenizer = llama2c_tokenizer_bytes(20),
                      checkpoint = llama2c_checkpoint_bytes(16, 32, 1, 4, 2, 20, 8);
    const auto bytes = [](const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); };
    expect_error(
        ErrorKind::bad_input,
        [&] {
            refuse_other_file_kind(bytes(tokenizer), tokenizer.size(), "t.bin", FileKind::llama2c_checkpoint,
                                   "a llama2.c checkpoint");
        },
        {"t.bin: is a llama2.c tokenizer, not a llama2.c checkpoint"}, Remedy::swap_model_files);
    expect_error(
        ErrorKind::bad_input,
        [&] { refuse_other_file_kind(bytes(checkpoint), checkpoint.size(), "m.bin", FileKind::json, "layer weights"); },
        {"m.bin: is a llama2.c checkpoint (a whole model), not layer weights"}, Remedy::run_whole_model);
    // The expected kind, JSON-looking bytes and bytes of no known kind pass: the loader then says what is wrong.
    refuse_other_file_kind(bytes(tokenizer), tokenizer.size(), "t.bin", FileKind::llama2c_tokenizer,
                           "a llama2.c tokenizer");
    const std::string text = "plain text", json = "{\"a\": 1}";
    refuse_other_file_kind(bytes(text), text.size(), "x", FileKind::json, "layer weights");
    refuse_other_file_kind(bytes(json), json.size(), "x", FileKind::llama2c_checkpoint, "a llama2.c checkpoint");
}

}  // TEST_SUITE("formats")
