// libFuzzer target: a JSONL corpus read by the real corpus reader (SequenceStream, d_model 4),
// sequence after sequence until the end or the first bad line, which must be a clean Error.
#include <cstdio>
#include <string>
#include <unistd.h>

#include "fuzz_support.hpp"
#include "sequence_stream.hpp"

namespace {

const std::string& corpus_path() {
    static const std::string path = "/tmp/attn-viz-fuzz-corpus-" + std::to_string(getpid()) + ".jsonl";
    return path;
}

void read_all(const std::string& path) {
    attn_viz::SequenceStream stream(path, 4, attn_viz_fuzz::limits());
    attn_viz::SequenceInput sequence;
    std::string where;
    while (stream.next(sequence, where)) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FILE* f = std::fopen(corpus_path().c_str(), "wb");
    if (!f) return 0;
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(read_all(corpus_path()));
    return 0;
}
