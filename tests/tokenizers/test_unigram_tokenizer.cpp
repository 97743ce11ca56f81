// SentencePiece Unigram tokenizers in tokenizer.json: Viterbi segmentation against a brute-force
// search over every segmentation on random vocabularies, and against the hash lookup of every
// prefix it used before its trie; the trie's work on a long piece and a long word; the real T5
// (Precompiled normalizer) and ALBERT files against ids written by SentencePiece itself and by
// @huggingface/tokenizers, and hostile Unigram vocabularies and charsmaps.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "expect_error.hpp"
#include "hf_tokenizer.hpp"
#include "piece_trie.hpp"
#include "support.hpp"
#include "text_codecs.hpp"
#include "unigram_model.hpp"
#include "utf8.hpp"

using namespace attn_viz;
using namespace test_support;
using json = nlohmann::json;

namespace {

std::string write_tokenizer_json(const ScratchDir& dir, const json& doc, const std::string& name) {
    const std::string path = dir / name;
    write_text(path, doc.dump());
    return path;
}

// The best segmentations of `characters`, by trying every one: pieces of the vocabulary, or one
// character as the unknown token where no one-character piece starts (SentencePiece's rule), at
// (lowest score - 10); runs of unknown tokens fused into one, whose text is looked up again (a run
// that spells a piece becomes that piece, as in the tokenizers library). Segmentations whose
// totals are equal but for rounding (the same pieces in another order) are all returned: which
// of them Viterbi keeps depends on the order it adds the scores in.
std::set<std::vector<int>> reference_unigram(const std::vector<std::string>& characters,
                                             const std::map<std::string, std::pair<int, double>>& pieces, int unk_id) {
    double lowest = 0;
    for (const auto& [text, entry] : pieces) lowest = std::min(lowest, entry.second);
    std::vector<std::pair<double, std::vector<std::pair<int, std::string>>>> found;  // (total, [(id, text)])
    std::vector<std::pair<int, std::string>> path;
    std::function<void(size_t, double)> search = [&](size_t at, double score) {
        if (at == characters.size()) {
            found.emplace_back(score, path);
            return;
        }
        std::string text;
        for (size_t end = at; end < characters.size(); ++end) {
            text += characters[end];
            if (const auto piece = pieces.find(text); piece != pieces.end()) {
                path.emplace_back(piece->second.first, text);
                search(end + 1, score + piece->second.second);
                path.pop_back();
            }
        }
        if (!pieces.count(characters[at])) {
            path.emplace_back(unk_id, characters[at]);
            search(at + 1, score + lowest - 10);
            path.pop_back();
        }
    };
    search(0, 0);
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& [total, segmentation] : found) best = std::max(best, total);
    std::set<std::vector<int>> ids;
    for (const auto& [total, segmentation] : found) {
        if (total < best - 1e-9 * std::max(1.0, std::abs(best))) continue;
        std::vector<std::pair<int, std::string>> fused;
        for (const auto& [id, text] : segmentation) {
            if (id == unk_id && !fused.empty() && fused.back().first == unk_id)
                fused.back().second += text;
            else
                fused.emplace_back(id, text);
        }
        std::vector<int> one;
        for (const auto& [id, text] : fused) {
            const auto piece = pieces.find(text);
            one.push_back(id == unk_id && piece != pieces.end() ? piece->second.first : id);
        }
        ids.insert(one);
    }
    return ids;
}

