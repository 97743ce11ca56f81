// The lines of an input file, one at a time, each held only up to a length the caller allows: a
// file of one endless line (no newline in 6 GB) is refused at the limit instead of being read
// until memory runs out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unique_fd.hpp"

namespace attn_viz {

class InputLines {
public:
    // Opens `path` with open_input_file (input_open.hpp), recording it as an input read as `role`.
    InputLines(const std::string& path, const std::string& role);

    // Reads the next line into `line`, without its "\n" (a last line without one counts too);
    // false at the end of the file. A line longer than `max_line_bytes` throws
    // Error(bad_input, "<path>:<line>: line is longer than N bytes, ...", Remedy::raise_memory_budget)
    // as soon as that much of it is read. Read errors throw Error(io) naming the file.
    bool next(std::string& line, uint64_t max_line_bytes);

    // The number of the line next() returned last (1-based).
    int64_t line_number() const { return line_number_; }

private:
    std::string path_;
    UniqueFd fd_;
    std::vector<char> buffer_;
    size_t begin_ = 0, end_ = 0;  // the unread bytes of buffer_
    int64_t line_number_ = 0;

    bool fill();  // reads more into buffer_; false at the end of the file
};

}  // namespace attn_viz
