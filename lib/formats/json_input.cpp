#include "json_input.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"

namespace attn_viz {
namespace {

constexpr size_t max_parser_reason_bytes = 200;

// The longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return text.substr(0, end);
}

// `text` itself if it has at most `max_bytes` bytes, else its prefix followed by "...".
std::string cut(std::string_view text, size_t max_bytes) {
    if (text.size() <= max_bytes) return std::string(text);
    return fmt::format("{}...", utf8_prefix(text, max_bytes));
}

// `text` as a JSON string, of which at most the first `max_bytes` bytes are read.
std::string quoted_prefix(std::string_view text, size_t max_bytes) {
    return nlohmann::json(std::string(utf8_prefix(text, max_bytes)))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Parses `text` with the nesting limit, showing every parser event to `also` as well.
template <typename Also>
nlohmann::json parse_json_checked(std::string_view text, const std::string& where, const std::string& invalid_what,
                                  Also also) {
    using event = nlohmann::json::parse_event_t;
    // `depth` counts the arrays and objects already open around the one starting (around a key:
    // its object's depth, 1 for the top level's keys).
    const auto callback = [&where, &also](int depth, event e, nlohmann::json& parsed) {
        if ((e == event::array_start || e == event::object_start) && depth >= max_json_nesting)
            fail_input(where, fmt::format("JSON nesting deeper than {} levels", max_json_nesting));
        also(depth, e, parsed);
        return true;
    };
    try {
        return nlohmann::json::parse(text, callback);
    } catch (const nlohmann::json::exception& e) {
        fail_input(where, fmt::format("{}: {}", invalid_what, cut(e.what(), max_parser_reason_bytes)));
    }
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& where, const std::string& invalid_what) {
    return parse_json_checked(text, where, invalid_what,
                              [](int, nlohmann::json::parse_event_t, const nlohmann::json&) {});
}

nlohmann::json parse_json_unique_names(std::string_view text, const std::string& where, const std::string& invalid_what,
                                       const std::string& name_what) {
    std::set<std::string> names;
    return parse_json_checked(
        text, where, invalid_what, [&](int depth, nlohmann::json::parse_event_t e, const nlohmann::json& parsed) {
            if (e == nlohmann::json::parse_event_t::key && depth == 1 &&
                !names.insert(parsed.get<std::string>()).second)
                fail_input(where, fmt::format("{} {} appears twice", name_what,
                                              quoted_prefix(parsed.get<std::string>(), max_parser_reason_bytes)));
        });
}

nlohmann::json read_json_file(const std::string& path, const std::string& role, const LoadLimits& limits) {
    MappedFile file(path, role);
    check_memory_elements(file.size(), json_bytes_per_text_byte, limits.memory_budget,
                          fmt::format("{}: parsing {} bytes of JSON", path, file.size()));
    return parse_json_text(file.text(), path);
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
    // A depth-first walk with the open arrays and objects on an explicit stack, that stops as soon
    // as the text is longer than wanted.
    struct Open {
        const nlohmann::json* container;
        nlohmann::json::const_iterator next;
    };
    std::vector<Open> open;
    std::string text;
    // A string is read to 4 bytes past the room left: even cut back to a UTF-8 boundary, a string
    // that does not fit still overflows the excerpt, so it gets the "..." of a cut.
    const auto room = [&text, max_chars] { return max_chars - text.size() + 4; };
    const nlohmann::json* item = &value;
    while (text.size() <= max_chars) {
        if (item) {
            if (item->is_structured()) {
                text += item->is_array() ? '[' : '{';
                open.push_back({item, item->cbegin()});
            } else if (item->is_string()) {
                text += quoted_prefix(item->get_ref<const std::string&>(), room());
            } else {
                text += item->dump();
            }
            item = nullptr;
        } else if (open.empty()) {
            break;
        } else if (Open& top = open.back(); top.next == top.container->cend()) {
            text += top.container->is_array() ? ']' : '}';
            open.pop_back();
        } else {
            if (top.next != top.container->cbegin()) text += ',';
            if (top.container->is_object()) text += fmt::format("{}:", quoted_prefix(top.next.key(), room()));
            item = &*top.next;
            ++top.next;
        }
    }
    return cut(text, max_chars);
}

int64_t json_integer_in(const nlohmann::json& value, int64_t low, int64_t high, const std::string& where,
                        const std::string& what) {
    // Non-negative integers parse as unsigned; compared as such, a huge one is never narrowed.
    bool in_range = false;
    if (value.is_number_unsigned())
        in_range = high >= 0 && value.get<uint64_t>() <= static_cast<uint64_t>(high) &&
                   (low <= 0 || value.get<uint64_t>() >= static_cast<uint64_t>(low));
    else if (value.is_number_integer())
        in_range = value.get<int64_t>() >= low && value.get<int64_t>() <= high;
    if (!in_range)
        fail_input(where, fmt::format("{} is {}, expected an integer in {}..{}", what, json_excerpt(value), low, high));
    return value.get<int64_t>();
}

}  // namespace attn_viz
