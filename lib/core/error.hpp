// The library's one exception type. Messages carry their context ("w.json: W_Q row 3 has 5
// numbers, expected 8"); main() catches once, prints the message on one line and exits with
// exit_code(kind).
#pragma once

#include <stdexcept>
#include <string>

namespace attn_viz {

enum class ErrorKind {
    usage,      // the command line is wrong
    bad_input,  // an input file is malformed, inconsistent or too large
    io,         // a file could not be read or written (missing, permissions, disk full)
    internal,   // a bug or an unexpected library failure
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

private:
    ErrorKind kind_;
};

// Exit status of the attn-viz command for each kind (documented in README.md):
// 0 success, 1 a --fail-above threshold was exceeded, 2 usage, 3 bad input, 4 I/O, 5 internal,
// 130 interrupted.
int exit_code(ErrorKind kind);

// Throws Error(bad_input, "<where>: <what>").
[[noreturn]] void fail_input(const std::string& where, const std::string& what);

}  // namespace attn_viz
