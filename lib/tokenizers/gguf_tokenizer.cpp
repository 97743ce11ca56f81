// tokenizer.ggml.* (model "gpt2" or "bert") to the tokenizer.json and tokenizer_config.json documents of the
// same tokenizer, then HfTokenizer::from_json.
#include "gguf_tokenizer.hpp"

#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

// "\u2581" (SentencePiece's visible space) back to " ", as llama2.c's vocabulary stores it.
std::string with_spaces(const std::string& piece) {
    static const std::string visible_space = "\xe2\x96\x81";
    std::string result;
    for (size_t i = 0; i < piece.size();) {
        if (piece.compare(i, visible_space.size(), visible_space) == 0) {
            result += ' ';
            i += visible_space.size();
        } else {
            result += piece[i++];
        }
    }
    return result;
}

using json = nlohmann::json;

// llama.cpp's token types (llama_token_type): 0 undefined, 1 normal, 2 unknown, 3 control,
// 4 user-defined, 5 unused, 6 byte.
constexpr int64_t control_token = 3, user_defined_token = 4, last_token_type = 6;

// How a tokenizer.ggml.pre name splits text into words: the pre_tokenizer of the tokenizer.json
// llama.cpp converted it from, BPE's ignore_merges, and whether llama.cpp adds BOS by default.
struct PreTokenizerSpec {
    json steps;
    bool ignore_merges = false;
    bool add_bos = false;
};

// The Split patterns of the models' tokenizer.json files.
constexpr const char* llama3_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* qwen2_pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// llama.cpp's own list for "default" (no tokenizer.json has it): each pattern splits the pieces
// the previous one left.
const char* const default_patterns[] = {R"([\p{P}\$\+<=>\^~\|]+)",
                                        R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))",
                                        R"(\p{N}+)", R"([0-9][0-9][0-9])"};

