// A GGUF SentencePiece ("llama") vocabulary's own BOS, EOS, add_bos_token and add_space_prefix,
// as llama.cpp reads them (Gemma's: BOS 2, EOS 1, no space prefix, byte tokens far from 3 + b):
// random texts encoded against a plain reference of the SentencePiece BPE written here (merge the
// best-scoring adjacent pair, leftmost on ties; unknown characters as their <0xNN> tokens), and
// ids outside the vocabulary refused.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_tokenizer.hpp"
#include "model_tokenizer.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

const std::string space = "\xe2\x96\x81";  // SentencePiece's "▁"

// Gemma's layout: <pad> <eos> <bos> <unk>, "▁", letters a-d and their pairs and triples with
// random scores, "▁a", "▁b", then the 256 byte tokens (ids 40 + b).
struct Vocabulary {
    std::vector<std::string> pieces;  // "▁" for space, as in the file
    std::vector<float> scores;
};

Vocabulary gemma_like_vocabulary() {
    Vocabulary v;
    auto add = [&](const std::string& piece, float score) { v.pieces.push_back(piece), v.scores.push_back(score); };
    for (const char* special : {"<pad>", "<eos>", "<bos>", "<unk>"}) add(special, 0.0f);
    std::uniform_real_distribution<float> score(-9.0f, -1.0f);
    add(space, -10.0f);
    for (const char* piece : {"a", "b", "c", "d"}) add(piece, -10.0f);
    for (const char* piece : {"ab", "ba", "cd", "dc", "aa", "abc", "bcd", "cab"}) add(piece, score(rng()));
    add(space + "a", score(rng()));
    add(space + "b", score(rng()));
    while (v.pieces.size() < 40) add("<unused" + std::to_string(v.pieces.size()) + ">", 0.0f);
    for (int byte = 0; byte < 256; ++byte) {
        char piece[8];
        std::snprintf(piece, sizeof piece, "<0x%02X>", byte);
        add(piece, 0.0f);
    }
    return v;
}

// The file's bytes: the vocabulary with the given special keys (absent when negative / unset).
std::string vocabulary_file(const Vocabulary& v, int64_t bos, int64_t eos, std::optional<bool> add_bos,
                            std::optional<bool> prefix) {
    GgufBuilder b;
    b.add_string("general.architecture", "gemma2");
    b.add_string("tokenizer.ggml.model", "llama");
    b.add_string_array("tokenizer.ggml.tokens", v.pieces);
    b.add_f32_array("tokenizer.ggml.scores", v.scores);
    if (bos >= 0) b.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(bos));
    if (eos >= 0) b.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(eos));
    if (add_bos) b.add_bool("tokenizer.ggml.add_bos_token", *add_bos);
    if (prefix) b.add_bool("tokenizer.ggml.add_space_prefix", *prefix);
    return b.bytes();
}

// The plain reference: text with " " as "▁" (and "▁" first when `prefix`), one symbol per
// character, a character without a piece as its bytes' tokens, then the best-scoring adjacent
// pair merged (leftmost on ties) until no pair is a piece.
std::vector<int> reference_encode(const Vocabulary& v, const std::string& text, bool prefix) {
    std::map<std::string, int> ids;
    for (size_t id = 0; id < v.pieces.size(); ++id) ids.emplace(v.pieces[id], static_cast<int>(id));
    std::vector<int> symbols;
    const std::string spaced = (prefix && !text.empty() ? " " : "") + text;
    for (char c : spaced) {
        const std::string piece = c == ' ' ? space : std::string(1, c);
        if (ids.count(piece))
            symbols.push_back(ids.at(piece));
        else
            symbols.push_back(40 + static_cast<unsigned char>(c));
    }
    while (true) {
        int best = -1;
        float best_score = 0;
        for (size_t i = 0; i + 1 < symbols.size(); ++i) {
            const auto found =
                ids.find(v.pieces[static_cast<size_t>(symbols[i])] + v.pieces[static_cast<size_t>(symbols[i + 1])]);
            if (found == ids.end()) continue;
            const float score = v.scores[static_cast<size_t>(found->second)];
            if (best < 0 || score > best_score) best = static_cast<int>(i), best_score = score;
        }
        if (best < 0) return symbols;
        const auto at = static_cast<size_t>(best);
        symbols[at] =
            ids.at(v.pieces[static_cast<size_t>(symbols[at])] + v.pieces[static_cast<size_t>(symbols[at + 1])]);
        symbols.erase(symbols.begin() + best + 1);
    }
}

}  // namespace

