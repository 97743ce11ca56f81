// Reading untrusted JSON: parsing with a nesting limit, and short quotes of parsed values for
// error messages. nlohmann parses and destroys iteratively, but dump(), copies and comparisons recurse
// once per nesting level, so a hostile file of 50,000 nested brackets would overflow the stack
// in whatever touches it first; every JSON input is parsed here, where such a file is refused.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "load_limits.hpp"

namespace attn_viz {

// Deeper than any format attn-viz reads (weights: 3 levels; Hugging Face configs: a handful).
constexpr int max_json_nesting = 64;

// Parses `text`; invalid JSON is Error(bad_input) "<where>: <invalid_what>: <parser's reason>",
// nesting deeper than max_json_nesting arrays/objects is "<where>: JSON nesting deeper than 64
// levels".
nlohmann::json parse_json_text(std::string_view text, const std::string& where,
                               const std::string& invalid_what = "invalid JSON");

// parse_json_text for a document whose top-level object names things (a safetensors header's
// tensors), refusing one named twice: Error(bad_input) "<where>: <name_what> \"x\" appears twice"
// (a parser keeps the last silently).
nlohmann::json parse_json_unique_names(std::string_view text, const std::string& where, const std::string& invalid_what,
                                       const std::string& name_what);

// Parses a whole JSON file (memory-mapped) as parse_json_text does, with errors naming it; a file
// whose parsed form could exceed limits.memory_budget is refused before parsing. The file is
// recorded as an input read as `role` ("weights", "input sequence").
nlohmann::json read_json_file(const std::string& path, const std::string& role, const LoadLimits& limits = {});

// `value` as compact JSON, cut after about `max_chars` characters (then ending in "..."): what an
// error message quotes of a value read from a file. Never recursive, and never reads more of
// `value` than it quotes, however large or deep the value is.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 40);

// `value` as an integer in [low, high]: a fraction, a number outside (however large: never
// converted out of range) or another type is Error(bad_input) naming `where` and `what`.
int64_t json_integer_in(const nlohmann::json& value, int64_t low, int64_t high, const std::string& where,
                        const std::string& what);

}  // namespace attn_viz
