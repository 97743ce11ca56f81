// Options whose text the library parses (a window, a threshold, a memory size): an Error(usage)
// from the parser gets the option's name in front, so the user sees which option is wrong
// ("--window: window '5:2,0:1': the query range 5:2 is empty (need start < end)").
#pragma once

#include <string>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz_cli {

// parse(), with an Error(usage) it throws rethrown as "<option>: <message>".
template <typename Parse>
auto parse_option(const std::string& option, Parse&& parse) -> decltype(parse()) {
    try {
        return parse();
    } catch (const attn_viz::Error& e) {
        if (e.kind() != attn_viz::ErrorKind::usage) throw;
        throw attn_viz::Error(attn_viz::ErrorKind::usage, fmt::format("{}: {}", option, e.what()), e.remedy());
    }
}

}  // namespace attn_viz_cli
