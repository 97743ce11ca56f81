// WordPiece ("bert") tokenizers from GGUF metadata: llama.cpp's real BGE vocabulary file against
// its test vectors and against bert-base-uncased's files (the same vocabulary; skipped with a
// message where ../shared is absent), llama.cpp's spelling undone on a small vocabulary, the
// [CLS] ... [SEP] template, read_model_tokenizer's dispatch, and hostile metadata.
#include <functional>
#include <sstream>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_tokenizer.hpp"
#include "llama_vocab_vectors.hpp"
#include "model_tokenizer.hpp"
#include "model_tokenizer_file.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A small vocabulary in llama.cpp's spelling: "▁" before word-initial pieces, continuations
// without "##", the four control tokens and an "[unused0]" (kept bracketed, as older converters do).
struct WordPieceMetadata {
    std::vector<std::string> tokens = {"[PAD]",
                                       "[UNK]",
                                       "[CLS]",
                                       "[SEP]",
                                       "[unused0]",
                                       "\xe2\x96\x81un",
                                       "aff",
                                       "able",
                                       "\xe2\x96\x81"
                                       "able",
                                       "\xe2\x96\x81!",
                                       "\xe2\x96\x81"
                                       "a"};
    std::vector<int32_t> types = {3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    uint32_t unk = 1, cls = 2, sep = 3;
    std::function<void(GgufBuilder&)> extra = [](GgufBuilder&) {};
};

// The metadata written as a GGUF file (no tensors) at `path`, opened.
GgufFile write_wordpiece_gguf(const std::string& path, const WordPieceMetadata& m) {
    GgufBuilder b;
    b.add_string("general.architecture", "bert");
    b.add_string("tokenizer.ggml.model", "bert");
    b.add_string_array("tokenizer.ggml.tokens", m.tokens);
    b.add_i32_array("tokenizer.ggml.token_type", m.types);
    b.add_u32("tokenizer.ggml.unknown_token_id", m.unk);
    b.add_u32("tokenizer.ggml.cls_token_id", m.cls);
    b.add_u32("tokenizer.ggml.seperator_token_id", m.sep);
    m.extra(b);
    write_text(path, b.bytes());
    return GgufFile(path);
}

}  // namespace

TEST_CASE(
    "llama.cpp's BERT (BGE) vocabulary GGUF encodes every test string to exactly the listed ids, as vocab.txt does") {
    const std::string dir =
        shared_model_dir("tokenizers/llama.cpp-vocab", {"ggml-vocab-bert-bge.gguf", "ggml-vocab-bert-bge.gguf.inp"});
    if (dir.empty()) return;
    const std::string path = dir + "/ggml-vocab-bert-bge.gguf";
    const HfTokenizer tokenizer = read_gguf_wordpiece_tokenizer(GgufFile(path), 30522);
    CHECK(tokenizer.kind() == "WordPiece");
    CHECK(tokenizer.vocab_size() == 30522);
    const std::vector<VocabCase> cases = vocab_cases(dir, "ggml-vocab-bert-bge.gguf");
    check_vocab_cases(tokenizer, cases);  // the vectors hold no [CLS] / [SEP]
    CHECK(tokenizer.token_id("[unused0]") == 1);
    CHECK(tokenizer.token_id("##ing") == 2075);
    CHECK(tokenizer.token_id("hello") == 7592);

    // Through read_tokenizer_file: [CLS] 101 ... [SEP] 102 around every text.
    const std::unique_ptr<ModelTokenizer> model = read_tokenizer_file(path, 0);
    for (const VocabCase& c : cases) {
        std::vector<int> expected = c.ids;
        expected.insert(expected.begin(), 101);
        expected.push_back(102);
        CHECK(model->encode(c.text) == expected);
    }
    CHECK(model->labels({101, 7592, 2075, 102}) == tokenizer.labels({101, 7592, 2075, 102}));
    expect_error(ErrorKind::bad_input, [&] { read_tokenizer_file(path, 30000); },
                 {"ggml-vocab-bert-bge.gguf", "30522 tokens but the model's vocabulary has 30000"});

    // The same vocabulary as bert-base-uncased's vocab.txt, token for token, and the same encoding
    // as its folder's tokenizer.json, [CLS] and [SEP] included.
    const std::string uncased = shared_model_dir("tokenizers/bert-base-uncased", {"vocab.txt", "tokenizer.json"});
    if (uncased.empty()) return;
    const HfTokenizer from_folder = HfTokenizer::load(uncased);
    std::istringstream lines(read_text(uncased + "/vocab.txt"));
    int id = 0;
    for (std::string line; std::getline(lines, line); ++id) REQUIRE(tokenizer.token_id(line) == id);
    CHECK(id == 30522);
    for (const VocabCase& c : cases) CHECK(from_folder.encode(c.text, true) == model->encode(c.text));
}

