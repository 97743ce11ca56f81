// Hugging Face tokenizers (tokenizer.json and the legacy vocabulary files): the real GPT-2 and
// BERT vocabularies, and Phi-3's as a vocabulary-only GGUF file through the llama (SentencePiece)
// encoder, against llama.cpp's test vectors (ids written by HF's own tokenizers), the
// stories260K tokenizer.json against the llama2.c encoder, BPE and WordPiece on random words
// against plain references written here, and hostile files.
#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "byte_level.hpp"
#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"
#include "llama_vocab_vectors.hpp"
#include "model_tokenizer.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"
#include "text_codecs.hpp"
#include "unicode_text.hpp"

using namespace attn_viz;
using namespace test_support;
using json = nlohmann::json;

namespace {

std::string write_tokenizer_json(const ScratchDir& dir, const json& doc, const std::string& name = "tokenizer.json") {
    const std::string path = dir / name;
    write_text(path, doc.dump());
    return path;
}

// A WordPiece tokenizer.json of `vocab` with BERT's pre-tokenizer, the added tokens `specials` and
// `post_processor` (none when null), loaded from `dir`.
HfTokenizer wordpiece_tokenizer(const ScratchDir& dir, const json& vocab, const json& specials,
                                const json& post_processor) {
    json doc = {{"model", {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}},
                {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                {"added_tokens", specials}};
    if (!post_processor.is_null()) doc["post_processor"] = post_processor;
    return HfTokenizer::load(write_tokenizer_json(dir, doc));
}

// A plain BPE reference: merge the leftmost lowest-ranked pair until none is left.
std::vector<std::string> reference_bpe(const std::vector<std::string>& characters,
                                       const std::map<std::pair<std::string, std::string>, int>& ranks) {
    std::vector<std::string> symbols = characters;
    while (true) {
        int best_rank = INT_MAX;
        size_t best = 0;
        for (size_t i = 0; i + 1 < symbols.size(); ++i) {
            const auto found = ranks.find({symbols[i], symbols[i + 1]});
            if (found != ranks.end() && found->second < best_rank) best_rank = found->second, best = i;
        }
        if (best_rank == INT_MAX) return symbols;
        symbols[best] += symbols[best + 1];
        symbols.erase(symbols.begin() + static_cast<long>(best) + 1);
    }
}

}  // namespace

TEST_CASE("byte_fallback_byte reads \"<0xNN>\" tokens as the tokenizers library's ByteFallback does") {
    CHECK(byte_fallback_byte("<0x41>") == 'A');
    CHECK(byte_fallback_byte("<0xff>") == 255);
    CHECK(byte_fallback_byte("<0x0A>") == '\n');
    CHECK(byte_fallback_byte("<0x+4>") == 4);  // Rust's u8::from_str_radix takes a leading '+'
    for (const char* other : {"<0x 4>", "<0x4>", "<0x4G>", "<0X41>", "<0x041>", "0x41", "<0x-4>", "<0x41]"}) {
        CAPTURE(other);
        CHECK_FALSE(byte_fallback_byte(other).has_value());
    }
}

TEST_CASE("GPT-2's encoder.json + vocab.bpe give exactly the ids of llama.cpp's test vectors") {
    const std::string gpt2 = shared_model_dir("tokenizers/gpt2", {"encoder.json", "vocab.bpe"});
    const std::string vectors =
        shared_model_dir("tokenizers/llama.cpp-vocab", {"ggml-vocab-gpt-2.gguf.inp", "ggml-vocab-gpt-2.gguf.out"});
    if (gpt2.empty() || vectors.empty()) return;
    const HfTokenizer tokenizer = HfTokenizer::load(gpt2);
    CHECK(tokenizer.kind() == "byte-level BPE");
    CHECK(tokenizer.vocab_size() == 50257);
    check_vocab_cases(tokenizer, vocab_cases(vectors, "ggml-vocab-gpt-2.gguf"));
    // Labels are each token's text: "Ġworld" is " world".
    CHECK(tokenizer.labels({15496, 995}) == std::vector<std::string>{"Hello", " world"});
    CHECK(tokenizer.decode(tokenizer.encode("Héllo wörld 🦙\n\tend", false)) == "Héllo wörld 🦙\n\tend");
    CHECK(tokenizer.eos_id() == 50256);
}

TEST_CASE("BERT's tokenizer.json and its bare vocab.txt give exactly the ids of llama.cpp's test vectors") {
    const std::string bert = shared_model_dir("tokenizers/bert-base-uncased", {"tokenizer.json", "vocab.txt"});
    const std::string vectors = shared_model_dir("tokenizers/llama.cpp-vocab",
                                                 {"ggml-vocab-bert-bge.gguf.inp", "ggml-vocab-bert-bge.gguf.out"});
    if (bert.empty() || vectors.empty()) return;
    const std::vector<VocabCase> cases = vocab_cases(vectors, "ggml-vocab-bert-bge.gguf");
    const HfTokenizer from_json = HfTokenizer::load(bert);
    CHECK(from_json.kind() == "WordPiece");
    check_vocab_cases(from_json, cases);
    // The legacy file alone (BertTokenizer's defaults: lower case, [CLS] ... [SEP]).
    ScratchDir dir;
    std::filesystem::copy_file(bert + "/vocab.txt", dir / "vocab.txt");
    const HfTokenizer from_vocab = HfTokenizer::load(dir.path().string());
    check_vocab_cases(from_vocab, cases);
    for (const HfTokenizer* tokenizer : {&from_json, &from_vocab}) {
        const std::vector<int> ids = tokenizer->encode("Unaffable tokenizers!", true);
        CHECK(ids.front() == 101);
        CHECK(ids.back() == 102);
        CHECK(tokenizer->labels(ids) ==
              std::vector<std::string>{"[CLS]", "una", "##ffa", "##ble", "token", "##izer", "##s", "!", "[SEP]"});
        CHECK(tokenizer->decode(ids) == "unaffable tokenizers!");
    }
}

TEST_CASE(
    "Phi-3's vocabulary-only GGUF (SentencePiece \"llama\" tokenizer) gives exactly the ids of llama.cpp's test "
    "vectors") {
    const std::string vectors =
        shared_model_dir("tokenizers/llama.cpp-vocab",
                         {"ggml-vocab-phi-3.gguf", "ggml-vocab-phi-3.gguf.inp", "ggml-vocab-phi-3.gguf.out"});
    if (vectors.empty()) return;
    const GgufFile file(vectors + "/ggml-vocab-phi-3.gguf");
    CHECK(file.tensors().empty());  // no token_embd.weight to check the vocabulary against
    const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(file, 0);
    CHECK(tokenizer.vocab_size() == 32064);
    check_vocab_cases(
        "Phi-3 (GGUF llama)",
        [&](const std::string& text) { return tokenizer.encode(text, /*bos=*/false, /*eos=*/false); },
        vocab_cases(vectors, "ggml-vocab-phi-3.gguf"));
    CHECK(tokenizer.encode("Hello world", true, false) == std::vector<int>{1, 15043, 3186});
    CHECK(tokenizer.decode({1, 15043, 3186}) == "Hello world");
}

TEST_CASE("stories260K's tokenizer.json encodes as the llama2.c tokenizer does, with BOS, and decodes back") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json", "tokenizer_config.json"});
    const std::string llama2c = stories260k_dir();
    if (hf.empty() || llama2c.empty()) return;
    const HfTokenizer tokenizer = HfTokenizer::load(hf);
    const Llama2cTokenizer reference(llama2c + "/tok512.bin");
    CHECK(tokenizer.kind() == "BPE");
    CHECK(tokenizer.bos_id() == 1);
    CHECK(tokenizer.eos_id() == 2);
    // Random texts from words, punctuation, doubled spaces, newlines and characters outside the
    // 512-token vocabulary (byte fallback).
    const std::vector<std::string> parts = {"Once", " upon", " a",   " time", ",",    " Lily", " saw", "  ",
                                            "\n",   "!",     " dog", "é",     "日本", "🙂",  " the", "."};
    for (int trial = 0; trial < 200; ++trial) {
        std::string text;
        const int length = static_cast<int>(rng()() % 12) + 1;
        for (int i = 0; i < length; ++i) text += parts[rng()() % parts.size()];
        CAPTURE(text);
        CHECK(tokenizer.encode(text, true) == reference.encode(text, /*bos=*/true, /*eos=*/false));
        CHECK(tokenizer.decode(tokenizer.encode(text, true)) == text);
    }
    CHECK(tokenizer.labels(tokenizer.encode("Once upon", true)) == std::vector<std::string>{"<s>", " Once", " upon"});
    // As a model takes it: ids past the tokenizer's vocabulary (a padded embedding's, a random
    // model's prediction) are labelled by number instead of refused.
    const std::vector<int> beyond = {1, 512, 403, 700};
    const std::vector<std::string> labels = {"<s>", "<id 512>", tokenizer.labels({403})[0], "<id 700>"};
    CHECK(as_model_tokenizer(HfTokenizer::load(hf))->labels(beyond) == labels);
    CHECK(as_model_tokenizer(Llama2cTokenizer(llama2c + "/tok512.bin"))->labels(beyond) == labels);
}

