// libFuzzer target: attn-viz/weights@1 JSON through parse_weights (what read_weights_file runs
// after reading the file). {"npy": ...} references resolve in an empty scratch directory.
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "weights_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;  // read_json_file turns parse errors into Error(bad_input)
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(attn_viz::parse_weights(doc, "fuzz.json", "/nonexistent-attn-viz-fuzz", attn_viz_fuzz::limits()));
    return 0;
}