json split_step(const std::string& pattern) {
    return {{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
}

json byte_level_step(bool use_regex) {
    return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", use_regex}};
}

// Regex splits, then the bytes of each piece in the byte-level alphabet.
json split_then_bytes(const std::vector<std::string>& patterns) {
    json steps = json::array();
    for (const std::string& pattern : patterns) steps.push_back(split_step(pattern));
    steps.push_back(byte_level_step(false));
    return {{"type", "Sequence"}, {"pretokenizers", steps}};
}

std::optional<PreTokenizerSpec> pre_tokenizer_spec(const std::string& name) {
    if (name == "gpt-2") return PreTokenizerSpec{byte_level_step(true)};  // GPT-2's own pattern inside ByteLevel
    if (name == "llama-bpe" || name == "llama3" || name == "llama-v3")
        return PreTokenizerSpec{split_then_bytes({llama3_pattern}), true, true};
    if (name == "qwen2") return PreTokenizerSpec{split_then_bytes({qwen2_pattern})};
    if (name == "default")
        return PreTokenizerSpec{split_then_bytes({std::begin(default_patterns), std::end(default_patterns)})};
    return std::nullopt;
}

// The text of the token `key` names (an optional id), or null when the key is absent.
json special_token(const GgufFile& file, const std::string& key, const std::vector<std::string>& tokens) {
    const std::optional<uint64_t> id = file.get_uint(key);
    if (!id) return nullptr;
    if (*id >= tokens.size())
        fail_input(file.path(), fmt::format("{} is {}, outside the {} tokens", key, *id, tokens.size()));
    return tokens[*id];
}

// `text` in quotes for a message: its first 60 bytes, those that are not UTF-8 as "\xNN".
std::string quoted_excerpt(const std::string& text) {
    std::string out = "\"";
    out += escape_invalid_utf8(text.substr(0, 60));
    return out += '"';
}

// tokenizer.ggml.tokens and .token_type, checked: the token count equal to `vocab_size` > 0, or
// with 0 to the rows of the file's token_embd.weight if it has one (a vocabulary-only file has no
// tensors: its tokens are checked on their own), one type of llama.cpp's per token.
struct GgufVocabulary {
    std::vector<std::string> tokens;
    std::vector<int64_t> types;
};

GgufVocabulary read_vocabulary(const GgufFile& file, int64_t vocab_size) {
    const std::string& path = file.path();
    GgufVocabulary out{file.get_string_array("tokenizer.ggml.tokens"), {}};
    if (out.tokens.empty()) fail_input(path, "tokenizer.ggml.tokens is empty");
    int64_t model_vocab = vocab_size;
    if (const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
        model_vocab == 0 && embedding && embedding->dims.size() == 2)
        model_vocab = embedding->dims[1];
    if (model_vocab > 0 && static_cast<int64_t>(out.tokens.size()) != model_vocab)
        fail_input(path, fmt::format("tokenizer.ggml.tokens holds {} tokens but the model's vocabulary has {}",
                                     out.tokens.size(), model_vocab));
    out.types = file.has("tokenizer.ggml.token_type") ? file.get_int_array("tokenizer.ggml.token_type")
                                                      : std::vector<int64_t>(out.tokens.size(), 1);
    if (out.types.size() != out.tokens.size())
        fail_input(path, fmt::format("tokenizer.ggml.token_type holds {} types for {} tokens", out.types.size(),
                                     out.tokens.size()));
    for (size_t id = 0; id < out.types.size(); ++id)
        if (out.types[id] < 0 || out.types[id] > last_token_type)
            fail_input(path,
                       fmt::format("tokenizer.ggml.token_type of token {} is {}, not one of llama.cpp's types 0..6", id,
                                   out.types[id]));
    return out;
}

// The tokenizer.json "vocab" of `tokens` (no token twice) and its "added_tokens": the control and
// user-defined tokens, cut out of the text before the model runs, as HF's added tokens.
std::pair<json, json> vocabulary_json(const std::string& path, const std::vector<std::string>& tokens,
                                      const std::vector<int64_t>& types) {
    json vocab = json::object(), added = json::array();
    for (size_t id = 0; id < tokens.size(); ++id) {
        const std::string& token = tokens[id];
        if (const auto twin = vocab.find(token); twin != vocab.end())
            fail_input(path, fmt::format("tokenizer.ggml.tokens holds {} twice (ids {} and {})", quoted_excerpt(token),
                                         twin->get<int64_t>(), id));
        vocab[token] = id;
        if (types[id] == control_token || types[id] == user_defined_token)
            added.push_back({{"id", id}, {"content", token}, {"special", types[id] == control_token}});
    }
    return {std::move(vocab), std::move(added)};
}

// A WordPiece token back in its vocab.txt spelling: llama.cpp's converter writes word-initial
// pieces with a "▁" (U+2581) in front and continuations without their "##"; control tokens, and
// with older converters every "[...]" token, stay as they were.
std::string wordpiece_spelling(const std::string& token, int64_t type) {
    constexpr std::string_view word_start = "\xe2\x96\x81";
    if (token.starts_with(word_start)) return token.substr(word_start.size());
    if (type == control_token || (token.size() >= 2 && token.front() == '[' && token.back() == ']')) return token;
    return fmt::format("##{}", token);
}

}  // namespace

std::string supported_gguf_pre_tokenizers() { return "gpt-2, llama-bpe (also llama3, llama-v3), qwen2, default"; }

HfTokenizer read_gguf_bpe_tokenizer(const GgufFile& file, int64_t vocab_size) {
    const std::string& path = file.path();
    const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
    if (model != "gpt2")
        fail_input(path,
                   fmt::format("tokenizer.ggml.model is {}, not the byte-level BPE \"gpt2\"", quoted_excerpt(model)));
    const std::string pre_name = file.get_string("tokenizer.ggml.pre").value_or("default");
    const std::optional<PreTokenizerSpec> pre = pre_tokenizer_spec(pre_name);
    if (!pre)
        fail_input(path, fmt::format("tokenizer.ggml.pre {} is a pre-tokenizer attn-viz does not know (supported: {})",
                                     quoted_excerpt(pre_name), supported_gguf_pre_tokenizers()));

    const GgufVocabulary vocabulary = read_vocabulary(file, vocab_size);
    auto [vocab, added] = vocabulary_json(path, vocabulary.tokens, vocabulary.types);
    json bpe = {{"type", "BPE"},
                {"vocab", std::move(vocab)},
                {"merges", file.get_string_array("tokenizer.ggml.merges")},
                {"ignore_merges", pre->ignore_merges}};
    if (json unk = special_token(file, "tokenizer.ggml.unknown_token_id", vocabulary.tokens); !unk.is_null())
        bpe["unk_token"] = unk;
    const json tokenizer = {{"model", std::move(bpe)},
                            {"added_tokens", std::move(added)},
                            {"pre_tokenizer", pre->steps},
                            {"decoder", {{"type", "ByteLevel"}}}};
    const json config = {{"bos_token", special_token(file, "tokenizer.ggml.bos_token_id", vocabulary.tokens)},
                         {"eos_token", special_token(file, "tokenizer.ggml.eos_token_id", vocabulary.tokens)},
                         {"add_bos_token", file.get_bool("tokenizer.ggml.add_bos_token").value_or(pre->add_bos)},
                         {"add_eos_token", file.get_bool("tokenizer.ggml.add_eos_token").value_or(false)}};
    return HfTokenizer::from_json(tokenizer, config, path);
}

HfTokenizer read_gguf_wordpiece_tokenizer(const GgufFile& file, int64_t vocab_size) {
    const std::string& path = file.path();
    const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
    if (model != "bert")
        fail_input(path, fmt::format("tokenizer.ggml.model is {}, not the WordPiece \"bert\"", quoted_excerpt(model)));
    GgufVocabulary vocabulary = read_vocabulary(file, vocab_size);
    for (size_t id = 0; id < vocabulary.tokens.size(); ++id)
        vocabulary.tokens[id] = wordpiece_spelling(vocabulary.tokens[id], vocabulary.types[id]);
    auto [vocab, added] = vocabulary_json(path, vocabulary.tokens, vocabulary.types);
    json wordpiece = {{"type", "WordPiece"}, {"vocab", std::move(vocab)}, {"continuing_subword_prefix", "##"}};
    if (json unk = special_token(file, "tokenizer.ggml.unknown_token_id", vocabulary.tokens); !unk.is_null())
        wordpiece["unk_token"] = unk;
    // [CLS] text [SEP], as BertProcessing; llama.cpp spells the key "seperator".
    json post_processor = nullptr;
    const json cls = special_token(file, "tokenizer.ggml.cls_token_id", vocabulary.tokens);
    const json sep = special_token(file, "tokenizer.ggml.seperator_token_id", vocabulary.tokens);
    if (!cls.is_null() && !sep.is_null())
        post_processor = {{"type", "BertProcessing"},
                          {"cls", {cls, *file.get_uint("tokenizer.ggml.cls_token_id")}},
                          {"sep", {sep, *file.get_uint("tokenizer.ggml.seperator_token_id")}}};
    // llama.cpp's WordPiece always lowercases and strips accents, as bert-base-uncased's BertNormalizer.
    const json tokenizer = {{"model", std::move(wordpiece)},
                            {"added_tokens", std::move(added)},
                            {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}}},
                            {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                            {"post_processor", std::move(post_processor)},
                            {"decoder", {{"type", "WordPiece"}}}};
    return HfTokenizer::from_json(tokenizer, json::object(), path);
}