TEST_CASE("BPE merges by rank, leftmost first, as a plain reference does, on random words") {
    // A random alphabet, random merges between known tokens, random words.
    const std::vector<std::string> alphabet = {"a", "b", "c", "d", "é"};
    json vocab = json::object();
    std::map<std::pair<std::string, std::string>, int> ranks;
    for (const std::string& letter : alphabet) vocab[letter] = static_cast<int>(vocab.size());
    json merges = json::array();
    std::vector<std::string> tokens = alphabet;
    for (int m = 0; m < 40; ++m) {
        const std::string left = tokens[rng()() % tokens.size()], right = tokens[rng()() % tokens.size()];
        if (ranks.count({left, right}) || left.size() + right.size() > 8) continue;
        ranks[{left, right}] = static_cast<int>(merges.size());
        merges.push_back(left + " " + right);
        if (!vocab.contains(left + right))
            vocab[left + right] = static_cast<int>(vocab.size()), tokens.push_back(left + right);
    }
    ScratchDir dir;
    const json doc = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
    const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(dir, doc));
    for (int trial = 0; trial < 300; ++trial) {
        const std::vector<std::string> characters = random_letters(alphabet, 15);
        const std::string word = std::accumulate(characters.begin(), characters.end(), std::string());
        std::vector<int> expected;
        for (const std::string& symbol : reference_bpe(characters, ranks)) expected.push_back(vocab[symbol].get<int>());
        CAPTURE(word);
        CHECK(tokenizer.encode(word, false) == expected);
    }
}

