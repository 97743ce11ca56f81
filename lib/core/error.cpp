#include "error.hpp"

#include <fmt/format.h>

namespace attn_viz {

int exit_code(ErrorKind kind) {
    switch (kind) {
        case ErrorKind::usage:
            return 2;
        case ErrorKind::bad_input:
            return 3;
        case ErrorKind::io:
            return 4;
        case ErrorKind::internal:
            return 5;
    }
    return 5;
}

void fail_input(const std::string& where, const std::string& what, Remedy remedy) {
    throw Error(ErrorKind::bad_input, fmt::format("{}: {}", where, what), remedy);
}

}  // namespace attn_viz
