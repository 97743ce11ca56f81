// libFuzzer target: a JSONL corpus, one sequence per line, read as the corpus reader does: each
// non-empty line parsed as JSON and passed to parse_sequence (d_model 4). A line that is not JSON
// is an error for that line only.
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    attn_viz_fuzz::initialize();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    size_t line_number = 0;
    for (size_t start = 0; start < text.size();) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_number;
        if (line.empty()) continue;
        const nlohmann::json doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded()) continue;
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(
            attn_viz::parse_sequence(doc, 4, "corpus.jsonl:" + std::to_string(line_number), "/nonexistent-attn-viz-fuzz"));
    }
    return 0;
}