TEST_CASE("WordPiece: longest prefix, then ## continuations; unknown words and over-long words are [UNK]") {
    ScratchDir dir;
    const json vocab = {{"[UNK]", 0},  {"[CLS]", 1}, {"[SEP]", 2}, {"un", 3}, {"##aff", 4},
                        {"##able", 5}, {"a", 6},     {"##ff", 7},  {"!", 8},  {"日", 9}};
    const json doc = {
        {"model", {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}, {"max_input_chars_per_word", 10}}},
        {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
        {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
        {"post_processor", {{"type", "BertProcessing"}, {"cls", {"[CLS]", 1}}, {"sep", {"[SEP]", 2}}}},
        {"added_tokens", {{{"id", 0}, {"content", "[UNK]"}, {"special", true}}}}};
    const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(dir, doc));
    CHECK(tokenizer.encode("UnAffable!", true) == std::vector<int>{1, 3, 4, 5, 8, 2});
    CHECK(tokenizer.encode("unaffableaff", false) == std::vector<int>{0});    // 12 characters > 10
    CHECK(tokenizer.encode("unx 日日", false) == std::vector<int>{0, 9, 9});  // CJK characters split apart
    CHECK(tokenizer.encode("Ünaff", false) == std::vector<int>{3, 4});        // accents stripped with lower case
}