Llama2cTokenizer read_gguf_llama_tokenizer(const GgufFile& file, int64_t vocab_size) {
    const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
    if (model != "llama")
        fail_input(file.path(),
                   fmt::format("tokenizer.ggml.model is \"{}\"; attn-viz reads the SentencePiece \"llama\" "
                               "and the byte-level BPE \"gpt2\" tokenizers from GGUF",
                               model));
    std::vector<std::string> pieces = file.get_string_array("tokenizer.ggml.tokens");
    // The model's vocabulary: `vocab_size`, else the file's own token_embd.weight rows (a
    // vocabulary-only file has no tensors: its tokens are checked on their own).
    int64_t model_vocab = vocab_size;
    if (const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
        model_vocab == 0 && embedding && embedding->dims.size() == 2)
        model_vocab = embedding->dims[1];
    if (model_vocab > 0 && static_cast<int64_t>(pieces.size()) != model_vocab)
        fail_input(file.path(), fmt::format("tokenizer.ggml.tokens holds {} tokens but the model's vocabulary has {}",
                                            pieces.size(), model_vocab));
    const std::vector<float> scores = file.has("tokenizer.ggml.scores") ? file.get_float_array("tokenizer.ggml.scores")
                                                                        : std::vector<float>(pieces.size(), 0.0f);
    // BOS, EOS, whether BOS is added and the dummy prefix from the metadata, with llama.cpp's
    // defaults for a SentencePiece vocabulary (BOS 1, EOS 2, both choices on); Gemma's file says
    // BOS 2, EOS 1 and no space prefix. The ids must be tokens (checked by the tokenizer).
    SentencePieceSpecials specials;
    auto id_of = [&](const std::string& key, int fallback) {
        const std::optional<uint64_t> id = file.get_uint(key);
        if (id && *id >= pieces.size() && pieces.size() >= 3)  // fewer tokens: the tokenizer says it needs 3
            fail_input(file.path(), fmt::format("{} {} is not one of its {} tokens", key, *id, pieces.size()));
        return id ? static_cast<int>(*id) : fallback;
    };
    specials.bos = id_of("tokenizer.ggml.bos_token_id", specials.bos);
    specials.eos = id_of("tokenizer.ggml.eos_token_id", specials.eos);
    specials.add_bos = file.get_bool("tokenizer.ggml.add_bos_token").value_or(specials.add_bos);
    specials.add_space_prefix = file.get_bool("tokenizer.ggml.add_space_prefix").value_or(specials.add_space_prefix);
    for (std::string& piece : pieces) piece = with_spaces(piece);
    return Llama2cTokenizer(file.path(), std::move(pieces), scores, specials);
}

}  // namespace attn_viz
