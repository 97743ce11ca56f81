// Hostile nesting in JSON inputs: every loader parses through parse_json_text, which refuses
// more than 64 levels before anything recursive (nlohmann's dump(), copies, comparisons) can
// overflow the stack; and error messages quote values through json_excerpt, which is not
// recursive and quotes a short prefix only.
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "expect_error.hpp"
#include "hf_config.hpp"
#include "input_file.hpp"
#include "json_input.hpp"
#include "safetensors.hpp"
#include "sequence_stream.hpp"
#include "support.hpp"
#include "token_file.hpp"
#include "utf8.hpp"
#include "weights_file.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// `inner` inside `levels` nested arrays.
std::string nested_arrays(int levels, const std::string& inner = "0") {
    return std::string(static_cast<size_t>(levels), '[') + inner + std::string(static_cast<size_t>(levels), ']');
}

// About 50,000 levels (a 100 KB file): far past the limit, and deep enough that the recursive
// dump() the loaders used to call overflowed an 8 MB stack.
int hostile_depth() { return 50000 + static_cast<int>(rng()() % 1000); }

// A safetensors file with one F32 tensor "a" whose header says `"shape": <shape_json>`.
std::string safetensors_with_shape(const std::string& shape_json) {
    std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":" + shape_json + ",\"data_offsets\":[0,4]}}";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[size_t(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    return bytes + header + std::string(4, '\0');
}

// A random JSON value at most `depth` levels deep: strings mix ASCII, escapes, control
// characters and 2-, 3- and 4-byte UTF-8 characters.
nlohmann::json random_value(int depth) {
    static const char* const pieces[] = {"a",  "Z",    " ",        "\"",           "\\",
                                         "\n", "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    auto& g = rng();
    const auto random_string = [&g] {
        std::string s;
        for (size_t n = g() % 30; n > 0; --n) s += pieces[g() % std::size(pieces)];
        return s;
    };
    switch (depth > 0 ? g() % 6 : g() % 4) {
        case 0:
            return random_string();
        case 1:
            return static_cast<int64_t>(g() % 2000001) - 1000000;
        case 2:
            return std::uniform_real_distribution<double>(-1e6, 1e6)(g);
        case 3:
            return g() % 3 == 0 ? nlohmann::json() : nlohmann::json(g() % 2 == 0);
        case 4: {
            nlohmann::json a = nlohmann::json::array();
            for (size_t n = g() % 5; n > 0; --n) a.push_back(random_value(depth - 1));
            return a;
        }
        default: {
            nlohmann::json o = nlohmann::json::object();
            for (size_t n = g() % 5; n > 0; --n) o[random_string()] = random_value(depth - 1);
            return o;
        }
    }
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("every JSON loader refuses a file nested ~50,000 levels deep with a clean error naming it") {
    ScratchDir dir;
    const std::string deep = nested_arrays(hostile_depth());
    const std::string refusal = "JSON nesting deeper than 64 levels";

    write_text(dir / "w.json", "{\"format\":" + deep + ",\"d_model\":2,\"num_heads\":1}");
    expect_error(ErrorKind::bad_input, [&] { read_weights_file(dir / "w.json"); }, {"w.json", refusal});

    write_text(dir / "x.json", "{\"embeddings\":" + deep + "}");
    expect_error(ErrorKind::bad_input, [&] { read_input_file(dir / "x.json", 2); }, {"x.json", refusal});

    write_text(dir / "tokens.json", "[\"a\"," + deep + "]");
    expect_error(ErrorKind::bad_input, [&] { read_tokens(dir / "tokens.json"); }, {"tokens.json", refusal});

    write_text(dir / "deep.safetensors", safetensors_with_shape(deep));
    expect_error(ErrorKind::bad_input, [&] { SafetensorsFile{dir / "deep.safetensors"}; },
                 {"deep.safetensors", refusal});

    write_text(dir / "config.json", "{\"hidden_size\":8,\"num_attention_heads\":" + deep + "}");
    expect_error(ErrorKind::bad_input, [&] { read_hf_config(dir / "config.json"); }, {"config.json", refusal});

    write_text(dir / "corpus.jsonl", "{\"embeddings\":[[1,2]]}\n{\"embeddings\":" + deep + "}\n");
    expect_error(ErrorKind::bad_input,
                 [&] {
                     CorpusDocuments documents(dir / "corpus.jsonl");
                     SequenceStream stream(documents, 2);
                     SequenceInput sequence;
                     std::string where;
                     while (stream.next(sequence, where)) {}
                 },
                 {"corpus.jsonl:2", refusal});
}

TEST_CASE("parse_json_text accepts 64 levels of arrays or objects and refuses 65") {
    std::string objects_64 = "0";
    for (int i = 0; i < 64; ++i) objects_64 = "{\"k\":" + objects_64 + "}";
    for (const std::string& text : {nested_arrays(64), objects_64, "[{\"k\":" + nested_arrays(62) + "}]"}) {
        const nlohmann::json value = parse_json_text(text, "ok.json");
        CHECK(value.dump() == text);
    }
    for (const std::string& text :
         {nested_arrays(65), "{\"k\":" + objects_64 + "}", "[{\"k\":" + nested_arrays(63) + "}]"})
        expect_error(ErrorKind::bad_input, [&] { parse_json_text(text, "deep.json"); },
                     {"deep.json: JSON nesting deeper than 64 levels"});
    // Depth, not size: 10,000 siblings at depth 2 are fine.
    std::string wide = "[";
    for (int i = 0; i < 10000; ++i) wide += (i ? ",[" : "[") + std::to_string(i) + "]";
    CHECK(parse_json_text(wide + "]", "wide.json").size() == 10000);
}

TEST_CASE("a parse error quotes at most a short prefix of the offending text") {
    // nlohmann's reason ends with the whole token it last read: here a 1 MB unterminated string.
    const std::string text = "[\"" + std::string(1 << 20, 'a');
    const std::string message = expect_error(
        ErrorKind::bad_input, [&] { parse_json_text(text, "long.json", "token list is not valid JSON"); }, {});
    CHECK(message.rfind("long.json: token list is not valid JSON: ", 0) == 0);
    CHECK(message.size() < 300);
    CHECK(message.substr(message.size() - 3) == "...");
}

TEST_CASE("json_excerpt is the compact dump when short, else a prefix of it ending in ...") {
    for (int trial = 0; trial < 300; ++trial) {
        const nlohmann::json value = random_value(3);
        const std::string dump = value.dump();
        const size_t max_chars = rng()() % 80;
        const std::string excerpt = json_excerpt(value, max_chars);
        CAPTURE(dump);
        CAPTURE(max_chars);
        CHECK(decode_utf8(excerpt).find(U'\uFFFD') == std::u32string::npos);  // never cuts a character in two
        if (dump.size() <= max_chars) {
            CHECK(excerpt == dump);
            continue;
        }
        REQUIRE(excerpt.size() >= 3);
        CHECK(excerpt.substr(excerpt.size() - 3) == "...");
        const std::string kept = excerpt.substr(0, excerpt.size() - 3);
        CHECK(dump.rfind(kept, 0) == 0);
        CHECK(kept.size() <= max_chars);
        CHECK(kept.size() + 3 >= max_chars);  // cut back by at most a partial UTF-8 character
    }
    CHECK(json_excerpt(nlohmann::json{{"a", {1, 2.5, "x\n"}}}) == "{\"a\":[1,2.5,\"x\\n\"]}");
    CHECK(json_excerpt(nlohmann::json(std::string(100, 'b')), 10) == "\"bbbbbbbbb...");
}

TEST_CASE("json_excerpt quotes a value nested 100,000 levels deep without recursing") {
    const int levels = 100000;
    const nlohmann::json deep =
        nlohmann::json::parse(nested_arrays(levels, "\"core\""));  // no limit: nlohmann parses iteratively
    CHECK(json_excerpt(deep, 40) == std::string(40, '[') + "...");
    CHECK(json_excerpt(deep, 0) == "...");
}

TEST_CASE("messages quote a bad value within the nesting limit by a short excerpt") {
    ScratchDir dir;
    // The error `load` throws: bad input on one line with every fragment, and short however large
    // the offending value.
    const auto expect_short_error = [](const std::function<void()>& load, const std::vector<std::string>& fragments) {
        const std::string message = expect_error(ErrorKind::bad_input, load, fragments);
        CHECK_MESSAGE(message.size() < 300, message);
    };
    std::string long_list = "[";
    for (int i = 0; i < 100000; ++i) long_list += std::to_string(i) + ",";
    long_list.back() = ']';

    write_text(dir / "w.json", "{\"format\":" + nested_arrays(63, nlohmann::json(std::string(5000, 'z')).dump()) + "}");
    expect_short_error([&] { read_weights_file(dir / "w.json"); },
                       {"w.json: unsupported format [[[[[[[[[[", "...", "(expected"});

    write_text(dir / "config.json", "{\"num_attention_heads\":" + long_list + "}");
    expect_short_error(
        [&] { read_hf_config(dir / "config.json"); },
        {"config.json: \"num_attention_heads\" is [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,1..., expected"});

    write_text(dir / "s.safetensors", safetensors_with_shape(nested_arrays(62)));
    expect_short_error([&] { SafetensorsFile{dir / "s.safetensors"}; },
                       {"s.safetensors", "shape [[[[", "...", "not a list"});

    write_text(dir / "tokens.json", "[\"a\",{\"k\":" + long_list + "}]");
    expect_short_error([&] { read_tokens(dir / "tokens.json"); },
                       {"tokens.json: token 1 is {\"k\":[0,1,2,", "..., not a string"});
}

}  // TEST_SUITE("models")
