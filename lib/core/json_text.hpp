// JSON documents to text for the files the program writes.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace attn_viz {

// doc.dump(indent), except that a string (or key) holding bytes that are not valid UTF-8, which
// nlohmann::json refuses to write, has those bytes written as "\xNN" (escape_invalid_utf8)
// instead of failing the run. Loaders escape such bytes where text enters the program, so this
// is the last line of defence, not the rule.
std::string dump_json(const nlohmann::json& doc, int indent = -1);

// The text of a JSON file: dump_json(doc, indent) and a newline (appended in place: a stats.json
// or a partial can take megabytes, which a format call would copy once more).
std::string json_file_text(const nlohmann::json& doc, int indent = -1);

}  // namespace attn_viz
