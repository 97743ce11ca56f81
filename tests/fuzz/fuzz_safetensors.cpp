// libFuzzer target: safetensors files: open (header validation), then load every tensor.
#include "fuzz_support.hpp"
#include "safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = attn_viz_fuzz::write_scratch_file(data, size, "model.safetensors");
    ATTN_VIZ_FUZZ_EXPECT_CLEAN({
        const attn_viz::SafetensorsFile file(path, attn_viz_fuzz::limits());
        for (const std::string& name : file.names()) ATTN_VIZ_FUZZ_EXPECT_CLEAN(file.load(name));
    });
    return 0;
}
