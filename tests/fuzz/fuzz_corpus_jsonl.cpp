// libFuzzer target: a JSONL corpus read by the real corpus reader (SequenceStream, d_model 4),
// sequence after sequence until the end or the first bad line, which must be a clean Error.
#include <string>

#include "fuzz_support.hpp"
#include "sequence_stream.hpp"

namespace {

void read_all(const std::string& path) {
    attn_viz::CorpusDocuments documents(path, attn_viz_fuzz::limits());
    attn_viz::SequenceStream stream(documents, 4, attn_viz_fuzz::limits());
    attn_viz::SequenceInput sequence;
    std::string where;
    while (stream.next(sequence, where)) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(read_all(attn_viz_fuzz::write_scratch_file(data, size, "corpus.jsonl")));
    return 0;
}
