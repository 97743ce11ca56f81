#include "head_names.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {
namespace {

constexpr const char* expected_name = "expected a head as L1H3 or 1:3";
constexpr const char* expected_name_or_head = "expected a head as L1H3 or 1:3, or a head number alone";
constexpr const char* expected_list = "expected heads as L1H3,L2H0-7 or 1:3,2:0-7";
constexpr int64_t max_range = 65536;  // more heads than any layer has: a wider range is a typo

[[noreturn]] void refuse(std::string_view text, const std::string& option, const char* expected) {
    throw Error(ErrorKind::usage, fmt::format("{} '{}': {}", option, text, expected));
}

// A non-negative decimal number filling `digits`, or nullopt.
std::optional<int64_t> parse_number(std::string_view digits) {
    int64_t value = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 0)
        return std::nullopt;
    return value;
}

// The layer and head parts of one item: "L1H3" -> {"1", "3"}, "1:3" -> {"1", "3"}, "3" -> {"", "3"}
// (no layer part: `has_layer` false); nullopt when the item has neither form.
struct Parts {
    std::string_view layer, head;
    bool has_layer = false;
};
std::optional<Parts> split_item(std::string_view item) {
    if (const size_t colon = item.find(':'); colon != std::string_view::npos)
        return Parts{item.substr(0, colon), item.substr(colon + 1), true};
    if (!item.empty() && (item[0] == 'L' || item[0] == 'l')) {
        const size_t h = item.find_first_of("Hh");
        if (h == std::string_view::npos) return std::nullopt;
        return Parts{item.substr(1, h - 1), item.substr(h + 1), true};
    }
    return Parts{{}, item, false};
}

}  // namespace

HeadName parse_head_name(std::string_view text, const std::string& option, bool allow_head_only) {
    const char* expected = allow_head_only ? expected_name_or_head : expected_name;
    const std::optional<Parts> parts = split_item(text);
    if (!parts || (!parts->has_layer && !allow_head_only)) refuse(text, option, expected);
    const std::optional<int64_t> head = parse_number(parts->head);
    if (!head) refuse(text, option, expected);
    if (!parts->has_layer) return {std::nullopt, *head};
    const std::optional<int64_t> layer = parse_number(parts->layer);
    if (!layer) refuse(text, option, expected);
    return {*layer, *head};
}

std::vector<HeadName> parse_head_names(std::string_view text, const std::string& option) {
    std::vector<HeadName> heads;
    std::string_view rest = text;
    while (true) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const std::optional<Parts> parts = split_item(item);
        if (!parts || !parts->has_layer) refuse(text, option, expected_list);
        const std::optional<int64_t> layer = parse_number(parts->layer);
        const size_t dash = parts->head.find('-');
        const std::optional<int64_t> first = parse_number(parts->head.substr(0, dash));
        const std::optional<int64_t> last =
            dash == std::string_view::npos ? first : parse_number(parts->head.substr(dash + 1));
        if (!layer || !first || !last || *last < *first || *last - *first >= max_range)
            refuse(text, option, expected_list);
        for (int64_t h = *first; h <= *last; ++h) heads.push_back({*layer, h});
        if (comma == std::string_view::npos) return heads;
        rest.remove_prefix(comma + 1);
    }
}

std::string head_name(int64_t layer, int64_t head) { return fmt::format("L{}H{}", layer, head); }

}  // namespace attn_viz
