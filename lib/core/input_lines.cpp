#include "input_lines.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "error.hpp"
#include "input_open.hpp"

namespace attn_viz {

InputLines::InputLines(const std::string& path, const std::string& role)
    : path_(path), fd_(open_input_file(path, role)), buffer_(size_t{1} << 16) {}

bool InputLines::fill() {
    while (true) {
        const ssize_t n = ::read(fd_.get(), buffer_.data(), buffer_.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw Error(ErrorKind::io, fmt::format("{}: read failed: {}", path_, std::strerror(errno)));
        begin_ = 0;
        end_ = static_cast<size_t>(n);
        return n > 0;
    }
}

bool InputLines::next(std::string& line, uint64_t max_line_bytes) {
    line.clear();
    bool started = false;
    while (true) {
        if (begin_ == end_ && !fill()) {
            if (started) ++line_number_;
            return started;
        }
        started = true;
        const char* start = buffer_.data() + begin_;
        const char* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
        const size_t take = newline ? static_cast<size_t>(newline - start) : end_ - begin_;
        if (line.size() + take > max_line_bytes)
            fail_input(
                fmt::format("{}:{}", path_, line_number_ + 1),
                fmt::format("line is longer than {} bytes, the longest the memory budget allows", max_line_bytes),
                Remedy::raise_memory_budget);
        line.append(start, take);
        begin_ += take;
        if (newline) {
            ++begin_;
            ++line_number_;
            return true;
        }
    }
}

}  // namespace attn_viz
