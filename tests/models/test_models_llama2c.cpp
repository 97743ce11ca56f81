// llama2.c checkpoints and tokenizers written here from random data: loading, conventions
// (x W, shared or separate classifier), the encoder on a hand-made vocabulary, hostile files.
#include <chrono>
#include <cstring>
#include <iterator>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "load_limits.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"
#include "utf8.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

struct Header {
    int32_t dim, hidden, layers, heads, kv_heads, vocab, seq_len;
};

template <typename T>
void append(std::string& bytes, const T& value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void append_tensor(std::string& bytes, const Tensor& t) {
    bytes.append(reinterpret_cast<const char*>(t.ptr()), t.data.size() * 4);
}

// A checkpoint of random arrays in file order; `arrays` receives them (matrices stored [out, in]).
std::string checkpoint_bytes(const Header& h, std::vector<Tensor>& arrays) {
    const int64_t d = h.dim, f = h.hidden, layers = h.layers, head = h.dim / h.heads, kv = h.kv_heads * head;
    const int64_t vocab = std::abs(h.vocab);
    arrays = {random_tensor({vocab, d}),
              random_tensor({layers, d}),
              random_tensor({layers, d, d}),
              random_tensor({layers, kv, d}),
              random_tensor({layers, kv, d}),
              random_tensor({layers, d, d}),
              random_tensor({layers, d}),
              random_tensor({layers, f, d}),
              random_tensor({layers, d, f}),
              random_tensor({layers, f, d}),
              random_tensor({d}),
              random_tensor({h.seq_len, head})};
    if (h.vocab < 0) arrays.push_back(random_tensor({vocab, d}));
    std::string bytes;
    append(bytes, h);
    for (const Tensor& t : arrays) append_tensor(bytes, t);
    return bytes;
}

// Matrix `index` of a stacked [layers, rows, cols] array.
Tensor layer_matrix(const Tensor& stacked, int64_t index) {
    const int64_t rows = stacked.dim(1), cols = stacked.dim(2);
    Tensor m({rows, cols});
    std::copy_n(stacked.ptr() + index * rows * cols, rows * cols, m.ptr());
    return m;
}

// run.c's encoder as it was first written here, rescanning every pair after each merge: the
// reference the queued merges must match. Texts of ASCII only (a code point is one byte).
std::vector<int> rescanning_encode(const std::vector<std::string>& pieces, const std::vector<float>& scores,
                                   const std::string& text, bool bos) {
    const auto lookup = [&](const std::string& piece) {
        for (size_t id = 0; id < pieces.size(); ++id)
            if (pieces[id] == piece) return static_cast<int>(id);
        return -1;
    };
    std::vector<int> tokens;
    if (bos) tokens.push_back(1);
    if (!text.empty()) tokens.push_back(lookup(" "));
    for (char c : text) {
        const int id = lookup(std::string(1, c));
        tokens.push_back(id >= 0 ? id : static_cast<unsigned char>(c) + 3);
    }
    while (true) {
        float best_score = -1e10f;
        int best_id = -1;
        size_t best_index = 0;
        for (size_t i = 0; i + 1 < tokens.size(); ++i) {
            const int id = lookup(pieces[static_cast<size_t>(tokens[i])] + pieces[static_cast<size_t>(tokens[i + 1])]);
            if (id >= 0 && scores[static_cast<size_t>(id)] > best_score) {
                best_score = scores[static_cast<size_t>(id)];
                best_id = id;
                best_index = i;
            }
        }
        if (best_id < 0) break;
        tokens[best_index] = best_id;
        tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_index) + 1);
    }
    return tokens;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("llama2.c checkpoints load with x W matrices and shared or separate classifiers") {
    ScratchDir dir;
    for (Header h : {Header{16, 24, 2, 4, 2, 40, 8}, Header{8, 12, 1, 1, 1, -7, 3}, Header{12, 5, 3, 6, 6, 9, 1}}) {
        INFO("dim " << h.dim << " heads " << h.heads << " kv " << h.kv_heads << " vocab " << h.vocab);
        std::vector<Tensor> arrays;
        write_text(dir / "m.bin", checkpoint_bytes(h, arrays));
        const ModelWeights w = read_llama2c_checkpoint(dir / "m.bin");
        CHECK(w.config.vocab_size == std::abs(h.vocab));
        CHECK(w.config.shared_classifier == (h.vocab > 0));
        CHECK(w.token_embedding.data == arrays[0].data);
        CHECK(w.final_norm.weight.data == arrays[10].data);
        CHECK(w.classifier_matrix().data == (h.vocab > 0 ? arrays[0] : arrays[12]).data);
        CHECK(w.classifier.empty() == (h.vocab > 0));  // shared: the embedding itself, not a copy
        REQUIRE(w.blocks->n_layers() == h.layers);
        for (int64_t l = 0; l < h.layers; ++l) {
            const BlockWeights& b = *w.blocks->held(l);
            CHECK(b.attention.num_heads == h.heads);
            CHECK(b.attention.num_kv_heads == h.kv_heads);
            CHECK(b.attention.d_head == h.dim / h.heads);
            CHECK(b.attention.causal);
            CHECK(b.attention.rope == RopeStyle::interleaved);
            CHECK(b.attention.rope_base == 10000.0);
            CHECK(b.attention.w_q.data == transposed(layer_matrix(arrays[2], l)).data);
            CHECK(b.attention.w_k.data == transposed(layer_matrix(arrays[3], l)).data);
            CHECK(b.attention.w_v.data == transposed(layer_matrix(arrays[4], l)).data);
            CHECK(b.attention.w_o.data == transposed(layer_matrix(arrays[5], l)).data);
            CHECK(b.w_in.data == layer_matrix(arrays[7], l).data);
            CHECK(b.w_out.data == layer_matrix(arrays[8], l).data);
            CHECK(b.w_up.data == layer_matrix(arrays[9], l).data);
            CHECK(b.w_in.shape == std::vector<int64_t>{h.hidden, h.dim});
            CHECK(std::equal(b.attention_norm.weight.data.begin(), b.attention_norm.weight.data.end(),
                             arrays[1].data.begin() + l * h.dim));
            CHECK(std::equal(b.feed_forward_norm.weight.data.begin(), b.feed_forward_norm.weight.data.end(),
                             arrays[6].data.begin() + l * h.dim));
        }
    }
}

