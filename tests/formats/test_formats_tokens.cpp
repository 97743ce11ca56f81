// Token label files (JSON list or one per line) and embeddings inputs (.npy or safetensors).
#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "npy.hpp"
#include "safetensors.hpp"
#include "support.hpp"
#include "token_file.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("formats") {

TEST_CASE("token files: JSON lists and one token per line") {
    ScratchDir dir;
    write_text(dir / "t.json", "  [\"The\", \" cat\", \"\\u00e9t\\u00e9\", 42, \" \"]\n");
    CHECK(read_tokens(dir / "t.json") == std::vector<std::string>{"The", " cat", "\xc3\xa9t\xc3\xa9", "42", " "});
    write_text(dir / "t.txt", "The\r\n cat\n\n[x]\n");
    CHECK(read_tokens(dir / "t.txt") == std::vector<std::string>{"The", " cat", "", "[x]"});
    write_text(dir / "one.txt", "solo");
    CHECK(read_tokens(dir / "one.txt") == std::vector<std::string>{"solo"});
    write_text(dir / "bad.json", "[\"a\", {\"b\": 1}]");
    expect_error(ErrorKind::bad_input, [&] { read_tokens(dir / "bad.json"); }, {"bad.json", "token 1"});
    write_text(dir / "bad.json", "[\"a\", ");
    expect_error(ErrorKind::bad_input, [&] { read_tokens(dir / "bad.json"); }, {"bad.json", "not valid JSON"});
    write_text(dir / "empty.txt", "");
    expect_error(ErrorKind::bad_input, [&] { read_tokens(dir / "empty.txt"); }, {"empty.txt", "no tokens"});
}

TEST_CASE("token files: bytes that are not UTF-8 become \\xNN, a JSON list with them is refused") {
    ScratchDir dir;
    // Stray bytes, a multi-byte character cut short, an overlong '/', valid UTF-8 kept as it is.
    write_text(dir / "t.txt",
               "a\xff\xfe"
               "b\n\xe2\x82\n\xc0\xaf\nok \xe2\x82\xac\n\xe2\x82");
    CHECK(read_tokens(dir / "t.txt") ==
          std::vector<std::string>{"a\\xff\\xfeb", "\\xe2\\x82", "\\xc0\\xaf", "ok \xe2\x82\xac", "\\xe2\\x82"});
    write_text(dir / "t.json", "[\"a\xff\"]");
    expect_error(ErrorKind::bad_input, [&] { read_tokens(dir / "t.json"); }, {"t.json", "not valid JSON"});
}

TEST_CASE("token id lists such as --tokens 1,403,407") {
    CHECK(parse_token_ids("1,403,407", "--tokens") == std::vector<int>{1, 403, 407});
    CHECK(parse_token_ids(" 5 6,7, 0", "--tokens") == std::vector<int>{5, 6, 7, 0});
    CHECK(parse_token_ids("2147483647", "--tokens") == std::vector<int>{2147483647});
    for (const std::string bad : {"", " , ", "1,x", "1,-2", "3.5", "99999999999999999999", "2147483648", "12a"}) {
        INFO(bad);
        CHECK(expect_error(ErrorKind::usage, [&] { parse_token_ids(bad, "--tokens"); }, {}).rfind("--tokens: ", 0) ==
              0);
    }
}

TEST_CASE("embeddings from .npy and from a safetensors tensor") {
    ScratchDir dir;
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{{1, 3}, {5, 8}, {7, 1}}) {
        const Tensor x = random_tensor(shape);
        write_npy(dir / "x.npy", x);
        CHECK(read_embeddings(dir / "x.npy").data == x.data);
        write_safetensors(dir / "one.safetensors", {{"embeddings", x}});
        CHECK(read_embeddings(dir / "one.safetensors").data == x.data);
        write_safetensors(dir / "two.safetensors", {{"a", random_tensor({2, 2})}, {"x", x}});
        const Tensor back = read_embeddings(dir / "two.safetensors", "x");
        CHECK(back.shape == x.shape);
        CHECK(back.data == x.data);
        expect_error(ErrorKind::bad_input, [&] { read_embeddings(dir / "two.safetensors"); },
                     {"two.safetensors", "name the embeddings tensor"});
        expect_error(ErrorKind::bad_input, [&] { read_embeddings(dir / "two.safetensors", "y"); },
                     {"two.safetensors", "no tensor 'y'"});
    }
    write_npy(dir / "v.npy", random_tensor({6}));
    expect_error(ErrorKind::bad_input, [&] { read_embeddings(dir / "v.npy"); }, {"v.npy", "expected [T, D]"});
}

}  // TEST_SUITE("formats")
