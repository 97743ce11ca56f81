// Hostile text: escape_invalid_utf8, dump_json and base64; byte-fallback token spellings.
#include <cstdio>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "json_text.hpp"
#include "support.hpp"
#include "text_codecs.hpp"
#include "utf8.hpp"

using namespace attn_viz;

namespace {

bool valid_utf8(const std::string& text) { return decode_utf8(text).find(U'\uFFFD') == std::u32string::npos; }

}  // namespace

TEST_SUITE("core") {

TEST_CASE("base64: random bytes of every length round-trip; RFC 4648's vectors; what is not base64 is refused") {
    for (size_t size = 0; size < 40; ++size) {
        std::string bytes(size, '\0');
        for (char& b : bytes) b = static_cast<char>(test_support::rng()() & 0xFF);
        const std::string text = base64_encode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        CAPTURE(size);
        CHECK(base64_decode(text) == bytes);
        CHECK(base64_decode(text.substr(0, text.find('='))) == bytes);  // padding optional
    }
    CHECK(base64_decode("Zm9vYmFy") == "foobar");
    CHECK(base64_decode("Zm9vYg==") == "foob");
    CHECK(base64_decode("Zg") == "f");
    CHECK(!base64_decode("Zm9v YmFy"));
    CHECK(!base64_decode("Zm9vY"));  // a lone sextet is not a byte
    CHECK(!base64_decode("Zm-_"));   // the URL-safe alphabet is another encoding
}

TEST_CASE("escape_invalid_utf8 keeps valid UTF-8 and writes every other byte as \\xNN") {
    CHECK(escape_invalid_utf8("") == "");
    CHECK(escape_invalid_utf8("plain ascii") == "plain ascii");
    CHECK(escape_invalid_utf8("a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80") == "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80");
    CHECK(escape_invalid_utf8("\xff\xfe") == "\\xff\\xfe");
    CHECK(escape_invalid_utf8("x\xe6\x97") == "x\\xe6\\x97");  // truncated at the end
    CHECK(escape_invalid_utf8("\xe6\x97"
                              "a") == "\\xe6\\x97a");                              // truncated before ASCII
    CHECK(escape_invalid_utf8("\xc0\xaf") == "\\xc0\\xaf");                        // overlong '/'
    CHECK(escape_invalid_utf8("\xed\xa0\x80") == "\\xed\\xa0\\x80");               // an encoded surrogate
    CHECK(escape_invalid_utf8("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");      // past U+10FFFF
    CHECK(escape_invalid_utf8("\x80\xc3\xa9") == "\\x80\xc3\xa9");                 // a stray continuation byte
    CHECK(escape_invalid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));  // NUL is valid UTF-8
    // Random bytes: the result is always valid UTF-8 and the valid input survives unchanged.
    std::uniform_int_distribution<int> byte(0, 255);
    for (int n = 0; n < 200; ++n) {
        std::string bytes(static_cast<size_t>(n % 17), '\0');
        for (char& c : bytes) c = static_cast<char>(byte(test_support::rng()));
        const std::string escaped = escape_invalid_utf8(bytes);
        CHECK(valid_utf8(escaped));
        CHECK(escape_invalid_utf8(escaped) == escaped);
    }
}

TEST_CASE("byte_token_name spells every byte as printf's \"<0x%02X>\" does") {
    for (int byte = 0; byte < 256; ++byte) {
        char expected[8];
        std::snprintf(expected, sizeof expected, "<0x%02X>", byte);
        CHECK(byte_token_name(static_cast<unsigned char>(byte)) == expected);
    }
}

TEST_CASE("dump_json writes what nlohmann::json would, and escapes invalid UTF-8 instead of throwing") {
    const nlohmann::json good = {{"tokens", {"a", "\xc3\xa9"}}, {"n", 1.5}, {"nested", {{"k", nullptr}}}};
    CHECK(dump_json(good) == good.dump());
    CHECK(dump_json(good, 2) == good.dump(2));
    nlohmann::json bad = {{"tokens", {"ok", "a\xff", {{"deep", "\xe2\x82"}}}}, {"key\xfe", true}, {"n", 3}};
    CHECK_THROWS_AS((void)bad.dump(), nlohmann::json::type_error);
    const std::string text = dump_json(bad, 2);
    REQUIRE(valid_utf8(text));
    const nlohmann::json back = nlohmann::json::parse(text);
    CHECK(back["tokens"][1] == "a\\xff");
    CHECK(back["tokens"][2]["deep"] == "\\xe2\\x82");
    CHECK(back["key\\xfe"] == true);
    CHECK(back["n"] == 3);
}

}  // TEST_SUITE("core")
