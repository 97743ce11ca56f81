// libFuzzer target: .npy bytes through parse_npy.
#include "fuzz_support.hpp"
#include "npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::parse_npy(data, size, "fuzz.npy", attn_viz_fuzz::limits()));
    return 0;
}