// UnigramModel::encode_word as it was before the trie: at each code point, every prefix up to the
// longest piece looked up by hashing (the same lattice, offers in the same order, ties kept the
// same way), unknown runs fused, then byte fallback. `unk_id` is always set.
std::vector<int> hashed_prefix_unigram(const std::vector<std::pair<std::string, double>>& pieces, int unk_id,
                                       bool byte_fallback, const std::string& word) {
    std::unordered_map<std::string, int> vocab;
    size_t longest = 0;
    double lowest = std::numeric_limits<double>::infinity();
    for (size_t id = 0; id < pieces.size(); ++id) {
        vocab[pieces[id].first] = static_cast<int>(id);
        longest = std::max(longest, pieces[id].first.size());
        lowest = std::min(lowest, pieces[id].second);
    }
    struct Node {
        double score = 0;
        size_t start = std::string::npos;
        int id = -1;
    };
    const size_t n = word.size();
    std::vector<Node> best(n + 1);
    const auto offer = [&](size_t start, size_t end, double score, int id) {
        if (best[end].start == std::string::npos || score > best[end].score) best[end] = {score, start, id};
    };
    const auto code_point_length = [](unsigned char lead) -> size_t {
        return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    };
    for (size_t start = 0; start < n; start += code_point_length(word[start])) {
        const size_t code_point = std::min(code_point_length(word[start]), n - start);
        bool single = false;
        for (size_t length = 1; length <= std::min(longest, n - start); ++length) {
            const auto found = vocab.find(word.substr(start, length));
            if (found == vocab.end()) continue;
            offer(start, start + length, best[start].score + pieces[found->second].second, found->second);
            single = single || length == code_point;
        }
        if (!single) offer(start, start + code_point, best[start].score + lowest - 10, unk_id);
    }
    std::vector<std::pair<size_t, size_t>> ranges;
    bool after_unknown = false;
    for (size_t end = n; end > 0; end = best[end].start) {
        const bool unknown = best[end].id == unk_id;
        if (unknown && after_unknown)
            ranges.back().first = best[end].start;
        else
            ranges.emplace_back(best[end].start, end);
        after_unknown = unknown;
    }
    std::reverse(ranges.begin(), ranges.end());
    std::vector<int> ids;
    for (const auto& [begin, end] : ranges) {
        const std::string piece = word.substr(begin, end - begin);
        if (const auto found = vocab.find(piece); found != vocab.end()) {
            ids.push_back(found->second);
            continue;
        }
        std::vector<int> bytes;
        for (const char byte : piece)
            if (const auto token = vocab.find(byte_token_name(static_cast<unsigned char>(byte))); token != vocab.end())
                bytes.push_back(token->second);
        if (byte_fallback && bytes.size() == piece.size())
            ids.insert(ids.end(), bytes.begin(), bytes.end());
        else
            ids.push_back(unk_id);
    }
    return ids;
}

}  // namespace

TEST_CASE("Unigram: the same ids as hashing every prefix (before the trie), on random vocabularies and words") {
    const std::vector<std::string> alphabet = {"a", "b", "c", "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80"};
    for (int vocabulary = 0; vocabulary < 40; ++vocabulary) {
        // <unk>, sometimes the byte tokens of "é", then pieces of 1-8 characters, some twice (the
        // last id and its score count), with scores from a small set so that equal totals happen.
        std::vector<std::pair<std::string, double>> pieces = {{"<unk>", 0.0}};
        const bool byte_fallback = vocabulary % 2 == 1;
        if (vocabulary % 4 == 1) pieces.insert(pieces.end(), {{"<0xC3>", -9.0}, {"<0xA9>", -9.0}});
        const std::string missing = alphabet[rng()() % alphabet.size()];
        for (int p = 0; p < 60; ++p) {
            std::string text;
            for (int i = 0, length = static_cast<int>(rng()() % 8) + 1; i < length; ++i)
                text += alphabet[rng()() % alphabet.size()];
            if (text == missing) continue;
            pieces.emplace_back(text, -static_cast<double>(rng()() % 6 + 1) / 2);
            if (rng()() % 10 == 0) pieces.emplace_back(text, -static_cast<double>(rng()() % 6 + 1) / 2);
        }
        const UnigramModel model(pieces, {0, byte_fallback}, "random.json");
        for (int trial = 0; trial < 40; ++trial) {
            const std::vector<std::string> characters = random_letters(alphabet, 40);
            const std::string word = std::accumulate(characters.begin(), characters.end(), std::string());
            CAPTURE(vocabulary);
            CAPTURE(word);
            std::vector<int> ids;
            model.encode_word(word, ids);
            CHECK(ids == hashed_prefix_unigram(pieces, 0, byte_fallback, word));
        }
    }
}

