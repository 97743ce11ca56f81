#include "tokenizer_pipeline.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "byte_level.hpp"
#include "error.hpp"
#include "json_input.hpp"
#include "model_tokenizer.hpp"
#include "precompiled_charsmap.hpp"
#include "text_codecs.hpp"
#include "unicode_text.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

using json = nlohmann::json;

// The members of a step, with errors that say which step of which file.
const json& member(const json& spec, const char* key, const std::string& where) {
    if (!spec.is_object() || !spec.contains(key)) fail_input(where, fmt::format("missing \"{}\"", key));
    return spec.at(key);
}
std::string string_member(const json& spec, const char* key, const std::string& where) {
    const json& value = member(spec, key, where);
    if (!value.is_string()) fail_input(where, fmt::format("\"{}\" is not a string", key));
    return value.get<std::string>();
}
bool bool_member(const json& spec, const char* key, bool fallback) {
    const auto found = spec.find(key);
    return found != spec.end() && found->is_boolean() ? found->get<bool>() : fallback;
}
std::string type_of(const json& spec, const std::string& where) { return string_member(spec, "type", where); }

// A {"String": s} or {"Regex": r} pattern of Split and Replace, as a regex.
UnicodeRegex pattern_regex(const json& spec, const std::string& where) {
    const json& pattern = member(spec, "pattern", where);
    if (pattern.contains("Regex")) return UnicodeRegex(string_member(pattern, "Regex", where), where);
    return UnicodeRegex(fmt::format("\\Q{}\\E", string_member(pattern, "String", where)), where);
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
    if (from.empty()) return text;
    std::string out;
    size_t done = 0;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, done)) {
        out.append(text, done, at - done).append(to);
        done = at + from.size();
    }
    return out.append(text, done);
}

// Code points of `text` kept or rewritten one at a time.
template <typename Rewrite>
std::string map_code_points(const std::string& text, Rewrite rewrite) {
    std::string out;
    for (char32_t c : decode_utf8(text)) out += rewrite(c);
    return out;
}