TEST_CASE("llama2.c checkpoints: hostile headers and sizes are refused before allocating") {
    ScratchDir dir;
    std::vector<Tensor> arrays;
    const std::string good = checkpoint_bytes({16, 24, 2, 4, 2, 40, 8}, arrays);
    const std::string path = dir / "bad.bin";
    auto expect_header_rejected = [&](Header h, const std::string& fragment) {
        std::string bytes = good;
        std::memcpy(bytes.data(), &h, sizeof h);
        write_text(path, bytes);
        expect_error(ErrorKind::bad_input, [&] { read_llama2c_checkpoint(path); }, {"bad.bin", fragment});
    };
    write_text(path, good.substr(0, good.size() - 4));
    expect_error(ErrorKind::bad_input, [&] { read_llama2c_checkpoint(path); }, {"bad.bin", "truncated"});
    write_text(path, good + "xxxx");
    expect_error(ErrorKind::bad_input, [&] { read_llama2c_checkpoint(path); }, {"bad.bin", "needs"});
    write_text(path, good.substr(0, 20));
    expect_error(ErrorKind::bad_input, [&] { read_llama2c_checkpoint(path); }, {"bad.bin", "too short"});
    expect_header_rejected({1 << 30, 24, 2, 4, 2, 40, 8}, "dim");
    expect_header_rejected({32768, 131072, 1024, 4, 2, 1 << 20, 8}, "truncated");  // huge but in bounds
    expect_header_rejected({16, 24, -2, 4, 2, 40, 8}, "n_layers");
    expect_header_rejected({16, 24, 2, 0, 2, 40, 8}, "n_heads");
    expect_header_rejected({16, 24, 2, 3, 1, 40, 8}, "not divisible by n_heads");
    expect_header_rejected({16, 24, 2, 4, 3, 40, 8}, "not divisible by n_kv_heads");
    expect_header_rejected({16, 24, 2, 4, 8, 40, 8}, "n_kv_heads");
    expect_header_rejected({12, 24, 2, 4, 2, 40, 8}, "odd");
    expect_header_rejected({16, 24, 2, 4, 2, 0, 8}, "vocab_size");
    expect_header_rejected({0x616b3432, 1, 0, 0, 0, 0, 0}, "version 1/2");
    // An array within the file but over the memory budget is reported against the file.
    write_text(path, good);
    LoadLimits limits;
    limits.memory_budget = 40 * 16 * 4 - 1;
    expect_error(
        ErrorKind::bad_input, [&] { read_llama2c_checkpoint(path, limits); },
        {"bad.bin: token_embedding_table of shape [40, 16]", "memory budget"}, Remedy::raise_memory_budget);
}

