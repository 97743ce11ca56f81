// The Unicode operations tokenizers need, done by ICU (Debian's libicu): regular expressions with
// Unicode classes (\p{L}, \p{N}), normalization forms, case mapping and character categories.
// Text is UTF-8 in and out; callers check it is valid UTF-8 first (is_valid_utf8).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn_viz {

bool is_valid_utf8(std::string_view text);

// A compiled pattern in the syntax of Hugging Face tokenizers' Split pre-tokenizers (Oniguruma,
// as Python's `regex` module writes it). \s and \S mean Unicode White_Space as there (ICU's own
// \s lacks U+000B and U+0085). Throws Error(bad_input) naming `where` when it does not compile.
class UnicodeRegex {
public:
    UnicodeRegex(const std::string& pattern, const std::string& where);
    ~UnicodeRegex();
    UnicodeRegex(UnicodeRegex&&) noexcept;
    UnicodeRegex& operator=(UnicodeRegex&&) noexcept;

    // `text` cut into the pattern's successive matches and the pieces between them, in order:
    // every byte of `text` is in exactly one piece; `matched` says which kind each piece is.
    // A match that backtracks past ICU's time or stack limit is Error(bad_input) naming `where`
    // and the pattern.
    struct Piece {
        std::string text;
        bool matched;
    };
    std::vector<Piece> split(const std::string& text) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Unicode normalization forms and full case mapping (lower-casing "İ" gives two code points, as
// Python's str.lower() does).
std::string normalize_nfd(const std::string& text);
std::string normalize_nfc(const std::string& text);
std::string normalize_nfkc(const std::string& text);
std::string normalize_nfkd(const std::string& text);
std::string to_lower(const std::string& text);

// `text` cut into its extended grapheme clusters (user-perceived characters: "e" + U+0301, a
// flag's two regional indicators, an emoji joined by U+200D), by ICU's character break rules.
std::vector<std::string> grapheme_clusters(const std::string& text);

// Character classes by Unicode general category (ICU's data, never tables of ours).
bool is_unicode_whitespace(char32_t c);  // the White_Space property
bool is_control(char32_t c);             // Cc, Cf, Cn, Co (BERT's _is_control, less \t \n \r)
bool is_punctuation(char32_t c);         // any P* category
bool is_nonspacing_mark(char32_t c);     // Mn, what accent stripping removes after NFD

}  // namespace attn_viz