// BERT's CJK ideograph blocks (the definition in BERT's tokenization.py and HF's BertNormalizer).
bool is_cjk_ideograph(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
bool is_bert_whitespace(char32_t c) { return c == U'\t' || c == U'\n' || c == U'\r' || is_unicode_whitespace(c); }
bool is_bert_punctuation(char32_t c) { return (c < 0x80 && std::ispunct(static_cast<int>(c))) || is_punctuation(c); }

std::string strip_accents(const std::string& text) {
    return map_code_points(normalize_nfd(text),
                           [](char32_t c) { return is_nonspacing_mark(c) ? std::string() : encode_utf8(c); });
}

Normalizer bert_normalizer(const json& spec) {
    const bool clean_text = bool_member(spec, "clean_text", true),
               chinese = bool_member(spec, "handle_chinese_chars", true);
    const bool lowercase = bool_member(spec, "lowercase", true),
               accents = bool_member(spec, "strip_accents", lowercase);
    return [=](std::string text) {
        text = map_code_points(text, [&](char32_t c) {
            if (clean_text && (c == 0 || c == 0xFFFD || is_control(c))) return std::string();
            if (clean_text && is_bert_whitespace(c)) return std::string(" ");
            if (chinese && is_cjk_ideograph(c)) return " " + encode_utf8(c) + " ";
            return encode_utf8(c);
        });
        if (accents) text = strip_accents(text);
        return lowercase ? to_lower(text) : text;
    };
}

// Split behaviour: how the matched pieces join their neighbours.
std::vector<std::string> apply_behavior(const std::vector<UnicodeRegex::Piece>& pieces, const std::string& behavior,
                                        bool invert, const std::string& where) {
    std::vector<std::string> out;
    bool pending_next = false;  // MergedWithNext: the last piece waits for the next one
    bool last_matched = false;
    for (const auto& [text, raw_matched] : pieces) {
        const bool matched = raw_matched != invert;
        if (behavior == "Removed") {
            if (!matched) out.push_back(text);
        } else if (behavior == "Isolated") {
            out.push_back(text);
        } else if (behavior == "MergedWithPrevious") {
            if (matched && !out.empty())
                out.back() += text;
            else
                out.push_back(text);
        } else if (behavior == "MergedWithNext") {
            if (pending_next)
                out.back() += text;
            else
                out.push_back(text);
            pending_next = matched;
        } else if (behavior == "Contiguous") {
            if (matched && last_matched && !out.empty())
                out.back() += text;
            else
                out.push_back(text);
        } else {
            fail_input(where,
                       fmt::format("unknown split behavior \"{}\" (known: Removed, Isolated, MergedWithPrevious, "
                                   "MergedWithNext, Contiguous)",
                                   escape_invalid_utf8(behavior)));
        }
        last_matched = matched;
    }
    return out;
}

// A pre-tokenizer that splits every word by a regex with a behavior.
PreTokenizer regex_splitter(const std::string& pattern, std::string behavior, bool invert, const std::string& where) {
    auto regex = std::make_shared<UnicodeRegex>(pattern, where);
    apply_behavior({{"", false}}, behavior, invert, where);  // refuses an unknown behavior now, not at the first word
    return [=](std::vector<std::string> words, bool) {
        std::vector<std::string> out;
        for (const std::string& word : words)
            for (std::string& piece : apply_behavior(regex->split(word), behavior, invert, where))
                if (!piece.empty()) out.push_back(std::move(piece));
        return out;
    };
}

// GPT-2's pre-tokenizer pattern (HF's ByteLevel with use_regex).
constexpr const char* gpt2_pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

PreTokenizer byte_level_pre_tokenizer(const json& spec, const std::string& where) {
    const bool add_prefix_space = bool_member(spec, "add_prefix_space", true),
               use_regex = bool_member(spec, "use_regex", true);
    const PreTokenizer split = use_regex ? regex_splitter(gpt2_pattern, "Isolated", false, where) : PreTokenizer();
    return [=](std::vector<std::string> words, bool first_segment) {
        if (add_prefix_space)
            for (std::string& word : words)
                if (!word.empty() && word[0] != ' ') word.insert(0, " ");
        if (split) words = split(std::move(words), first_segment);
        for (std::string& word : words) word = byte_level_encode(word);
        return words;
    };
}

PreTokenizer metaspace_pre_tokenizer(const json& spec, const std::string& where) {
    const std::string replacement = string_member(spec, "replacement", where);
    std::string scheme = spec.contains("prepend_scheme") && spec["prepend_scheme"].is_string()
                             ? spec["prepend_scheme"].get<std::string>()
                         : bool_member(spec, "add_prefix_space", true) ? "always"
                                                                       : "never";
    if (scheme != "always" && scheme != "first" && scheme != "never")
        fail_input(where, fmt::format("unknown prepend_scheme \"{}\" (known: always, first, never)",
                                      escape_invalid_utf8(scheme)));
    const bool split = bool_member(spec, "split", true);
    const PreTokenizer splitter =
        split ? regex_splitter(fmt::format("\\Q{}\\E", replacement), "MergedWithNext", false, where) : PreTokenizer();
    return [=](std::vector<std::string> words, bool first_segment) {
        for (std::string& word : words) {
            word = replace_all(word, " ", replacement);
            const bool prepend = scheme == "always" || (scheme == "first" && first_segment);
            if (prepend && word.compare(0, replacement.size(), replacement) != 0) word.insert(0, replacement);
        }
        return splitter ? splitter(std::move(words), first_segment) : words;
    };
}

// Splits each word around the characters `is_delimiter` picks, removing or isolating them.
PreTokenizer character_splitter(bool (*is_delimiter)(char32_t), bool remove) {
    return [=](std::vector<std::string> words, bool) {
        std::vector<std::string> out;
        for (const std::string& word : words) {
            std::string current;
            for (char32_t c : decode_utf8(word)) {
                if (!is_delimiter(c)) {
                    current += encode_utf8(c);
                    continue;
                }
                if (!current.empty()) out.push_back(std::move(current));
                current.clear();
                if (!remove) out.push_back(encode_utf8(c));
            }
            if (!current.empty()) out.push_back(std::move(current));
        }
        return out;
    };
}

}  // namespace

