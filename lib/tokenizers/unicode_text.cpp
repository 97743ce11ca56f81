#include "unicode_text.hpp"

#include <fmt/format.h>
#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utext.h>

#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {

bool is_valid_utf8(std::string_view text) { return escape_invalid_utf8(text).size() == text.size(); }

namespace {

// \s and \S as Unicode White_Space, everything else as written (escapes copied whole).
std::string with_white_space_classes(const std::string& pattern) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '\\' || i + 1 == pattern.size()) {
            out += pattern[i];
            continue;
        }
        const char escaped = pattern[++i];
        if (escaped == 's')
            out += "\\p{White_Space}";
        else if (escaped == 'S')
            out += "\\P{White_Space}";
        else
            out += {'\\', escaped};
    }
    return out;
}

std::string to_utf8(const icu::UnicodeString& text) {
    std::string out;
    text.toUTF8String(out);
    return out;
}

using NormalizerInstance = const icu::Normalizer2* (*)(UErrorCode&);

std::string normalize(const std::string& text, NormalizerInstance instance) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* normalizer = instance(status);
    if (U_FAILURE(status))
        throw Error(ErrorKind::internal, fmt::format("ICU normalizer unavailable: {}", u_errorName(status)));
    const icu::UnicodeString normalized = normalizer->normalize(icu::UnicodeString::fromUTF8(text), status);
    if (U_FAILURE(status))
        throw Error(ErrorKind::internal, fmt::format("ICU normalization failed: {}", u_errorName(status)));
    return to_utf8(normalized);
}

}  // namespace

// Bounds on one match (one find()), so a pattern that backtracks catastrophically ("(a+)+$" over
// a long run of a's) ends in an error rather than running for ever. ICU counts time in steps of
// its match engine (on the order of a millisecond each); real tokenizers' patterns (GPT-2's,
// Llama 3's, Qwen2's) take well under one step per match even over long runs of one character
// class. The backtracking stack may grow to 64 MB (ICU's default is 8 MB).
constexpr int32_t match_time_limit_steps = 2000;
constexpr int32_t match_stack_limit_bytes = 64 << 20;

struct UnicodeRegex::Impl {
    std::unique_ptr<icu::RegexPattern> pattern;
    std::string source;  // the pattern as written, for messages
    std::string where;
};

UnicodeRegex::UnicodeRegex(const std::string& pattern, const std::string& where) : impl_(std::make_unique<Impl>()) {
    impl_->source = pattern;
    impl_->where = where;
    UErrorCode status = U_ZERO_ERROR;
    UParseError parse_error{};
    impl_->pattern.reset(icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(with_white_space_classes(pattern)),
                                                    parse_error, status));
    if (U_FAILURE(status))
        fail_input(where, fmt::format("the regular expression does not compile ({} at offset {})",
                                      std::string(u_errorName(status)), parse_error.offset));
}

UnicodeRegex::~UnicodeRegex() = default;
UnicodeRegex::UnicodeRegex(UnicodeRegex&&) noexcept = default;
UnicodeRegex& UnicodeRegex::operator=(UnicodeRegex&&) noexcept = default;

std::vector<UnicodeRegex::Piece> UnicodeRegex::split(const std::string& text) const {
    // Step 1: match over the UTF-8 bytes directly (a UTF-8 UText), so match offsets are byte offsets.
    UErrorCode status = U_ZERO_ERROR;
    UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
    std::unique_ptr<icu::RegexMatcher> matcher(impl_->pattern->matcher(status));
    if (U_SUCCESS(status)) matcher->reset(utext);
    if (U_SUCCESS(status)) matcher->setTimeLimit(match_time_limit_steps, status);
    if (U_SUCCESS(status)) matcher->setStackLimit(match_stack_limit_bytes, status);
    // Step 2: each match, and the unmatched bytes before it, become pieces; then the tail.
    std::vector<Piece> pieces;
    int64_t done = 0;
    while (U_SUCCESS(status) && matcher->find(status)) {
        const int64_t start = matcher->start64(status), end = matcher->end64(status);
        if (U_FAILURE(status) || end == start) continue;  // an empty match adds no piece
        if (start > done) pieces.push_back({text.substr(done, start - done), false});
        pieces.push_back({text.substr(start, end - start), true});
        done = end;
    }
    utext_close(utext);
    if (status == U_REGEX_TIME_OUT || status == U_REGEX_STACK_OVERFLOW)
        fail_input(impl_->where, fmt::format("the regular expression \"{}\" {} on a piece of {} bytes of text "
                                             "(catastrophic backtracking: nested or overlapping repeats)",
                                             escape_invalid_utf8(impl_->source.substr(0, 200)),
                                             status == U_REGEX_TIME_OUT ? "ran past the time limit"
                                                                        : "ran past the backtracking stack limit",
                                             text.size()));
    if (U_FAILURE(status))
        throw Error(ErrorKind::internal, fmt::format("ICU regex matching failed: {}", u_errorName(status)));
    if (done < static_cast<int64_t>(text.size())) pieces.push_back({text.substr(done), false});
    return pieces;
}

std::string normalize_nfd(const std::string& text) { return normalize(text, &icu::Normalizer2::getNFDInstance); }
std::string normalize_nfc(const std::string& text) { return normalize(text, &icu::Normalizer2::getNFCInstance); }
std::string normalize_nfkc(const std::string& text) { return normalize(text, &icu::Normalizer2::getNFKCInstance); }
std::string normalize_nfkd(const std::string& text) { return normalize(text, &icu::Normalizer2::getNFKDInstance); }

std::string to_lower(const std::string& text) {
    icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(text);
    return to_utf8(unicode.toLower(icu::Locale::getRoot()));
}

std::vector<std::string> grapheme_clusters(const std::string& text) {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> breaks(
        icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    // A UText over the UTF-8 bytes, so the break positions are byte offsets into `text`.
    UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
    if (U_SUCCESS(status)) breaks->setText(utext, status);
    if (U_FAILURE(status)) {
        utext_close(utext);
        throw Error(ErrorKind::internal, fmt::format("ICU character breaks unavailable: {}", u_errorName(status)));
    }
    std::vector<std::string> clusters;
    for (int32_t begin = breaks->first(), end = breaks->next(); end != icu::BreakIterator::DONE;
         begin = end, end = breaks->next())
        clusters.push_back(text.substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin)));
    breaks.reset();
    utext_close(utext);
    return clusters;
}

bool is_unicode_whitespace(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

bool is_control(char32_t c) {
    if (c == U'\t' || c == U'\n' || c == U'\r') return false;
    const int8_t type = u_charType(static_cast<UChar32>(c));
    return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_UNASSIGNED || type == U_PRIVATE_USE_CHAR;
}

bool is_punctuation(char32_t c) { return u_ispunct(static_cast<UChar32>(c)); }
bool is_nonspacing_mark(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK; }

}  // namespace attn_viz
