// libFuzzer target: llama2.c version-0 checkpoints through read_llama2c_checkpoint.
#include "fuzz_support.hpp"
#include "llama2c_checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = attn_viz_fuzz::write_scratch_file(data, size, "model.bin");
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::read_llama2c_checkpoint(path, attn_viz_fuzz::limits()));
    return 0;
}