TEST_CASE("hostile tokenizer files get one-line errors naming the file") {
    ScratchDir dir;
    auto bpe = [](json vocab, json merges) {
        return json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
    };
    const json ab = {{"a", 0}, {"b", 1}, {"ab", 2}};
    struct Case {
        json doc;
        std::string fragment;
    };
    const std::vector<Case> cases = {
        {bpe(ab, {"a c"}), "not in the vocabulary"},
        {bpe(ab, {"ab"}), "is not two tokens"},
        {bpe({{"a", 0}, {"b", 1000000000}}, json::array()), "outside 0..1"},
        {bpe({{"a", 0}, {"b", -1}}, json::array()), "not an integer in 0..2^31-1"},
        {bpe({{"a", 0}, {"b", 0}}, json::array()), "share id 0"},
        {bpe({{"a", "zero"}}, json::array()), "not an integer"},
        {json{{"model", {{"type", "WordLevel"}, {"vocab", ab}}}},
         "unsupported model type \"WordLevel\" (supported: BPE, WordPiece, Unigram)"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}}, {"normalizer", {{"type", "Nmt"}}}},
         "unsupported normalizer type \"Nmt\""},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "(["}}}, {"behavior", "Isolated"}}}},
         "does not compile"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}}}},
         "unknown split behavior"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}, {"byte_fallback", "yes"}}}}, "malformed tokenizer"},
        // Numbers that must be integers: fractions and values past any integer type are refused,
        // never converted (fuzz_hf_tokenizer finding crash-4b168711...: 1.09e21 into int64_t).
        {json{{"model",
               {{"type", "WordPiece"}, {"vocab", ab}, {"unk_token", "a"}, {"max_input_chars_per_word", 1.0922e21}}}},
         "\"max_input_chars_per_word\" is 1.0922e+21, expected an integer in 1..2147483647"},
        {json{{"model", {{"type", "WordPiece"}, {"vocab", ab}, {"unk_token", "a"}, {"max_input_chars_per_word", 2.5}}}},
         "\"max_input_chars_per_word\" is 2.5, expected an integer"},
        {json{{"model", {{"type", "WordPiece"}, {"vocab", ab}, {"unk_token", "a"}, {"max_input_chars_per_word", -5}}}},
         "\"max_input_chars_per_word\" is -5, expected an integer"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"decoder", {{"type", "Strip"}, {"content", " "}, {"start", 1e30}, {"stop", 0}}}},
         "\"start\" is 1e+30, expected an integer in 0..2147483647"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"decoder", {{"type", "Strip"}, {"content", " "}, {"start", 18446744073709551615u}, {"stop", 0}}}},
         "\"start\" is 18446744073709551615, expected an integer"},
        // A template's special ids outside the vocabulary (fuzz_hf_tokenizer finding crash-97d8b9a6...:
        // encode returned an id no table held).
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"post_processor",
               {{"type", "TemplateProcessing"},
                {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {3}}}}}}}}},
         "the special token id 3 the post-processor adds is not in the vocabulary (ids 0..2)"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[SEP]", -1}}, {"cls", {"[CLS]", 0}}}}},
         "the special token id -1 the post-processor adds is not in the vocabulary"},
        {json{{"model", {{"type", "WordPiece"}, {"vocab", ab}, {"unk_token", "[UNK]"}}}},
         "the unknown token \"[UNK]\" is not in the vocabulary"},
        {json{{"vocab", ab}}, "not a tokenizer.json"},
        {json{{"model", {{"type", "BPE"}, {"vocab", ab}}},
              {"post_processor", {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "<s>"}}}}}}}}},
         "has no ids"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        CAPTURE(i);
        const std::string path = write_tokenizer_json(dir, cases[i].doc, "tokenizer" + std::to_string(i) + ".json");
        expect_error(ErrorKind::bad_input, [&] { HfTokenizer::load(path); }, {path, cases[i].fragment});
    }
    expect_error(ErrorKind::io, [&] { HfTokenizer::load(dir / "missing.json"); }, {"missing.json"});
    std::filesystem::create_directory(dir / "empty");
    expect_error(ErrorKind::bad_input, [&] { HfTokenizer::load(dir / "empty"); }, {"no tokenizer here"});
    // Text that is not UTF-8, and characters outside a vocabulary without an unknown token.
    const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(dir, bpe(ab, {"a b"})));
    expect_error(ErrorKind::bad_input, [&] { tokenizer.encode("a\xff", false); }, {"not UTF-8"});
    expect_error(ErrorKind::bad_input, [&] { tokenizer.encode("abc", false); }, {"\"c\" is not in the vocabulary"});
    CHECK(tokenizer.encode("abab", false) == std::vector<int>{2, 2});
    expect_error(ErrorKind::bad_input, [&] { tokenizer.labels({7}); }, {"token id 7"});
}

TEST_CASE("a Split pattern that backtracks catastrophically is stopped with an error naming the file and the pattern") {
    ScratchDir dir;
    const json ab = {{"a", 0}, {"b", 1}, {"!", 2}};
    for (const std::string& pattern : {std::string("(a+)+$"), std::string("(a|aa)+b"), std::string("(?:a*)*c")}) {
        CAPTURE(pattern);
        const json doc = {
            {"model", {{"type", "BPE"}, {"vocab", ab}, {"merges", json::array()}}},
            {"pre_tokenizer",
             {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}}}};
        const std::string path = write_tokenizer_json(dir, doc);
        const HfTokenizer tokenizer = HfTokenizer::load(path);
        CHECK(tokenizer.encode("ab!", false).size() == 3);  // short texts are fine
        const auto start = std::chrono::steady_clock::now();
        expect_error(ErrorKind::bad_input, [&] { tokenizer.encode(std::string(5000, 'a') + "!", false); },
                     {path + ": pre_tokenizer Split: the regular expression \"" + pattern + "\" ran past the",
                      "catastrophic backtracking"});
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK_MESSAGE(seconds < 20.0, "stopping took " << seconds << " s");
    }
}