namespace {

// The longest text a normalizer step of `where` ("tokenizer.json: normalizer Replace") may make:
// what the memory budget allows the pre-tokenizer and the model to work on.
class NormalizedLimit {
public:
    NormalizedLimit(uint64_t memory_budget, std::string where)
        : budget_(memory_budget),
          max_bytes_(memory_budget / tokenize_bytes_per_normalized_byte),
          where_(std::move(where)) {}

    uint64_t memory_budget() const { return budget_; }
    const std::string& where() const { return where_; }
    size_t max_bytes() const { return static_cast<size_t>(std::min<uint64_t>(max_bytes_, SIZE_MAX)); }
    // Throws Error(bad_input, Remedy::raise_memory_budget) when a normalized text of `bytes` is too long.
    void check(size_t bytes) const {
        if (bytes > max_bytes_)
            fail_input(where_,
                       fmt::format("the normalized text would be longer than {} bytes, the longest the memory budget "
                                   "of {} bytes allows tokenizing",
                                   max_bytes_, budget_),
                       Remedy::raise_memory_budget);
    }

private:
    uint64_t budget_, max_bytes_;
    std::string where_;
};

// One normalizer step of `type` of the tokenizer `where`; Replace and Precompiled keep their text
// within `limit` (which names the step) as they write it.
Normalizer normalizer_step(const json& spec, const std::string& type, const std::string& where,
                           const NormalizedLimit& limit) {
    const std::string& here = limit.where();
    if (type == "Sequence") {
        std::vector<Normalizer> steps;
        for (const json& step : member(spec, "normalizers", here))
            steps.push_back(parse_normalizer(step, where, limit.memory_budget()));
        return [steps](std::string text) {
            for (const Normalizer& step : steps) text = step(std::move(text));
            return text;
        };
    }
    if (type == "Prepend") {
        const std::string prefix = string_member(spec, "prepend", here);
        return [prefix](std::string text) { return text.empty() ? text : prefix + text; };
    }
    if (type == "Replace") {
        auto regex = std::make_shared<UnicodeRegex>(pattern_regex(spec, here));
        const std::string content = string_member(spec, "content", here);
        return [regex, content, limit](std::string text) {
            std::string out;
            for (const auto& [piece, matched] : regex->split(text)) {
                out += matched ? content : piece;
                limit.check(out.size());
            }
            return out;
        };
    }
    if (type == "BertNormalizer") return bert_normalizer(spec);
    if (type == "Precompiled") {
        const json& charsmap = member(spec, "precompiled_charsmap", here);
        // An empty charsmap (a SentencePiece model saved with the identity rule) changes nothing.
        if (charsmap.is_null() || charsmap == "") return [](std::string text) { return text; };
        if (!charsmap.is_string()) fail_input(here, "\"precompiled_charsmap\" is not a base64 string");
        std::optional<std::string> blob = base64_decode(charsmap.get<std::string>());
        if (!blob) fail_input(here, "\"precompiled_charsmap\" is not base64");
        auto rules = std::make_shared<const PrecompiledCharsmap>(std::move(*blob), here);
        return [rules, limit](std::string text) { return rules->normalize(text, limit.max_bytes()); };
    }
    if (type == "Lowercase") return [](std::string text) { return to_lower(text); };
    if (type == "NFD") return normalize_nfd;
    if (type == "NFC") return normalize_nfc;
    if (type == "NFKC") return normalize_nfkc;
    if (type == "NFKD") return normalize_nfkd;
    if (type == "StripAccents") return strip_accents;
    if (type == "Strip") {
        const bool left = bool_member(spec, "strip_left", true), right = bool_member(spec, "strip_right", true);
        return [left, right](std::string text) {
            std::u32string code_points = decode_utf8(text);
            size_t begin = 0, end = code_points.size();
            while (left && begin < end && is_unicode_whitespace(code_points[begin])) ++begin;
            while (right && end > begin && is_unicode_whitespace(code_points[end - 1])) --end;
            std::string out;
            for (size_t i = begin; i < end; ++i) out += encode_utf8(code_points[i]);
            return out;
        };
    }
    fail_input(where, fmt::format("unsupported normalizer type \"{}\" (supported: Sequence, Prepend, Replace, "
                                  "BertNormalizer, Lowercase, NFD, NFC, NFKC, NFKD, StripAccents, Strip)",
                                  escape_invalid_utf8(type)));
}

}  // namespace

