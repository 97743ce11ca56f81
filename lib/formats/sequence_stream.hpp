// Many input sequences read one at a time (corpus mode): a JSONL file with one input object per
// line, or a folder of input JSON files taken in name order. Only the current sequence is held.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "input_file.hpp"
#include "load_limits.hpp"

namespace attn_viz {

class SequenceStream {
public:
    // Opens `path` (a .jsonl file or a folder); embeddings must have `d_model` columns. Every
    // sequence is read within `limits`.
    SequenceStream(const std::string& path, int64_t d_model, const LoadLimits& limits = {});

    // Reads the next sequence into `out` and names it in `where` ("c.jsonl:17", "dir/a.json");
    // false at the end. Blank lines are skipped; a malformed line throws Error(bad_input) naming
    // the file and line.
    bool next(SequenceInput& out, std::string& where);

private:
    int64_t d_model_;
    LoadLimits limits_;
    std::string path_, base_dir_;
    std::ifstream jsonl_;
    int64_t line_number_ = 0;
    std::vector<std::string> files_;  // folder mode
    size_t next_file_ = 0;
};

}  // namespace attn_viz