TEST_CASE("Unigram: one 5000-character piece and a 20000-character word cost length x longest match, not cubic time") {
    const std::string long_piece(5000, 'a');
    // The trie's walk from every position of the word: at most the longest match each, so
    // 20000 x 5000 steps where the long piece matches everywhere, and one step where it cannot.
    PieceTrie trie;
    for (const auto& [text, id] : {std::pair<std::string, int>{"a", 1}, {"b", 2}, {long_piece, 3}})
        trie.insert(text, id);
    const auto walked = [&](const std::string& word) {
        size_t steps = 0, found = 0;
        for (size_t start = 0; start < word.size(); ++start)
            steps += trie.for_each_prefix(std::string_view(word).substr(start), [&](size_t, int) { ++found; });
        return std::pair{steps, found};
    };
    const std::string as(20000, 'a');
    std::string abs;
    for (int i = 0; i < 10000; ++i) abs += "ab";
    // Where the long piece fits, it is found as well as "a": min(5000, what is left) steps per position.
    CHECK(walked(as) == std::pair<size_t, size_t>{15000 * 5000 + 5000 * 5001 / 2, 20000 + 15001});
    CHECK(walked(abs) == std::pair<size_t, size_t>{20000, 20000});
    CHECK(walked("") == std::pair<size_t, size_t>{0, 0});

    // The model on the same vocabulary: the long piece four times, and "a" "b" alternating.
    const UnigramModel model({{"<unk>", 0.0}, {"a", -2.0}, {"b", -2.0}, {long_piece, -1.0}}, {0, false}, "long.json");
    const auto start = std::chrono::steady_clock::now();
    std::vector<int> ids;
    model.encode_word(as, ids);
    CHECK(ids == std::vector<int>(4, 3));
    ids.clear();
    model.encode_word(abs, ids);
    CHECK(ids.size() == 20000);
    // About 0.2 s here; looking every prefix up by hashing took 32 s on the 20000 "a"s with 40
    // more pieces (a map this small is searched without hashing). The bound is generous for
    // loaded machines and sanitizers.
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK_MESSAGE(seconds < 10.0, "encoding took " << seconds << " s");
}

TEST_CASE(
    "Unigram: a highest-scoring segmentation, as a search over every segmentation finds them, on random vocabularies") {
    const std::vector<std::string> alphabet = {"a", "b", "c", "é", "日"};
    ScratchDir dir;
    for (int vocabulary = 0; vocabulary < 8; ++vocabulary) {
        // <unk> first, then random pieces of 1-4 characters with random log probabilities; one
        // letter is left out of the single-character pieces so unknown runs happen.
        std::map<std::string, std::pair<int, double>> pieces;
        json vocab = json::array({json::array({"<unk>", 0.0})});
        std::uniform_real_distribution<double> score(-12.0, -0.5);
        const std::string missing = alphabet[rng()() % alphabet.size()];
        for (int p = 0; p < 40; ++p) {
            std::string text;
            const int length = static_cast<int>(rng()() % 4) + 1;
            for (int i = 0; i < length; ++i) text += alphabet[rng()() % alphabet.size()];
            if (pieces.count(text) || text == missing) continue;
            pieces[text] = {static_cast<int>(vocab.size()), score(rng())};
            vocab.push_back(json::array({text, pieces[text].second}));
        }
        const std::string path =
            write_tokenizer_json(dir, {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"vocab", vocab}}}},
                                 "unigram" + std::to_string(vocabulary) + ".json");
        const HfTokenizer tokenizer = HfTokenizer::load(path);
        CHECK(tokenizer.kind() == "Unigram");
        for (int trial = 0; trial < 60; ++trial) {
            const std::vector<std::string> characters = random_letters(alphabet, 10);
            const std::string word = std::accumulate(characters.begin(), characters.end(), std::string());
            CAPTURE(word);
            CHECK(reference_unigram(characters, pieces, 0).count(tokenizer.encode(word, false)) == 1);
        }
    }
}