TEST_CASE("normalizers that expand the text are held to what the memory budget allows tokenizing, naming the step") {
    ScratchDir dir;
    // A budget of 50 KB allows a normalized text of 1024 bytes (tokenize_bytes_per_normalized_byte a byte).
    const LoadLimits limits = limits_with_budget(1024 * tokenize_bytes_per_normalized_byte);
    const auto tokenizer_of = [&](const json& step, const std::string& name) {
        const json doc = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}}},
                          {"normalizer", {{"type", "Sequence"}, {"normalizers", json::array({step, step, step})}}}};
        return write_tokenizer_json(dir, doc, name);
    };
    // Replace: every "a" becomes 4, three times: 16 bytes make exactly the 1024, 17 one step too many.
    const std::string replace =
        tokenizer_of({{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", "aaaa"}}, "replace.json");
    const HfTokenizer replacing = HfTokenizer::load(replace, limits);
    CHECK(replacing.encode(std::string(16, 'a'), false) == std::vector<int>(1024, 0));
    expect_error(
        ErrorKind::bad_input, [&] { replacing.encode(std::string(17, 'a'), false); },
        {replace + ": normalizer Replace: the normalized text would be longer than 1024 bytes, the longest the "
                   "memory budget of 51200 bytes allows tokenizing"},
        Remedy::raise_memory_budget);
    CHECK(HfTokenizer::load(replace).encode(std::string(17, 'a'), false).size() == 17 * 64);  // the default budget

    // Precompiled: a charsmap of one rule, "a" -> 64 "a"s (a Darts double array of 256 units: the
    // root's offset 1 leads "a" (97) to unit 96, a leaf whose value, at unit 97, is replacement 0).
    std::vector<uint32_t> units(256, 0);
    units[0] = 1u << 10;
    units[96] = (1u << 10) | (1u << 8) | 97;
    std::string blob(4, '\0');
    const uint32_t trie_bytes = static_cast<uint32_t>(units.size() * 4);
    for (int i = 0; i < 4; ++i) blob[i] = static_cast<char>(trie_bytes >> (8 * i));
    for (const uint32_t unit : units)
        for (int i = 0; i < 4; ++i) blob += static_cast<char>(unit >> (8 * i));
    blob += std::string(64, 'a') + '\0';
    const std::string precompiled = tokenizer_of(
        {{"type", "Precompiled"},
         {"precompiled_charsmap", base64_encode(reinterpret_cast<const uint8_t*>(blob.data()), blob.size())}},
        "precompiled.json");
    // (a larger budget: the file itself takes 74 KB of it as parsed JSON) 64 * 64 = 4096 bytes
    // after two steps are within it, the third step is refused as it writes.
    const HfTokenizer rewriting =
        HfTokenizer::load(precompiled, limits_with_budget(4096 * tokenize_bytes_per_normalized_byte));
    expect_error(
        ErrorKind::bad_input, [&] { rewriting.encode("a", false); },
        {precompiled + ": normalizer Precompiled: the normalized text would be longer than 4096 bytes"},
        Remedy::raise_memory_budget);
    CHECK(HfTokenizer::load(precompiled).encode("a", false) == std::vector<int>(64 * 64 * 64, 0));
}

TEST_CASE(
    "real tokenizers' Split patterns (GPT-2, Llama 3, Qwen2) never reach the regex limits, over long runs of each "
    "class") {
    const char* const patterns[] = {
        R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"};
    // Prose, then 200 KB runs of one class each (the longest matches and backtracking these
    // patterns can do), and runs of spaces ended by a letter or a newline.
    std::string prose;
    for (int i = 0; i < 2000; ++i)
        prose +=
            "The caf\xc3\xa9's 12345 heads \xe2\x80\x94 don't they? \"Yes,\" she said.\n\n  Indented\tline 3.14\r\n";
    const std::vector<std::string> texts = {prose,
                                            std::string(200000, ' '),
                                            std::string(200000, ' ') + "x",
                                            std::string(200000, ' ') + "\n",
                                            std::string(200000, '\n') + " x",
                                            std::string(200000, 'a'),
                                            std::string(200000, '7'),
                                            std::string(200000, '!') + "\r\n",
                                            " " + std::string(200000, '\'') + "s"};
    for (const char* pattern : patterns) {
        const UnicodeRegex regex(pattern, "test");
        for (const std::string& text : texts) {
            CAPTURE(pattern);
            CAPTURE(text.size());
            std::string joined;
            for (const UnicodeRegex::Piece& piece : regex.split(text)) joined += piece.text;
            CHECK(joined == text);
        }
    }
}

TEST_CASE("the Split + ByteLevel form of Llama 3 and Qwen2 tokenizers gives GPT-2's ids when given GPT-2's pattern") {
    const std::string gpt2 = shared_model_dir("tokenizers/gpt2", {"encoder.json", "vocab.bpe"});
    const std::string vectors =
        shared_model_dir("tokenizers/llama.cpp-vocab", {"ggml-vocab-gpt-2.gguf.inp", "ggml-vocab-gpt-2.gguf.out"});
    if (gpt2.empty() || vectors.empty()) return;
    json merges = json::array();
    std::istringstream lines(read_text(gpt2 + "/vocab.bpe"));
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != '#') merges.push_back(line);
    const std::string pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
    const json doc = {
        {"model",
         {{"type", "BPE"},
          {"vocab", json::parse(read_text(gpt2 + "/encoder.json"))},
          {"merges", merges},
          {"ignore_merges", true}}},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
        {"decoder", {{"type", "ByteLevel"}}}};
    ScratchDir dir;
    const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(dir, doc));
    CHECK(tokenizer.kind() == "byte-level BPE");
    check_vocab_cases(tokenizer, vocab_cases(vectors, "ggml-vocab-gpt-2.gguf"));
}

TEST_CASE(
    "the Metaspace form of SentencePiece tokenizers (Mistral, newer Llama 2 files) encodes as the llama2.c tokenizer") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json"});
    const std::string llama2c = stories260k_dir();
    if (hf.empty() || llama2c.empty()) return;
    json doc = json::parse(read_text(hf + "/tokenizer.json"));
    doc["normalizer"] = nullptr;
    doc["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", false}};
    doc["decoder"] = {
        {"type", "Sequence"},
        {"decoders",
         {{{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}}, {{"type", "ByteFallback"}}}}};
    ScratchDir dir;
    const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(dir, doc));
    const Llama2cTokenizer reference(llama2c + "/tok512.bin");
    // (Not text that starts with a space: Metaspace adds no "▁" before one, SentencePiece does.)
    for (const std::string text : {"Once upon a time, Lily saw a dog.", "two  spaces\nand a line ", "é日本🙂!"}) {
        CAPTURE(text);
        CHECK(tokenizer.encode(text, true) == reference.encode(text, true, false));
        CHECK(tokenizer.decode(tokenizer.encode(text, true)) == text);
    }
}

