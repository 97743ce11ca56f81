// libFuzzer target: Hugging Face tokenizer.json files (HfTokenizer::load). The input is the file;
// what loads must encode a fixed text (with and without special tokens) to ids inside its
// vocabulary, and decode and label them.
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hf_tokenizer.hpp"

namespace {

void load_and_use(const std::string& path) {
    const attn_viz::HfTokenizer tokenizer = attn_viz::HfTokenizer::load(path, attn_viz_fuzz::limits());
    for (bool special : {false, true}) {
        const std::vector<int> ids = tokenizer.encode("Hello, world! The caf\xc3\xa9's 123 \xe2\x98\x83 <s> [CLS] abab\n\t x", special);
        for (int id : ids)
            if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
        tokenizer.decode(ids);
        if (tokenizer.labels(ids).size() != ids.size()) __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(load_and_use(attn_viz_fuzz::write_scratch_file(data, size, "tokenizer.json")));
    return 0;
}