TEST_CASE(
    "Unigram: unknown runs become their byte tokens with byte_fallback; without an unknown token they are refused") {
    ScratchDir dir;
    // (json::array: a list of two-element lists would otherwise be taken for an object)
    const json vocab =
        json::array({json::array({"<unk>", 0.0}), json::array({"<0xC3>", -20.0}), json::array({"<0xA9>", -20.0}),
                     json::array({"a", -1.0}), json::array({"b", -2.0}), json::array({"ab", -2.5})});
    const HfTokenizer fallback = HfTokenizer::load(write_tokenizer_json(
        dir, {{"model", {{"type", "Unigram"}, {"unk_id", 0}, {"byte_fallback", true}, {"vocab", vocab}}}},
        "fallback.json"));
    CHECK(fallback.encode("abéa", false) == std::vector<int>{5, 1, 2, 3});
    CHECK(fallback.encode("日", false) == std::vector<int>{0});  // its bytes have no tokens
    const HfTokenizer no_unknown = HfTokenizer::load(
        write_tokenizer_json(dir, {{"model", {{"type", "Unigram"}, {"vocab", vocab}}}}, "no-unknown.json"));
    CHECK(no_unknown.encode("ab", false) == std::vector<int>{5});
    expect_error(ErrorKind::bad_input, [&] { no_unknown.encode("aé", false); },
                 {"no-unknown.json", "\"é\" is not in the vocabulary"});
}

TEST_CASE(
    "T5's Unigram tokenizer.json with its Precompiled normalizer gives SentencePiece's ids; ALBERT's gives "
    "@huggingface/tokenizers'") {
    const std::string t5 = shared_model_dir("tokenizers/t5-base", {"tokenizer.json", "tokenizer_config.json"});
    const std::string albert = shared_model_dir("tokenizers/albert-base-v2", {"tokenizer.json"});
    if (t5.empty() || albert.empty()) return;
    // Expected ids: SentencePiece 0.1.97 (Debian's python3-sentencepiece) on t5-base/spiece.model,
    // with the template's </s> (1); @huggingface/tokenizers 0.2.0 gives the same, and ALBERT's.
    const std::string english = "Hello world! Translate English to German: The house is wonderful.";
    const std::string mixed =
        "\xEF\xAC\x81ne \xEF\xBC\x95 caf\xC3\xA9  na\xC3\xAFve\tdone\n";  // "ﬁne ５ café  naïve\tdone\n"
    const std::string unknown =
        "\xC3\x9Cn\xC3\xAF"
        "c\xC3\xB6"
        "d\xC3\xA9 \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80";  // "Ünïcödé 世界 😀"
    const HfTokenizer t5_tokenizer = HfTokenizer::load(t5);
    CHECK(t5_tokenizer.kind() == "Unigram");
    CHECK(t5_tokenizer.encode(english, true) ==
          std::vector<int>{8774, 296, 55, 30355, 15, 1566, 12, 2968, 10, 37, 629, 19, 1627, 5, 1});
    CHECK(t5_tokenizer.encode(mixed, true) == std::vector<int>{1399, 305, 11949, 3, 29, 9, 2, 162, 612, 1});
    CHECK(t5_tokenizer.encode(unknown, true) == std::vector<int>{3, 14858, 29, 2, 75, 1872, 3764, 3, 2, 3, 2, 1});
    CHECK(t5_tokenizer.decode(t5_tokenizer.encode(english, true)) == english);
    CHECK(t5_tokenizer.labels(t5_tokenizer.encode("Hello world", true)) ==
          std::vector<std::string>{" Hello", " world", "</s>"});
    // Where the tokenizers library and SentencePiece part ways, attn-viz follows the library (ids from
    // tokenizers 0.23.3): a short grapheme whose first character the charsmap rewrites is replaced
    // whole ("ſ" + U+FF9E -> "s"), and U+0085 splits words; "ｶﾞ" composes to "ガ", "Ⅳ" becomes "IV".
    CHECK(t5_tokenizer.encode("\xC5\xBF\xEF\xBE\x9E", true) == std::vector<int>{3, 7, 1});
    CHECK(t5_tokenizer.encode("a\xC2\x85"
                              "b",
                              true) == std::vector<int>{3, 9, 3, 115, 1});
    CHECK(t5_tokenizer.encode("\xEF\xBD\xB6\xEF\xBE\x9E", true) == std::vector<int>{3, 2, 1});
    CHECK(t5_tokenizer.encode("\xE2\x85\xA3 \xEF\xBC\xA1\xEF\xBC\xA2", true) == std::vector<int>{10869, 3, 5359, 1});
    // The file's truncation (32 tokens) and padding settings are not applied: analysis sees the text whole.
    std::string long_text;
    for (int i = 0; i < 40; ++i) long_text += " house";
    CHECK(t5_tokenizer.encode(long_text, true).size() == 41);
    const HfTokenizer albert_tokenizer = HfTokenizer::load(albert);
    CHECK(albert_tokenizer.encode(english, true) ==
          std::vector<int>{2, 10975, 126, 187, 20628, 486, 20, 548, 45, 14, 191, 25, 5934, 9, 3});
    CHECK(albert_tokenizer.encode(mixed, true) == std::vector<int>{2, 1123, 331, 6241, 16288, 677, 3});
    CHECK(albert_tokenizer.encode(unknown, true) == std::vector<int>{2, 28010, 13, 1, 13, 1, 3});
}