TEST_CASE(
    "Text pairs: each post-processor's pair template with its token types; a file without a usable one still "
    "encodes single texts and refuses pairs by name") {
    ScratchDir dir;
    const json vocab = {{"[UNK]", 0}, {"a", 1}, {"b", 2}, {"[CLS]", 3}, {"[SEP]", 4}, {"<s>", 5}, {"</s>", 6}};
    const json specials = json::array({{{"id", 3}, {"content", "[CLS]"}, {"special", true}},
                                       {{"id", 4}, {"content", "[SEP]"}, {"special", true}},
                                       {{"id", 5}, {"content", "<s>"}, {"special", true}},
                                       {{"id", 6}, {"content", "</s>"}, {"special", true}}});
    auto tokenizer = [&](const json& post_processor) {
        return wordpiece_tokenizer(dir, vocab, specials, post_processor);
    };
    struct Case {
        const char* name;
        json post_processor;
        std::vector<int> ids, types;
        int64_t second_start;
        std::string separator;
    };
    const json template_processing = {{"type", "TemplateProcessing"},
                                      {"single", json::array({{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
                                                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                                              {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}}})},
                                      {"pair", json::array({{{"SpecialToken", {{"id", "[CLS]"}, {"type_id", 0}}}},
                                                            {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                                            {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 0}}}},
                                                            {{"Sequence", {{"id", "B"}, {"type_id", 1}}}},
                                                            {{"SpecialToken", {{"id", "[SEP]"}, {"type_id", 1}}}}})},
                                      {"special_tokens",
                                       {{"[CLS]", {{"id", "[CLS]"}, {"ids", {3}}, {"tokens", {"[CLS]"}}}},
                                        {"[SEP]", {{"id", "[SEP]"}, {"ids", {4}}, {"tokens", {"[SEP]"}}}}}}};
    const Case cases[] = {
        {"TemplateProcessing", template_processing, {3, 1, 1, 4, 2, 4}, {0, 0, 0, 0, 1, 1}, 4, "[SEP]"},
        {"BertProcessing",
         {{"type", "BertProcessing"}, {"cls", {"[CLS]", 3}}, {"sep", {"[SEP]", 4}}},
         {3, 1, 1, 4, 2, 4},
         {0, 0, 0, 0, 1, 1},
         4,
         "[SEP]"},
        {"RobertaProcessing",  // <s> A </s></s> B </s>, every token of type 0
         {{"type", "RobertaProcessing"}, {"cls", {"<s>", 5}}, {"sep", {"</s>", 6}}},
         {5, 1, 1, 6, 6, 2, 6},
         {0, 0, 0, 0, 0, 0, 0},
         5,
         "</s>"},
        {"no post-processor", json(), {1, 1, 2}, {0, 0, 1}, 2, ""},
        {"Sequence of ByteLevel and TemplateProcessing",
         {{"type", "Sequence"}, {"processors", json::array({{{"type", "ByteLevel"}}, template_processing})}},
         {3, 1, 1, 4, 2, 4},
         {0, 0, 0, 0, 1, 1},
         4,
         "[SEP]"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.name);
        const HfTokenizer t = tokenizer(c.post_processor);
        const EncodedText pair = t.encode_pair("a a", "b");
        CHECK(pair.ids == c.ids);
        CHECK(pair.type_ids == c.types);
        CHECK(pair.second_start == c.second_start);
        CHECK(t.pair_separator() == c.separator);
    }
    // Without a usable pair template single texts still encode; a pair is refused naming why.
    json no_pair = template_processing, empty_pair = template_processing;
    no_pair.erase("pair");
    empty_pair["pair"] = json::array();  // as a tokenizer.json converted from a GGUF file may have it
    const std::pair<json, std::string> refused[] = {
        {no_pair, "post_processor: no template for a text pair (no \"pair\")"},
        {empty_pair, "\"pair\" must hold sequence A once and sequence B once"},
        {{{"type", "Sequence"}, {"processors", json::array({template_processing, template_processing})}},
         "two steps add ids, and attn-viz does not compose their pair templates"},
    };
    for (const auto& [post_processor, message] : refused) {
        CAPTURE(message);
        const HfTokenizer t = tokenizer(post_processor);
        CHECK(t.encode("a", true).size() >= 1);
        expect_error(ErrorKind::bad_input, [&] { t.encode_pair("a", "b"); }, {dir / "tokenizer.json", message});
    }
}

