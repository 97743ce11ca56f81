// libFuzzer target: GGUF files through GgufFile (header, metadata, tensor infos), then every
// metadata value through its typed getter, every tensor through load(), the model loaders, the
// llama tokenizer (encoding texts with it, tokenizer_use.hpp) and the byte-level BPE tokenizer.
#include "fuzz_support.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "gguf_transformer.hpp"
#include "tokenizer_use.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = attn_viz_fuzz::write_scratch_file(data, size, "model.gguf");
    ATTN_VIZ_FUZZ_EXPECT_CLEAN({
        const attn_viz::GgufFile file(path, attn_viz_fuzz::limits());
        for (const auto& [key, value] : file.metadata()) {
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_uint(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_float(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_string(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_bool(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_string_array(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_float_array(key));
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.get_int_array(key));
        }
        for (const attn_viz::GgufTensorInfo& tensor : file.tensors())
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.load(tensor.name));
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::read_gguf_llama(file));
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::read_gguf_transformer(file));
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz_fuzz::use_llama_tokenizer(attn_viz::read_gguf_llama_tokenizer(file, 0)));
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::read_gguf_bpe_tokenizer(file, 0).encode("a b<|endoftext|>", true));
    });
    return 0;
}
