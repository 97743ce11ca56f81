// libFuzzer target: llama2.c tokenizers. The first byte picks the mode:
//   even: the rest is a tokenizer.bin; load it, then encode, decode and label texts with it
//         (tokenizer_use.hpp: a fixed text, " ", its own first pieces, long runs of characters);
//   odd:  the rest is text, encoded (and decoded back) with a valid tokenizer built at start-up
//         (byte tokens, a " " piece and a few merges), which must reproduce the text exactly.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "llama2c_tokenizer.hpp"
#include "tokenizer_use.hpp"
#include "utf8.hpp"

namespace {

// <unk>, <s>, </s>, the 256 byte tokens, then pieces whose merges the encoder will find.
std::string valid_tokenizer_bytes() {
    std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        pieces.push_back(name);
    }
    for (const char* p : {" ", "e", "t", "a", " t", "th", "he", " th", "the", " the", "é", "ab", "ba", "aba"})
        pieces.push_back(p);
    std::string bytes;
    const auto put = [&bytes](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); };
    const int32_t max_length = 8;
    put(&max_length, 4);
    for (size_t i = 0; i < pieces.size(); ++i) {
        const float score = static_cast<float>(i % 7) - 3.0f;
        const int32_t length = static_cast<int32_t>(pieces[i].size());
        put(&score, 4), put(&length, 4), put(pieces[i].data(), pieces[i].size());
    }
    return bytes;
}

const attn_viz::Llama2cTokenizer& valid_tokenizer() {
    static const attn_viz::Llama2cTokenizer tokenizer = [] {
        const std::string bytes = valid_tokenizer_bytes();
        return attn_viz::Llama2cTokenizer(attn_viz_fuzz::write_scratch_file(
            reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "valid-tokenizer.bin"));
    }();
    return tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    valid_tokenizer();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    if (data[0] % 2 == 0) {
        const std::string path = attn_viz_fuzz::write_scratch_file(data + 1, size - 1, "tokenizer.bin");
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz_fuzz::use_llama_tokenizer(attn_viz::Llama2cTokenizer(path)));
    } else {
        const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
        const attn_viz::Llama2cTokenizer& tokenizer = valid_tokenizer();
        const std::vector<int> ids = tokenizer.encode(text, true, false);
        // Decoding drops the dummy-prefix space only after BOS and shows bytes that are not UTF-8 as
        // \xNN: the text must come back whole, escaped so.
        const std::string expected = attn_viz::escape_invalid_utf8(text);
        const std::string decoded = tokenizer.decode(ids);
        if (!text.empty() && decoded != expected && decoded != " " + expected) __builtin_trap();
    }
    return 0;
}
