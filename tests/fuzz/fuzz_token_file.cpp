// libFuzzer target: token label files (read_tokens): a JSON list of strings and numbers, or one
// token per line. Labels end up in every output, so each one read must be valid UTF-8 (a line's
// invalid bytes are escaped as \xNN); one that is not is a finding.
#include <string>

#include "fuzz_support.hpp"
#include "token_file.hpp"
#include "utf8.hpp"

namespace {

void read_labels(const std::string& path) {
    for (const std::string& token : attn_viz::read_tokens(path))
        if (attn_viz::escape_invalid_utf8(token) != token) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(read_labels(attn_viz_fuzz::write_scratch_file(data, size, "tokens")));
    return 0;
}
