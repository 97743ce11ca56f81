// Checks CLI11 runs on an option's text as it parses the command line, before any file is
// opened: a value that names nothing or means nothing is refused rather than ignored or clamped.
// CLI11 puts the option's name in front ("--heads: '' names no head"; a usage error, exit 2).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attn_viz_cli {

// Refuses '' for an option whose empty value would otherwise read as "not given" (every head
// drawn, no ablation, no dump): "'' `complaint`", e.g. complaint "names no head".
CLI::Validator refuse_empty(const std::string& complaint);

// A decimal whole number in 0..18446744073709551615, exactly as written: no sign, exponent, hex
// or octal prefix, space or clamping ("'-1' is not a whole number in 0..18446744073709551615").
// A transform: the text becomes the number's plain digits ("007" -> "7"), which CLI11 converts
// to uint64_t as the decimal it is.
CLI::Validator whole_number_u64();

// What a number must be beside finite.
enum class NumberSign { non_negative, positive };

// A finite number of `sign` (nan, inf and numbers beyond a double's range refused):
// "'nan' is not a finite number", "'-1' is negative", "'0' is not positive".
CLI::Validator finite_number(NumberSign sign);

}  // namespace attn_viz_cli
