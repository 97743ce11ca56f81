// One number as the program's tables and sentences print it.
#pragma once

#include <string>

#include <fmt/format.h>

namespace attn_viz {

// x printed with `format` ("{:.3f}", "{:+.4g}", ...), or "-" where x is NaN or infinite: the
// terminal tables' and findings' mark of an undefined value (docs/metrics.md).
std::string short_number(double x, fmt::format_string<double> format = "{:.4g}");

// x with its sign and three significant digits ("+0.123", "-4.5e-05"), or "-" as short_number.
inline std::string signed_short_number(double x) { return short_number(x, "{:+.3g}"); }

}  // namespace attn_viz