Normalizer parse_normalizer(const json& spec, const std::string& where, uint64_t memory_budget) {
    if (spec.is_null()) return [](std::string text) { return text; };
    const std::string type = type_of(spec, where);
    const NormalizedLimit limit(memory_budget, fmt::format("{}: normalizer {}", where, type));
    Normalizer step = normalizer_step(spec, type, where, limit);
    return [step = std::move(step), limit](std::string text) {
        std::string out = step(std::move(text));
        limit.check(out.size());
        return out;
    };
}

PreTokenizer parse_pre_tokenizer(const json& spec, const std::string& where) {
    if (spec.is_null()) return [](std::vector<std::string> words, bool) { return words; };
    const std::string type = type_of(spec, where);
    const std::string here = fmt::format("{}: pre_tokenizer {}", where, type);
    if (type == "Sequence") {
        std::vector<PreTokenizer> steps;
        for (const json& step : member(spec, "pretokenizers", here)) steps.push_back(parse_pre_tokenizer(step, where));
        return [steps](std::vector<std::string> words, bool first_segment) {
            for (const PreTokenizer& step : steps) words = step(std::move(words), first_segment);
            return words;
        };
    }
    if (type == "ByteLevel") return byte_level_pre_tokenizer(spec, here);
    if (type == "Split") {
        const json& pattern = member(spec, "pattern", here);
        const std::string regex = pattern.contains("Regex")
                                      ? string_member(pattern, "Regex", here)
                                      : fmt::format("\\Q{}\\E", string_member(pattern, "String", here));
        return regex_splitter(regex, string_member(spec, "behavior", here), bool_member(spec, "invert", false), here);
    }
    if (type == "Metaspace") return metaspace_pre_tokenizer(spec, here);
    if (type == "BertPreTokenizer") {
        const PreTokenizer on_spaces = character_splitter(is_bert_whitespace, true),
                           on_punctuation = character_splitter(is_bert_punctuation, false);
        return [=](std::vector<std::string> words, bool first) {
            return on_punctuation(on_spaces(std::move(words), first), first);
        };
    }
    if (type == "Whitespace") return regex_splitter(R"(\w+|[^\w\s]+)", "Removed", true, here);
    if (type == "WhitespaceSplit") return character_splitter(is_unicode_whitespace, true);
    if (type == "Digits")
        return regex_splitter(bool_member(spec, "individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", "Isolated",
                              false, here);
    if (type == "Punctuation") {
        const std::string behavior = spec.contains("behavior") ? string_member(spec, "behavior", here) : "Isolated";
        return regex_splitter(R"([\p{P}[!-/:-@\[-`{-~]])", behavior, false, here);
    }
    fail_input(where, fmt::format("unsupported pre_tokenizer type \"{}\" (supported: Sequence, ByteLevel, Split, "
                                  "Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, Digits, Punctuation)",
                                  escape_invalid_utf8(type)));
}

namespace {

void add_decoder(TokenDecoder& decoder, const json& spec, const std::string& where) {
    const std::string type = type_of(spec, where);
    const std::string here = fmt::format("{}: decoder {}", where, type);
    if (type == "Sequence") {
        for (const json& step : member(spec, "decoders", here)) add_decoder(decoder, step, where);
    } else if (type == "ByteLevel") {
        decoder.per_token.push_back([](std::string token) { return byte_level_decode(token); });
    } else if (type == "Replace") {
        const json& pattern = member(spec, "pattern", here);
        const std::string from = string_member(pattern, "String", here), to = string_member(spec, "content", here);
        decoder.per_token.push_back([from, to](std::string token) { return replace_all(token, from, to); });
    } else if (type == "ByteFallback") {
        decoder.per_token.push_back([](std::string token) {
            const std::optional<unsigned char> byte = byte_fallback_byte(token);
            return byte ? std::string(1, static_cast<char>(*byte)) : token;
        });
    } else if (type == "Fuse") {
        // Joining is what decode() does anyway.
    } else if (type == "Strip") {
        if (string_member(spec, "content", here) != " ") fail_input(here, "only spaces can be stripped");
        decoder.strip_leading_spaces =
            static_cast<int>(json_integer_in(member(spec, "start", here), 0, INT32_MAX, here, "\"start\""));
    } else if (type == "Metaspace") {
        const std::string replacement = string_member(spec, "replacement", here);
        decoder.per_token.push_back([replacement](std::string token) { return replace_all(token, replacement, " "); });
        const bool prepends = spec.contains("prepend_scheme") && spec["prepend_scheme"].is_string()
                                  ? spec["prepend_scheme"] != "never"
                                  : bool_member(spec, "add_prefix_space", true);
        decoder.strip_leading_spaces = prepends ? 1 : 0;
    } else if (type == "WordPiece") {
        decoder.word_prefix = spec.contains("prefix") ? string_member(spec, "prefix", here) : "##";
        decoder.cleanup = bool_member(spec, "cleanup", true);
    } else {
        fail_input(where, fmt::format(
                              "unsupported decoder type \"{}\" (supported: Sequence, ByteLevel, Replace, ByteFallback, "
                              "Fuse, Strip, Metaspace, WordPiece)",
                              escape_invalid_utf8(type)));
    }
}

// HF's clean_up_tokenization: spaces before punctuation and English contractions removed.
std::string clean_up_tokenization(std::string text) {
    for (const auto& [from, to] : {std::pair<const char*, const char*>{" .", "."},
                                   {" ?", "?"},
                                   {" !", "!"},
                                   {" ,", ","},
                                   {" ' ", "'"},
                                   {" n't", "n't"},
                                   {" 'm", "'m"},
                                   {" 's", "'s"},
                                   {" 've", "'ve"},
                                   {" 're", "'re"}})
        text = replace_all(text, from, to);
    return text;
}

}  // namespace

TokenDecoder parse_decoder(const json& spec, const std::string& where) {
    TokenDecoder decoder;
    if (!spec.is_null()) add_decoder(decoder, spec, where);
    return decoder;
}

std::string TokenDecoder::token_text(const std::string& token) const {
    std::string text = token;
    for (const auto& step : per_token) text = step(std::move(text));
    return text;
}

std::string TokenDecoder::decode(const std::vector<std::string>& tokens) const {
    std::string text;
    for (size_t i = 0; i < tokens.size(); ++i) {
        std::string piece = token_text(tokens[i]);
        if (!word_prefix.empty() && i > 0) {
            if (piece.compare(0, word_prefix.size(), word_prefix) == 0)
                piece.erase(0, word_prefix.size());
            else
                piece.insert(0, " ");
        }
        text += piece;
    }
    for (int i = 0; i < strip_leading_spaces && !text.empty() && text[0] == ' '; ++i) text.erase(0, 1);
    return cleanup ? clean_up_tokenization(std::move(text)) : text;
}

}  // namespace attn_viz
