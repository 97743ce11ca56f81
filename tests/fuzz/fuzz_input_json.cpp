// libFuzzer target: input sequence JSON through parse_sequence. The first byte picks the model
// width (1..8), the rest is the document.
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const int64_t d_model = 1 + data[0] % 8;
    const nlohmann::json doc = nlohmann::json::parse(data + 1, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::parse_sequence(doc, d_model, "fuzz.json", "/nonexistent-attn-viz-fuzz", attn_viz_fuzz::limits()));
    return 0;
}