TEST_CASE(
    "a GGUF WordPiece vocabulary in llama.cpp's spelling encodes as its vocab.txt: lowercased, accents stripped, [CLS] "
    "... [SEP]") {
    ScratchDir dir;
    const WordPieceMetadata m;
    const HfTokenizer tokenizer = read_gguf_wordpiece_tokenizer(write_wordpiece_gguf(dir / "t.gguf", m), 11);
    CHECK(tokenizer.token_id("un") == 5);
    CHECK(tokenizer.token_id("##aff") == 6);
    CHECK(tokenizer.token_id("##able") == 7);
    CHECK(tokenizer.token_id("able") == 8);
    CHECK(tokenizer.token_id("[unused0]") == 4);
    CHECK(tokenizer.encode("Ünaffable able!", false) == std::vector<int>{5, 6, 7, 8, 9});
    CHECK(tokenizer.encode("unaffable [SEP] ab", true) ==
          std::vector<int>{2, 5, 6, 7, 3, 1, 3});  // "ab" is unknown as a whole
    CHECK(tokenizer.decode({2, 5, 6, 7, 8, 3}) == "unaffable able");
    CHECK(read_tokenizer_file(dir / "t.gguf", 0)->encode("A") == std::vector<int>{2, 10, 3});

    // Without cls/sep ids there is nothing around the text.
    GgufBuilder bare;
    bare.add_string("tokenizer.ggml.model", "bert");
    bare.add_string_array("tokenizer.ggml.tokens", {"[UNK]",
                                                    "\xe2\x96\x81"
                                                    "a"});
    write_text(dir / "bare.gguf", bare.bytes());
    CHECK(read_gguf_wordpiece_tokenizer(GgufFile(dir / "bare.gguf"), 0).encode("a b", true) == std::vector<int>{1, 0});
}

TEST_CASE("hostile WordPiece metadata in GGUF is refused naming the file and the key") {
    ScratchDir dir;
    const std::string path = dir / "bad.gguf";
    auto expect_refused = [&](const std::function<void(WordPieceMetadata&)>& spoil, const std::string& fragment,
                              int64_t vocab_size = 0) {
        CAPTURE(fragment);
        WordPieceMetadata m;
        spoil(m);
        expect_error(ErrorKind::bad_input,
                     [&] { read_gguf_wordpiece_tokenizer(write_wordpiece_gguf(path, m), vocab_size); },
                     {"bad.gguf", fragment});
    };
    expect_refused(
        [](WordPieceMetadata& m) { m.tokens[4] = "\xe2\x96\x81[unused0]", m.tokens[5] = "[unused0]"; },
        "tokenizer.ggml.tokens holds \"[unused0]\" twice (ids 4 and 5)");  // twins once llama.cpp's spelling is undone
    expect_refused([](WordPieceMetadata& m) { m.cls = 11; },
                   "tokenizer.ggml.cls_token_id is 11, outside the 11 tokens");
    expect_refused([](WordPieceMetadata& m) { m.sep = 40; },
                   "tokenizer.ggml.seperator_token_id is 40, outside the 11 tokens");
    expect_refused([](WordPieceMetadata& m) { m.unk = 99; },
                   "tokenizer.ggml.unknown_token_id is 99, outside the 11 tokens");
    expect_refused([](WordPieceMetadata& m) { m.types[2] = 7; }, "token_type of token 2 is 7");
    expect_refused([](WordPieceMetadata& m) { m.types.pop_back(); },
                   "tokenizer.ggml.token_type holds 10 types for 11 tokens");
    expect_refused([](WordPieceMetadata& m) { m.tokens.clear(), m.types.clear(); }, "tokenizer.ggml.tokens is empty");
    expect_refused([](WordPieceMetadata&) {}, "holds 11 tokens but the model's vocabulary has 12", 12);
    // A vocabulary without "[UNK]" and no unknown_token_id has no unknown token for WordPiece.
    GgufBuilder no_unk;
    no_unk.add_string("tokenizer.ggml.model", "bert");
    no_unk.add_string_array("tokenizer.ggml.tokens", {"\xe2\x96\x81"
                                                      "a"});
    write_text(path, no_unk.bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_wordpiece_tokenizer(GgufFile(path), 0); },
                 {"bad.gguf", "the unknown token \"[UNK]\" is not in the vocabulary"});
    // Another model's metadata.
    GgufBuilder bpe;
    bpe.add_string("tokenizer.ggml.model", "gpt2");
    bpe.add_string_array("tokenizer.ggml.tokens", {"a"});
    write_text(path, bpe.bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_wordpiece_tokenizer(GgufFile(path), 0); },
                 {"bad.gguf", "tokenizer.ggml.model is \"gpt2\", not the WordPiece \"bert\""});
}