TEST_CASE("hostile Unigram vocabularies and precompiled charsmaps get one-line errors naming the file") {
    ScratchDir dir;
    const json vocab = json::array({json::array({"<unk>", 0.0}), json::array({"a", -1.0})});
    const auto unigram = [&](json model, json normalizer = nullptr) {
        model["type"] = "Unigram";
        if (!model.contains("vocab")) model["vocab"] = vocab;
        return json{{"model", model}, {"normalizer", normalizer}};
    };
    const auto charsmap = [](const std::string& blob) {
        return json{
            {"type", "Precompiled"},
            {"precompiled_charsmap", base64_encode(reinterpret_cast<const uint8_t*>(blob.data()), blob.size())}};
    };
    struct Case {
        json doc;
        std::string fragment;
    };
    const std::vector<Case> cases = {
        {unigram({{"vocab", json::array()}}), "the Unigram vocabulary is empty"},
        {unigram({{"vocab", json::array({json::array({"a", "likely"})})}}), "vocabulary entry 0 is not [piece, score]"},
        {unigram({{"vocab", {"a", "b"}}}), "vocabulary entry 0 is not [piece, score]"},
        {unigram({{"vocab", json::object()}}), "\"vocab\" is not a list of [piece, score]"},
        {unigram({{"unk_id", 2}}), "unk_id 2 is not one of the 2 pieces"},
        {unigram({{"unk_id", -1}}), "\"unk_id\" is -1, expected an integer"},
        {unigram({}, {{"type", "Precompiled"}}), "missing \"precompiled_charsmap\""},
        {unigram({}, {{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}}),
         "\"precompiled_charsmap\" is not base64"},
        {unigram({}, charsmap("ab")), "shorter than its 4-byte header"},
        {unigram({}, charsmap(std::string("\x40\x00\x00\x00", 4) + "abcd")),
         "trie of 64 bytes does not fit its 8 bytes"},
        {unigram({}, charsmap(std::string("\x06\x00\x00\x00", 4) + "abcdef")), "trie of 6 bytes does not fit"},
        {unigram({}, charsmap(std::string("\x04\x00\x00\x00\x00\x00\x00\x00\xff", 9))), "replacements are not UTF-8"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        CAPTURE(i);
        const std::string path = write_tokenizer_json(dir, cases[i].doc, "tokenizer" + std::to_string(i) + ".json");
        expect_error(ErrorKind::bad_input, [&] { HfTokenizer::load(path); }, {path, cases[i].fragment});
    }
    // A one-unit trie whose root offset leads past the array: refused when text reaches it.
    const std::string path = write_tokenizer_json(
        dir, unigram({{"unk_id", 0}}, charsmap(std::string("\x04\x00\x00\x00\x00\xfc\xff\x7f", 8))), "outside.json");
    const HfTokenizer outside = HfTokenizer::load(path);
    expect_error(ErrorKind::bad_input, [&] { outside.encode("a", false); },
                 {path, "precompiled_charsmap's trie leads to unit"});
}