TEST_CASE("llama2.c tokenizer: prefix, byte fallback, best-score merges and decoding") {
    ScratchDir dir;
    // Ids: 259 " ", 260 "a", 261 "b", 262 "ab" (3), 263 " a" (1), 264 " ab" (2), 265 "ba" (3), 266 "é".
    const auto pieces = vocabulary_with_bytes(
        {{" ", -1}, {"a", -1}, {"b", -1}, {"ab", 3}, {" a", 1}, {" ab", 2}, {"ba", 3}, {"\xc3\xa9", -1}});
    write_text(dir / "tok.bin", tokenizer_bytes(pieces, 6));
    const Llama2cTokenizer tokenizer(dir / "tok.bin", 267);
    // " abab": " a"(1) loses to the first "ab"(3), whose tie with "ba"(3) goes to the leftmost
    // pair; then the second "ab", then " ab"(2): [" ab", "ab"].
    CHECK(tokenizer.encode("abab", false, false) == std::vector<int>{264, 262});
    CHECK(tokenizer.encode("abab", true, true) == std::vector<int>{1, 264, 262, 2});
    // " aba": "ab" and "ba" tie at 3; the leftmost wins, then " ab" (2): [" ab", "a"], not [" a", "ba"].
    CHECK(tokenizer.encode("aba", false, false) == std::vector<int>{264, 260});
    // 'z' (0x7a) and 'ü' (c3 bc) are not pieces: bytes + 3; 'é' is one.
    CHECK(tokenizer.encode("z\xc3\xbc\xc3\xa9", false, false) ==
          std::vector<int>{259, 0x7a + 3, 0xc3 + 3, 0xbc + 3, 266});
    CHECK(tokenizer.decode({1, 264, 262}) == "abab");
    CHECK(tokenizer.decode({264, 262}) == " abab");
    CHECK(tokenizer.decode({259, 0x7a + 3, 0xc3 + 3, 0xbc + 3, 266, 2}) == " z\xc3\xbc\xc3\xa9");
    CHECK(tokenizer.decode_piece(1, 0x0a + 3) == "\n");
    CHECK(tokenizer.labels({1, 264, 0x7a + 3, 0x0a + 3, 262, 2}) ==
          std::vector<std::string>{"<s>", " ab", "z", "<0x0A>", "ab", "</s>"});
    for (const std::string& text : {std::string("ab ba"), std::string("b\xc3\xa9z a"), std::string("aaa bbb ab")})
        CHECK(tokenizer.decode(tokenizer.encode(text, true, false)) == text);
    // Any bytes come back from encode and decode, those that are not UTF-8 as \xNN: a lone
    // continuation byte (what the fuzzer's round trip tried first), a cut "é", 0xFF, among pieces.
    static const char* const fragments[] = {"a",    "b",    " ",    "ab",           "\xc3\xa9", "\xc3",
                                            "\xa9", "\xb2", "\xff", "\xe2\x82\xac", "z"};
    std::vector<std::string> byte_texts = {"\xb2", "a\xc3", "\xff\xfe"};
    for (int trial = 0; trial < 200; ++trial) {
        std::string text;
        for (size_t n = 1 + rng()() % 12; n > 0; --n) text += fragments[rng()() % std::size(fragments)];
        byte_texts.push_back(text);
    }
    for (const std::string& text : byte_texts) {
        CAPTURE(escape_invalid_utf8(text));
        CHECK(tokenizer.decode(tokenizer.encode(text, true, false)) == escape_invalid_utf8(text));
    }
    // A vocabulary without byte tokens cannot encode a missing character.
    write_text(dir / "small.bin", tokenizer_bytes({{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {" ", 0}, {"a", 0}}, 5));
    const Llama2cTokenizer small(dir / "small.bin");
    CHECK(small.vocab_size() == 5);
    CHECK(small.encode("a a", false, false) == std::vector<int>{3, 4, 3, 4});
    expect_error(ErrorKind::bad_input, [&] { small.encode("q", false, false); }, {"small.bin", "no byte token"});
}

TEST_CASE("llama2.c tokenizer: pieces and byte tokens that are not UTF-8 are shown as \\xNN") {
    ScratchDir dir;
    // Ids: 259 a raw 0xFF piece, 260 a piece holding half of "é", 261 "é".
    write_text(dir / "tok.bin",
               tokenizer_bytes(vocabulary_with_bytes({{"\xff", 0}, {"x\xc3", 0}, {"\xc3\xa9", 0}}), 6));
    const Llama2cTokenizer tokenizer(dir / "tok.bin", 262);
    CHECK(tokenizer.labels({1, 259, 260, 261, 0xff + 3}) ==
          std::vector<std::string>{"<s>", "\\xff", "x\\xc3", "\xc3\xa9", "<0xFF>"});
    // Byte tokens that form a character together decode to it; a lone byte is escaped.
    CHECK(tokenizer.decode({1, 0xc3 + 3, 0xa9 + 3}) == "\xc3\xa9");
    CHECK(tokenizer.decode({1, 0xc3 + 3, 259, 261}) == "\\xc3\\xff\xc3\xa9");
    CHECK(tokenizer.decode_piece(1, 0xff + 3) == "\xff");  // the raw byte, for joining
}

TEST_CASE("llama2.c tokenizer: truncated and absurd files are refused") {
    ScratchDir dir;
    const std::string good = tokenizer_bytes(vocabulary_with_bytes({{" ", 0}, {"hello", 1}}), 6);
    const std::string path = dir / "tok.bin";
    auto expect_rejected = [&](const std::string& bytes, const std::string& fragment, int64_t vocab = 0) {
        write_text(path, bytes);
        expect_error(ErrorKind::bad_input, [&] { Llama2cTokenizer tokenizer(path, vocab); }, {"tok.bin", fragment});
    };
    expect_rejected(good.substr(0, good.size() - 2), "truncated");
    expect_rejected(good.substr(0, good.size() - 9), "truncated");
    expect_rejected(good, "model's vocabulary has 512", 512);
    expect_rejected(std::string("\x01\x00", 2), "too short");
    expect_rejected(std::string("\x00\x00\x00\x00", 4), "max_token_length");
    expect_rejected(std::string("\xff\xff\xff\x7f", 4), "max_token_length");
    expect_rejected(std::string("\x06\x00\x00\x00", 4), "no tokens");
    std::string negative = tokenizer_bytes({{"<unk>", 0}}, 6);
    const int32_t minus_one = -1;
    std::memcpy(negative.data() + 8, &minus_one, 4);
    expect_rejected(negative, "length -1");
    expect_rejected(tokenizer_bytes({{"<unk>", 0}, {"toolongpiece", 0}}, 6), "token 1");
    write_text(path, good);
    CHECK(Llama2cTokenizer(path, 261).vocab_size() == 261);
    CHECK_THROWS_AS(Llama2cTokenizer(dir / "missing.bin"), Error);
}

TEST_CASE(
    "llama2.c tokenizer: a vocabulary without BOS and EOS, or without the byte token a text needs, is refused, never "
    "read past") {
    ScratchDir dir;
    const std::string path = dir / "tok.bin";
    // One token " ": encoding " " used to merge over BOS (id 1) past the end of the pieces.
    for (const auto& [pieces, count] :
         {std::pair{std::vector<std::pair<std::string, float>>{{" ", 0}}, std::string("holds 1 token;")},
          std::pair{std::vector<std::pair<std::string, float>>{{" ", 0}, {"  ", 1}}, std::string("holds 2 tokens;")}}) {
        write_text(path, tokenizer_bytes(pieces, 4));
        expect_error(ErrorKind::bad_input, [&] { Llama2cTokenizer tokenizer(path); },
                     {"tok.bin", count, "needs at least 3 (<unk>, BOS 1, EOS 2)"});
    }
    expect_error(ErrorKind::bad_input, [&] { Llama2cTokenizer tokenizer("vocab.gguf", {" "}, {0.0f}); },
                 {"vocab.gguf", "holds 1 token;", "at least 3"});
    // Three tokens are enough: BOS and EOS are tokens, and the text needs no byte token.
    const Llama2cTokenizer three("three", {" ", "<s>", "</s>"}, {0.0f, 0.0f, 0.0f});
    CHECK(three.encode(" ", true, true) == std::vector<int>{1, 0, 0, 2});
    CHECK(three.decode(three.encode("  ", true, false)) == "  ");
    expect_error(ErrorKind::bad_input, [&] { three.encode("x", true, false); },
                 {"three", "no byte token for byte 120"});

    // 300 tokens whose ids 3.. are not byte tokens: byte fallback refuses rather than emit token 3 + byte.
    std::vector<std::pair<std::string, float>> no_bytes = {{"<unk>", 0}, {"<s>", 0}, {"</s>", 0}, {" ", 0}};
    for (int i = 0; no_bytes.size() < 300; ++i) no_bytes.push_back({"w" + std::to_string(i), 0});
    write_text(path, tokenizer_bytes(no_bytes, 8));
    const Llama2cTokenizer words(path);
    expect_error(ErrorKind::bad_input, [&] { words.encode("w1z", false, false); },
                 {"tok.bin", "no byte token for byte 119", "token 122"});
    CHECK(words.encode(" ", false, false) == std::vector<int>{3, 3});
}

TEST_CASE("llama2.c tokenizer: queued merges give exactly the rescanning loop's ids (best score, leftmost on ties)") {
    // Random small vocabularies: <unk>, BOS, EOS, the byte tokens, " ", "a".."d", then merged pieces
    // made of two random earlier pieces (BOS's too, which takes part in merges) with scores from a
    // few values, so ties are common; some pieces twice, some scores at or below -1e10 (never merged).
    const std::string alphabet = " abcdz";  // 'z' is no piece: it falls back to its byte token
    for (int trial = 0; trial < 60; ++trial) {
        std::vector<std::string> pieces = {"<unk>", trial % 2 ? "<s>" : "", "</s>"};
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            pieces.push_back(name);
        }
        for (const char* p : {" ", "a", "b", "c", "d"}) pieces.push_back(p);
        std::vector<float> scores(pieces.size(), 0.0f);
        const size_t merged = 5 + rng()() % 40;
        for (size_t m = 0; m < merged; ++m) {
            const auto pick = [&] {
                const size_t id = rng()() % 3 == 0 ? 1 : 259 + rng()() % (pieces.size() - 259);  // BOS or a text piece
                return pieces[id];
            };
            pieces.push_back(pick() + pick());
            const float values[] = {-3.0f, -1.0f, 0.0f, 1.0f, 2.0f, -1e10f, -2e10f};
            scores.push_back(values[rng()() % std::size(values)]);
        }
        const Llama2cTokenizer tokenizer("random", pieces, scores);
        for (int text_trial = 0; text_trial < 20; ++text_trial) {
            std::string text;
            for (size_t n = rng()() % 60; n > 0; --n) text += alphabet[rng()() % alphabet.size()];
            const bool bos = text_trial % 2 == 0;
            CAPTURE(trial);
            CAPTURE(text);
            CHECK(tokenizer.encode(text, bos, false) == rescanning_encode(pieces, scores, text, bos));
        }
    }
}

TEST_CASE("llama2.c tokenizer: a long text encodes in about linear time (the rescanning loop took 83 s for 120 KB)") {
    ScratchDir dir;
    std::vector<std::pair<std::string, float>> extra = {{" ", 0}};
    for (const char* piece : {"a", "b", "c", "ab", "bc", "abc", " a", " ab", " abc", "ca", "cab"})
        extra.push_back({piece, -static_cast<float>(extra.size())});
    write_text(dir / "tok.bin", tokenizer_bytes(vocabulary_with_bytes(extra), 8));
    const Llama2cTokenizer tokenizer(dir / "tok.bin");
    std::string text;
    while (text.size() < 256 * 1024) text += "abc cab abca bbc ";
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int> ids = tokenizer.encode(text, true, false);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(tokenizer.decode(ids) == text);
    CHECK(ids.size() < text.size() / 2);
    CHECK_MESSAGE(seconds < 10.0, "256 KB took " << seconds << " s");
}

}  // TEST_SUITE("models")
