#include "head_selection_options.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz_cli {
namespace {

[[noreturn]] void bad_item(const std::string& option, const std::string& item, const std::string& expected) {
    throw attn_viz::Error(attn_viz::ErrorKind::usage, fmt::format("{} '{}': expected {}", option, item, expected));
}

// "7" -> 7; -1 for anything that is not a non-negative integer.
int64_t number(std::string_view digits) {
    int64_t value = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) return -1;
    return value;
}

// "a-b" or "a" -> {a, b} (b = a); {-1, -1} when malformed or b < a.
std::pair<int64_t, int64_t> number_range(std::string_view text) {
    const size_t dash = text.find('-');
    const int64_t first = number(text.substr(0, dash));
    const int64_t last = dash == std::string_view::npos ? first : number(text.substr(dash + 1));
    if (first < 0 || last < first) return {-1, -1};
    return {first, last};
}

// The comma-separated items of text, surrounding spaces dropped, empty items kept (an error).
std::vector<std::string> items(const std::string& text) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const size_t first = part.find_first_not_of(' '), last = part.find_last_not_of(' ');
        parts.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
        if (comma == std::string::npos) return parts;
        start = comma + 1;
    }
}

constexpr const char* layers_grammar = "a layer N or a range of layers A-B (e.g. 3,5-7)";
constexpr const char* heads_grammar = "LxHy, LxHa-b, x:y or x:a-b (e.g. L3H1,L4H0-7)";

HeadRange parse_layers_item(const std::string& item) {
    const auto [first, last] = number_range(item);
    if (first < 0) bad_item("--layers", item, layers_grammar);
    return HeadRange{"--layers", item, first, last, true, 0, 0};
}

HeadRange parse_heads_item(const std::string& item) {
    std::string lower = item;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view layer_part, head_part;
    if (!lower.empty() && lower[0] == 'l' && lower.find('h') != std::string::npos) {
        const size_t h = lower.find('h');
        layer_part = std::string_view(lower).substr(1, h - 1);
        head_part = std::string_view(lower).substr(h + 1);
    } else if (lower.find(':') != std::string::npos) {
        const size_t colon = lower.find(':');
        layer_part = std::string_view(lower).substr(0, colon);
        head_part = std::string_view(lower).substr(colon + 1);
    } else {
        bad_item("--heads", item, heads_grammar);
    }
    const int64_t layer = number(layer_part);
    const auto [first, last] = number_range(head_part);
    if (layer < 0 || first < 0) bad_item("--heads", item, heads_grammar);
    return HeadRange{"--heads", item, layer, layer, false, first, last};
}

}  // namespace

std::vector<HeadRange> parse_head_selection(const std::string& layers_text, const std::string& heads_text) {
    std::vector<HeadRange> ranges;
    if (!layers_text.empty())
        for (const std::string& item : items(layers_text)) ranges.push_back(parse_layers_item(item));
    if (!heads_text.empty())
        for (const std::string& item : items(heads_text)) ranges.push_back(parse_heads_item(item));
    return ranges;
}

attn_viz::HeadSelection select_heads(const std::vector<HeadRange>& ranges, int64_t num_layers, int64_t num_heads) {
    if (ranges.empty()) return {};
    const std::string shape = fmt::format("the model has {} layers (0-{}) of {} heads (0-{})", num_layers,
                                          num_layers - 1, num_heads, num_heads - 1);
    std::vector<std::vector<uint8_t>> chosen(static_cast<size_t>(num_layers),
                                             std::vector<uint8_t>(static_cast<size_t>(num_heads), 0));
    for (const HeadRange& r : ranges) {
        const auto out_of_range = [&](const char* what, int64_t n) {
            return attn_viz::Error(attn_viz::ErrorKind::usage,
                                   fmt::format("{} '{}': {} {} is out of range: {}", r.option, r.text, what, n, shape));
        };
        if (r.last_layer >= num_layers) throw out_of_range("layer", r.last_layer);
        if (!r.every_head && r.last_head >= num_heads) throw out_of_range("head", r.last_head);
        for (int64_t l = r.first_layer; l <= r.last_layer; ++l)
            for (int64_t h = r.every_head ? 0 : r.first_head; h <= (r.every_head ? num_heads - 1 : r.last_head); ++h)
                chosen[static_cast<size_t>(l)][static_cast<size_t>(h)] = 1;
    }
    return attn_viz::HeadSelection(std::move(chosen));
}

}  // namespace attn_viz_cli
