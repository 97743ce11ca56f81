#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace attn_viz_cli {

CLI::Validator refuse_empty(const std::string& complaint) {
    return CLI::Validator(
        [complaint](std::string& text) { return text.empty() ? fmt::format("'' {}", complaint) : std::string(); }, "");
}

CLI::Validator whole_number_u64() {
    return CLI::Validator(
        [](std::string& text) {
            uint64_t value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (text.empty() || error != std::errc() || end != text.data() + text.size())
                return fmt::format("'{}' is not a whole number in 0..{}", text, UINT64_MAX);
            text = std::to_string(value);
            return std::string();
        },
        "");
}

CLI::Validator finite_number(NumberSign sign) {
    return CLI::Validator(
        [sign](std::string& text) {
            double value = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
                return fmt::format("'{}' is not a finite number", text);
            if (sign == NumberSign::non_negative && value < 0) return fmt::format("'{}' is negative", text);
            if (sign == NumberSign::positive && !(value > 0)) return fmt::format("'{}' is not positive", text);
            return std::string();
        },
        "");
}

}  // namespace attn_viz_cli