TEST_CASE("GGUF SentencePiece vocabularies bring their own BOS, EOS, add_bos_token and add_space_prefix (Gemma's)") {
    ScratchDir dir;
    const Vocabulary v = gemma_like_vocabulary();
    std::uniform_int_distribution<int> length(0, 12), pick(0, 6);
    const char alphabet[] = {'a', 'b', 'c', 'd', ' ', 'x', '\n'};  // x and \n have no piece: byte tokens 40 + byte
    struct Case {
        const char* name;
        int64_t bos, eos;
        std::optional<bool> add_bos, prefix;
        int expected_bos;
        bool expects_bos, expects_prefix;
    };
    const Case cases[] = {{"Gemma: BOS 2, EOS 1, no prefix", 2, 1, true, false, 2, true, false},
                          {"no keys: llama.cpp's defaults", -1, -1, std::nullopt, std::nullopt, 1, true, true},
                          {"BOS not added", 2, 1, false, true, 2, false, true}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        write_text(dir / "vocab.gguf", vocabulary_file(v, c.bos, c.eos, c.add_bos, c.prefix));
        const GgufFile file(dir / "vocab.gguf");
        const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(file, 0);
        CHECK(tokenizer.specials().bos == c.expected_bos);
        CHECK(tokenizer.specials().add_space_prefix == c.expects_prefix);
        const std::unique_ptr<ModelTokenizer> model = as_model_tokenizer(tokenizer);
        CHECK(model->begin_id() == c.expected_bos);
        for (int n = 0; n < 200; ++n) {
            std::string text;
            for (int k = length(rng()); k > 0; --k) text += alphabet[pick(rng())];
            CAPTURE(text);
            std::vector<int> expected = reference_encode(v, text, c.expects_prefix);
            CHECK(tokenizer.encode(text, false, false) == expected);
            if (c.expects_bos) expected.insert(expected.begin(), c.expected_bos);
            const std::vector<int> ids = model->encode(text);
            CHECK(ids == expected);
            CHECK(model->min_token_count(text) <= static_cast<int64_t>(ids.size()));
            // The dummy prefix is dropped after BOS only; without one a leading space stays.
            const bool kept_prefix = c.expects_prefix && !c.expects_bos && !text.empty();
            CHECK(model->decode(ids) == (kept_prefix ? " " : "") + text);
        }
    }
    // Gemma's BOS and EOS label as their pieces.
    write_text(dir / "vocab.gguf", vocabulary_file(v, 2, 1, true, false));
    const Llama2cTokenizer gemma = read_gguf_llama_tokenizer(GgufFile(dir / "vocab.gguf"), 0);
    CHECK(gemma.labels({2, 5, 1}) == std::vector<std::string>{"<bos>", "a", "<eos>"});
    CHECK(gemma.encode("ab", true, true) == std::vector<int>{2, 9, 1});

    // Ids outside the vocabulary are refused, naming the file and the key.
    write_text(dir / "bad.gguf", vocabulary_file(v, static_cast<int64_t>(v.pieces.size()), 1, true, false));
    CHECK_THROWS_WITH_AS(read_gguf_llama_tokenizer(GgufFile(dir / "bad.gguf"), 0),
                         doctest::Contains("tokenizer.ggml.bos_token_id 296 is not one of its 296 tokens"), Error);
    write_text(dir / "bad.gguf", vocabulary_file(v, 2, 1000, true, false));
    CHECK_THROWS_WITH_AS(read_gguf_llama_tokenizer(GgufFile(dir / "bad.gguf"), 0),
                         doctest::Contains("tokenizer.ggml.eos_token_id 1000"), Error);
}
