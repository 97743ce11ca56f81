#include "json_text.hpp"

#include <nlohmann/json.hpp>

#include "utf8.hpp"

namespace attn_viz {
namespace {

constexpr int invalid_utf8_error = 316;  // nlohmann::json::type_error id: "invalid UTF-8 byte"

// A copy of `doc` whose strings and keys are valid UTF-8.
nlohmann::json with_valid_utf8(const nlohmann::json& doc) {
    if (doc.is_string()) return escape_invalid_utf8(doc.get_ref<const std::string&>());
    if (doc.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const nlohmann::json& item : doc) out.push_back(with_valid_utf8(item));
        return out;
    }
    if (doc.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : doc.items()) out[escape_invalid_utf8(key)] = with_valid_utf8(value);
        return out;
    }
    return doc;
}

}  // namespace

std::string dump_json(const nlohmann::json& doc, int indent) {
    try {
        return doc.dump(indent);
    } catch (const nlohmann::json::type_error& e) {
        if (e.id != invalid_utf8_error) throw;
    }
    return with_valid_utf8(doc).dump(indent);
}

std::string json_file_text(const nlohmann::json& doc, int indent) {
    std::string text = dump_json(doc, indent);
    text += '\n';
    return text;
}

}  // namespace attn_viz