TEST_CASE("token roles: the post-processor's start and separator tokens, punctuation by Unicode category") {
    ScratchDir dir;
    const json vocab = {{"[UNK]", 0}, {"a", 1}, {",", 2}, {"[CLS]", 3}, {"[SEP]", 4},  {"<s>", 5},
                        {"</s>", 6},  {".", 7}, {"$", 8}, {"##.", 9},   {"[MASK]", 10}};
    const json specials = json::array({{{"id", 3}, {"content", "[CLS]"}, {"special", true}},
                                       {{"id", 4}, {"content", "[SEP]"}, {"special", true}},
                                       {{"id", 5}, {"content", "<s>"}, {"special", true}},
                                       {{"id", 6}, {"content", "</s>"}, {"special", true}},
                                       {{"id", 10}, {"content", "[MASK]"}, {"special", true}}});
    auto tokenizer = [&](const json& post_processor) {
        return as_model_tokenizer(wordpiece_tokenizer(dir, vocab, specials, post_processor));
    };
    using enum TokenRole;
    const auto bert = tokenizer({{"type", "BertProcessing"}, {"cls", {"[CLS]", 3}}, {"sep", {"[SEP]", 4}}});
    const EncodedText pair = bert->encode_pair("a , a .", "a $");
    CHECK(pair.ids == std::vector<int>{3, 1, 2, 1, 7, 4, 1, 8, 4});
    // "$" is a symbol (Sc), not punctuation; [MASK] is special but neither start nor separator.
    CHECK(token_roles(*bert, pair.ids) ==
          std::vector<TokenRole>{start, other, punctuation, other, punctuation, separator, other, other, separator});
    CHECK(token_roles(*bert, {10, 9, 0}) == std::vector<TokenRole>{other, punctuation, other});
    const auto roberta = tokenizer({{"type", "RobertaProcessing"}, {"cls", {"<s>", 5}}, {"sep", {"</s>", 6}}});
    const EncodedText doubled = roberta->encode_pair("a", "a");  // <s> a </s></s> a </s>
    CHECK(token_roles(*roberta, doubled.ids) ==
          std::vector<TokenRole>{start, other, separator, separator, other, separator});
    CHECK(token_roles(*roberta, {3, 4}) == std::vector<TokenRole>{other, other});  // another template's specials
    const auto plain = tokenizer(json());  // no post-processor: no start or separator
    CHECK(token_roles(*plain, {3, 1, 7, 4}) == std::vector<TokenRole>{other, other, punctuation, other});
    for (const char* label : {",", " ...", "##!", "\u3002", "\u00bf", " \"", "--"}) {
        CAPTURE(label);
        CHECK(is_punctuation_label(label));
    }
    for (const char* label : {"", " ", "a.", "$", "+", "\xff", "1."}) {
        CAPTURE(label);
        CHECK(!is_punctuation_label(label));
    }
}

