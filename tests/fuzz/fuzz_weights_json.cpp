// libFuzzer target: attn-viz/weights@1 JSON through parse_json_text and parse_weights (what
// read_weights_file runs on the file's text). {"npy": ...} references resolve in a directory
// that does not exist.
#include <string_view>

#include "fuzz_support.hpp"
#include "json_input.hpp"
#include "weights_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::parse_weights(attn_viz::parse_json_text(text, "fuzz.json"), "fuzz.json",
                                                       "/nonexistent-attn-viz-fuzz", attn_viz_fuzz::limits()));
    return 0;
}
