// libFuzzer target: input sequence JSON through parse_json_text and parse_sequence (what
// read_input_file runs on the file's text). The first byte picks the model width (1..8), the rest
// is the document.
#include <string_view>

#include "fuzz_support.hpp"
#include "input_file.hpp"
#include "json_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const int64_t d_model = 1 + data[0] % 8;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::parse_sequence(attn_viz::parse_json_text(text, "fuzz.json"), d_model,
                                                        "fuzz.json", "/nonexistent-attn-viz-fuzz",
                                                        attn_viz_fuzz::limits()));
    return 0;
}