TEST_CASE("The first ordinary token is past the leading special, unused and byte-fallback tokens, whatever the files") {
    // Real vocabularies: GPT-2's starts with "!"; BERT's with [PAD] (special) and then [unused0];
    // llama2.c's, Llama 2's and Phi-3's with <unk> <s> </s> and the 256 byte tokens.
    if (const std::string gpt2 = shared_model_dir("tokenizers/gpt2", {"encoder.json", "vocab.bpe"}); !gpt2.empty())
        CHECK(HfTokenizer::load(gpt2).first_ordinary_id() == 0);
    if (const std::string bert = shared_model_dir("tokenizers/bert-base-uncased", {"tokenizer.json"}); !bert.empty())
        CHECK(HfTokenizer::load(bert).first_ordinary_id() == 1);
    if (const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json"}); !hf.empty())
        CHECK(HfTokenizer::load(hf).first_ordinary_id() == 259);
    if (const std::string llama2c = stories260k_dir(); !llama2c.empty())
        CHECK(Llama2cTokenizer(llama2c + "/tok512.bin").first_ordinary_id() == 259);
    if (const std::string vectors = shared_model_dir("tokenizers/llama.cpp-vocab", {"ggml-vocab-phi-3.gguf"});
        !vectors.empty()) {
        const GgufFile file(vectors + "/ggml-vocab-phi-3.gguf");
        CHECK(as_model_tokenizer(read_gguf_llama_tokenizer(file, 0))->first_ordinary_id() == 259);
    }

    // Made-up vocabularies, of random sizes: k specials, then b byte tokens, then ordinary ones; and
    // one where every id is special.
    std::mt19937 random(20261202);
    for (int trial = 0; trial < 20; ++trial) {
        const int specials = static_cast<int>(random() % 4), bytes = static_cast<int>(random() % 5),
                  ordinary = 1 + static_cast<int>(random() % 4);
        json vocab = json::object(), added = json::array();
        int id = 0;
        for (int k = 0; k < specials; ++k, ++id) {
            vocab[fmt::format("<special{}>", k)] = id;
            added.push_back({{"id", id}, {"content", fmt::format("<special{}>", k)}, {"special", true}});
        }
        for (int b = 0; b < bytes; ++b, ++id) vocab[fmt::format("<0x{:02X}>", b + 0x41)] = id;
        for (int o = 0; o < ordinary; ++o, ++id) vocab[std::string(1, static_cast<char>('a' + o))] = id;
        CAPTURE(vocab.dump());
        ScratchDir dir;
        const HfTokenizer tokenizer = HfTokenizer::load(write_tokenizer_json(
            dir, {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array()}, {"byte_fallback", true}}},
                  {"added_tokens", added}}));
        CHECK(tokenizer.first_ordinary_id() == specials + bytes);
        CHECK(as_model_tokenizer(HfTokenizer::load(dir.path().string()))->first_ordinary_id() == specials + bytes);
    }
    ScratchDir dir;
    const HfTokenizer all_special = HfTokenizer::load(
        write_tokenizer_json(dir, {{"model", {{"type", "BPE"}, {"vocab", {{"<s>", 0}}}, {"merges", json::array()}}},
                                   {"added_tokens", {{{"id", 0}, {"content", "<s>"}, {"special", true}}}}}));
    CHECK(all_special.first_ordinary_id() == all_special.vocab_size());

    // SentencePiece pieces in angle brackets (BOS and EOS whatever their pieces), then a piece that
    // is not one.
    const Llama2cTokenizer pieces("made-up", {"<unk>", "\n<s>\n", "\n</s>\n", "<pad>", "<0x00>", " a", "<later>"},
                                  std::vector<float>(7, 0.0f));
    CHECK(pieces.first_ordinary_id() == 5);
}
