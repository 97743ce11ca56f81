// libFuzzer target: Hugging Face tokenizer.json files (HfTokenizer::load). The input is the file;
// what loads must encode a fixed text and long runs of single characters (with and without
// special tokens) to ids inside its vocabulary, and decode and label them (tokenizer_use.hpp).
#include "fuzz_support.hpp"
#include "hf_tokenizer.hpp"
#include "tokenizer_use.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz_fuzz::use_hf_tokenizer(attn_viz::HfTokenizer::load(
        attn_viz_fuzz::write_scratch_file(data, size, "tokenizer.json"), attn_viz_fuzz::limits())));
    return 0;
}
