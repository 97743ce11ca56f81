// One notation for naming attention heads, read and written everywhere a head is named: "L1H3"
// (any case) or "1:3" is layer 1, head 3; a list joins names with commas, and a head number may be
// a range of heads of one layer ("L4H0-7", "4:0-7"). Messages always print "L1H3".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn_viz {

struct HeadName {
    std::optional<int64_t> layer;  // absent when the text gave a head number alone ("3")
    int64_t head = 0;
    bool operator==(const HeadName&) const = default;
};

// "L1H3", "l1h3" or "1:3" -> {1, 3}; with allow_head_only also "3" -> {nullopt, 3}. Throws
// Error(usage) "OPTION 'TEXT': expected ..." (option: "--svg", "--ablate") on anything else.
HeadName parse_head_name(std::string_view text, const std::string& option, bool allow_head_only = false);

// "L1H3,2:0,L4H0-7" -> the heads in the order given, a range expanded in ascending order. Throws
// Error(usage) naming `option` on a malformed item, an empty list, a backwards range or one of more
// than 65536 heads (repeats and bounds are the caller's to judge: it knows the model).
std::vector<HeadName> parse_head_names(std::string_view text, const std::string& option);

// "L1H3".
std::string head_name(int64_t layer, int64_t head);

}  // namespace attn_viz
