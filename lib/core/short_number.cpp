#include "short_number.hpp"

#include <cmath>

namespace attn_viz {

std::string short_number(double x, fmt::format_string<double> format) {
    if (!std::isfinite(x)) return "-";
    return fmt::vformat(format, fmt::make_format_args(x));
}

}  // namespace attn_viz
