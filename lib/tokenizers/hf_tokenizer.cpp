#include "hf_tokenizer.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <variant>

#include <fmt/format.h>

#include "bpe_model.hpp"
#include "byte_level.hpp"
#include "error.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"
#include "tokenizer_pipeline.hpp"
#include "unicode_text.hpp"
#include "unigram_model.hpp"
#include "utf8.hpp"
#include "wordpiece_model.hpp"

namespace attn_viz {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using TokenizerModel = std::variant<BpeModel, WordPieceModel, UnigramModel>;

struct AddedToken {
    std::string content;
    int id;
    bool special, lstrip, rstrip;
};

// A piece of the input text: plain text for the pipeline, or an added token found in it.
struct Segment {
    std::string text;
    size_t offset;
    int added_id;  // -1 for plain text
};

// One piece of a post-processor's pair template: a special token's ids, or the first or second
// text's, each with the token type it gives them.
struct PairPiece {
    enum class Kind { special, first, second } kind;
    std::vector<int> ids;  // the special token's (empty for a text)
    int type_id;
};

std::string quote_text(const std::string& text) {
    return fmt::format("\"{}\"", escape_invalid_utf8(text.substr(0, 60)));
}

}  // namespace

struct HfTokenizer::Impl {
    // `memory_budget`: what the normalized text is held to (parse_normalizer).
    Impl(std::string path_, std::string kind_, TokenizerModel model_, const json& normalizer_spec,
         const json& pre_tokenizer_spec, const json& decoder_spec, uint64_t memory_budget)
        : path(std::move(path_)),
          kind(std::move(kind_)),
          model(std::move(model_)),
          normalizer(parse_normalizer(normalizer_spec, path, memory_budget)),
          pre_tokenizer(parse_pre_tokenizer(pre_tokenizer_spec, path)),
          decoder(parse_decoder(decoder_spec, path)) {}

    std::string path, kind;
    TokenizerModel model;
    Normalizer normalizer;
    PreTokenizer pre_tokenizer;
    TokenDecoder decoder;
    std::vector<AddedToken> added;
    std::vector<int> prefix_ids, suffix_ids;  // what add_special_tokens puts around the text
    // The pair template (encode_pair); nullopt where the file has no post-processor that adds
    // ids: the texts one after the other, of types 0 and 1.
    std::optional<std::vector<PairPiece>> pair_template;
    // Why a text pair cannot be encoded (a post-processor without a usable pair template), or "":
    // a file whose pair template is missing or malformed still encodes single texts.
    std::string pair_refusal;
    std::vector<std::string> token_of_id;  // "" where no token has the id
    std::vector<bool> special_id;
    std::optional<int> bos, eos;

    const std::unordered_map<std::string, int>& vocab() const {
        return std::visit([](const auto& m) -> const std::unordered_map<std::string, int>& { return m.vocab(); },
                          model);
    }
    void encode_word(const std::string& word, std::vector<int>& ids) const {
        std::visit([&](const auto& m) { m.encode_word(word, ids); }, model);
    }
    std::optional<int> lookup(const std::string& token) const {
        for (const AddedToken& a : added)
            if (a.content == token) return a.id;
        const auto found = vocab().find(token);
        return found == vocab().end() ? std::nullopt : std::optional<int>(found->second);
    }
    const std::string& token(int id) const {
        if (id < 0 || id >= static_cast<int>(token_of_id.size()) || token_of_id[id].empty())
            fail_input(path, fmt::format("token id {} is not in the vocabulary", id));
        return token_of_id[id];
    }
    std::vector<Segment> split_on_added(const std::string& text) const;
    void index_ids();
};

// The text cut at every added token (leftmost, then longest match), honouring their lstrip and
// rstrip (the whitespace beside them joins the token).
std::vector<Segment> HfTokenizer::Impl::split_on_added(const std::string& text) const {
    std::vector<Segment> segments;
    size_t done = 0;
    while (done < text.size()) {
        size_t best_at = std::string::npos;
        const AddedToken* best = nullptr;
        for (const AddedToken& a : added) {
            if (a.content.empty()) continue;
            const size_t at = text.find(a.content, done);
            if (at != std::string::npos && (at < best_at || (at == best_at && a.content.size() > best->content.size())))
                best_at = at, best = &a;
        }
        if (!best) break;
        size_t begin = best_at, end = best_at + best->content.size();
        while (best->lstrip && begin > done && std::isspace(static_cast<unsigned char>(text[begin - 1]))) --begin;
        while (best->rstrip && end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        if (begin > done) segments.push_back({text.substr(done, begin - done), done, -1});
        segments.push_back({best->content, begin, best->id});
        done = end;
    }
    if (done < text.size()) segments.push_back({text.substr(done), done, -1});
    return segments;
}

// token_of_id and special_id from the vocabulary and the added tokens.
void HfTokenizer::Impl::index_ids() {
    const size_t entries = vocab().size() + added.size();
    auto place = [&](int id, const std::string& text, bool special) {
        // Ids are dense in every real tokenizer: bounding them by the count of entries bounds
        // the table by the file's size.
        if (id < 0 || static_cast<size_t>(id) >= entries)
            fail_input(path, fmt::format("token {} has id {}, outside 0..{} (the count of tokens)", quote_text(text),
                                         id, entries - 1));
        if (token_of_id.size() <= static_cast<size_t>(id)) token_of_id.resize(id + 1), special_id.resize(id + 1);
        if (!token_of_id[id].empty() && token_of_id[id] != text)
            fail_input(path,
                       fmt::format("tokens {} and {} share id {}", quote_text(token_of_id[id]), quote_text(text), id));
        token_of_id[id] = text;
        special_id[id] = special_id[id] || special;
    };
    for (const auto& [text, id] : vocab()) place(id, text, false);
    for (const AddedToken& a : added) place(a.id, a.content, a.special);
}

namespace {

std::unordered_map<std::string, int> parse_vocab(const json& vocab, const std::string& where) {
    if (!vocab.is_object()) fail_input(where, "\"vocab\" is not an object of token -> id");
    std::unordered_map<std::string, int> out;
    out.reserve(vocab.size());
    for (const auto& [text, id] : vocab.items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
            fail_input(where, fmt::format("the id of token {} is not an integer in 0..2^31-1", quote_text(text)));
        out.emplace(text, static_cast<int>(id.get<int64_t>()));
    }
    return out;
}

// "a b" strings (tokenizers < 0.20) or ["a", "b"] pairs.
std::vector<std::pair<std::string, std::string>> parse_merges(const json& merges, const std::string& where) {
    if (!merges.is_array()) fail_input(where, "\"merges\" is not a list");
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
        const json& merge = merges[i];
        if (merge.is_string()) {
            const std::string text = merge.get<std::string>();
            const size_t space = text.find(' ', 1);
            if (space == std::string::npos)
                fail_input(where, fmt::format("merge {} {} is not two tokens", i, quote_text(text)));
            out.emplace_back(text.substr(0, space), text.substr(space + 1));
        } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
            out.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
        } else {
            fail_input(where, fmt::format("merge {} is neither \"a b\" nor [\"a\", \"b\"]", i));
        }
    }
    return out;
}

std::optional<std::string> optional_string(const json& spec, const char* key) {
    const auto found = spec.find(key);
    if (found == spec.end() || found->is_null()) return std::nullopt;
    if (found->is_string()) return found->get<std::string>();
    if (found->is_object() && found->contains("content") && (*found)["content"].is_string())
        return (*found)["content"].get<std::string>();
    return std::nullopt;
}

// A Unigram vocabulary: [[piece, score], ...] in id order.
std::vector<std::pair<std::string, double>> parse_unigram_pieces(const json& vocab, const std::string& where) {
    if (!vocab.is_array()) fail_input(where, "\"vocab\" is not a list of [piece, score]");
    std::vector<std::pair<std::string, double>> pieces;
    pieces.reserve(vocab.size());
    for (const json& entry : vocab) {
        if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
            fail_input(where, fmt::format("vocabulary entry {} is not [piece, score]", pieces.size()));
        pieces.emplace_back(entry[0].get<std::string>(), entry[1].get<double>());
    }
    return pieces;
}

TokenizerModel parse_model(const json& spec, const std::string& where) {
    const std::string here = fmt::format("{}: model", where);
    if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string()) fail_input(here, "missing \"type\"");
    const std::string type = spec["type"].get<std::string>();
    if (!spec.contains("vocab")) fail_input(here, "missing \"vocab\"");
    if (type == "BPE") {
        for (const char* unsupported : {"continuing_subword_prefix", "end_of_word_suffix"})
            if (spec.contains(unsupported) && !spec[unsupported].is_null() && spec[unsupported] != "")
                fail_input(here, fmt::format("BPE with a {} is not supported", unsupported));
        std::unordered_map<std::string, int> vocab = parse_vocab(spec["vocab"], here);
        BpeModel::Options options;
        if (const auto unk = optional_string(spec, "unk_token")) {
            const auto found = vocab.find(*unk);
            if (found == vocab.end())
                fail_input(here, fmt::format("the unknown token {} is not in the vocabulary", quote_text(*unk)));
            options.unk_id = found->second;
        }
        options.fuse_unk = spec.value("fuse_unk", false);
        options.byte_fallback = spec.value("byte_fallback", false);
        options.ignore_merges = spec.value("ignore_merges", false);
        const json no_merges = json::array();
        return BpeModel(std::move(vocab), parse_merges(spec.contains("merges") ? spec["merges"] : no_merges, here),
                        options, here);
    }
    if (type == "WordPiece") {
        WordPieceModel::Options options;
        if (const auto prefix = optional_string(spec, "continuing_subword_prefix"))
            options.continuing_subword_prefix = *prefix;
        if (const auto limit = spec.find("max_input_chars_per_word"); limit != spec.end() && !limit->is_null())
            options.max_input_chars_per_word =
                static_cast<int>(json_integer_in(*limit, 1, INT32_MAX, here, "\"max_input_chars_per_word\""));
        return WordPieceModel(parse_vocab(spec["vocab"], here), optional_string(spec, "unk_token").value_or("[UNK]"),
                              options, here);
    }
    if (type == "Unigram") {
        UnigramModel::Options options;
        if (const auto unk = spec.find("unk_id"); unk != spec.end() && !unk->is_null())
            options.unk_id = static_cast<int>(json_integer_in(*unk, 0, INT32_MAX, here, "\"unk_id\""));
        options.byte_fallback = spec.value("byte_fallback", false);
        return UnigramModel(parse_unigram_pieces(spec["vocab"], here), options, here);
    }
    fail_input(here, fmt::format("unsupported model type {} (supported: BPE, WordPiece, Unigram)", quote_text(type)));
}

std::vector<AddedToken> parse_added_tokens(const json& list, const std::string& where) {
    std::vector<AddedToken> out;
    if (list.is_null()) return out;
    if (!list.is_array()) fail_input(where, "\"added_tokens\" is not a list");
    for (const json& a : list) {
        if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() || !a.contains("content") ||
            !a["content"].is_string())
            fail_input(where, "an added token lacks an integer \"id\" or a string \"content\"");
        const int64_t id = a["id"].get<int64_t>();
        if (id < 0 || id > INT32_MAX) fail_input(where, fmt::format("added token id {} is out of range", id));
        out.push_back({a["content"].get<std::string>(), static_cast<int>(id), a.value("special", false),
                       a.value("lstrip", false), a.value("rstrip", false)});
    }
    return out;
}

// The ids of the special token `name` in a TemplateProcessing's `specials` (errors name `here`).
std::vector<int> special_token_ids(const json& specials, const std::string& name, const std::string& here) {
    if (!specials.contains(name) || !specials[name].contains("ids") || !specials[name]["ids"].is_array())
        fail_input(here, fmt::format("the template's special token {} has no ids", quote_text(name)));
    std::vector<int> ids;
    for (const json& id : specials[name]["ids"]) {
        if (!id.is_number_integer())
            fail_input(here, fmt::format("special token {} has an id that is not an integer", quote_text(name)));
        ids.push_back(static_cast<int>(id.get<int64_t>()));
    }
    return ids;
}

// The pair template of a processor that puts `prefix` (type 0) before the first text and
// `suffix` after each, the second text's part of type `second_type` (BERT 1, RoBERTa 0).
std::vector<PairPiece> bert_pair(int cls, int sep, int second_type, bool doubled_separator) {
    std::vector<PairPiece> pair{
        {PairPiece::Kind::special, {cls}, 0}, {PairPiece::Kind::first, {}, 0}, {PairPiece::Kind::special, {sep}, 0}};
    if (doubled_separator) pair.push_back({PairPiece::Kind::special, {sep}, 0});
    pair.push_back({PairPiece::Kind::second, {}, second_type});
    pair.push_back({PairPiece::Kind::special, {sep}, second_type});
    return pair;
}

// A TemplateProcessing's "pair" list (the special tokens' ids from `specials`), or nullopt
// without one (transformers then refuses a pair: so does encode_pair).
std::optional<std::vector<PairPiece>> template_pair(const json& spec, const json& specials, const std::string& here) {
    if (!spec.contains("pair") || spec["pair"].is_null()) return std::nullopt;
    if (!spec["pair"].is_array()) fail_input(here, "\"pair\" is not a list");
    std::vector<PairPiece> pair;
    for (const json& item : spec["pair"]) {
        const bool text = item.contains("Sequence");
        const json& body = text ? item["Sequence"] : item.contains("SpecialToken") ? item["SpecialToken"] : json();
        if (!body.is_object() || !body.contains("id") || !body["id"].is_string())
            fail_input(here, "a piece of \"pair\" is neither a Sequence nor a SpecialToken");
        const int64_t type_id = body.value("type_id", int64_t{0});
        if (type_id < 0 || type_id > INT32_MAX) fail_input(here, fmt::format("\"pair\" has type_id {}", type_id));
        const std::string name = body["id"].get<std::string>();
        PairPiece piece{PairPiece::Kind::special, {}, static_cast<int>(type_id)};
        if (text) {
            if (name != "A" && name != "B")
                fail_input(here, fmt::format("\"pair\" names the sequence {}, not A or B", quote_text(name)));
            piece.kind = name == "A" ? PairPiece::Kind::first : PairPiece::Kind::second;
        } else {
            piece.ids = special_token_ids(specials, name, here);
        }
        pair.push_back(std::move(piece));
    }
    const auto count = [&](PairPiece::Kind kind) {
        return std::count_if(pair.begin(), pair.end(), [&](const PairPiece& p) { return p.kind == kind; });
    };
    if (count(PairPiece::Kind::first) != 1 || count(PairPiece::Kind::second) != 1)
        fail_input(here, "\"pair\" must hold sequence A once and sequence B once");
    return pair;
}

// The ids a post-processor puts before and after a single sequence, and its pair template (set
// once), or why pairs cannot be encoded (`pair_refusal`: a second processor that adds ids beside
// the first, no "pair", a malformed one).
void add_post_processor(const json& spec, const std::string& where, std::vector<int>& prefix, std::vector<int>& suffix,
                        std::optional<std::vector<PairPiece>>& pair, std::string& pair_refusal) {
    if (spec.is_null()) return;
    const std::string here = fmt::format("{}: post_processor", where);
    const std::string type = spec.value("type", std::string());
    auto pair_id = [&](const char* key) {
        const json& pair = spec.contains(key) ? spec[key] : json();
        if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_integer())
            fail_input(here, fmt::format("\"{}\" is not [token, id]", key));
        return static_cast<int>(pair[1].get<int64_t>());
    };
    // A processor that adds ids sets the pair template; two of them in one Sequence have no
    // template attn-viz composes, so pairs are refused for such a file (none has been seen).
    auto set_pair = [&](const std::function<std::optional<std::vector<PairPiece>>()>& template_of_step) {
        if (pair || !pair_refusal.empty()) {
            pair.reset();
            pair_refusal = here + ": two steps add ids, and attn-viz does not compose their pair templates";
            return;
        }
        try {
            pair = template_of_step();
        } catch (const Error& e) {  // a malformed "pair": refused when a pair is asked for
            pair_refusal = e.what();
        }
        if (!pair && pair_refusal.empty()) pair_refusal = here + ": no template for a text pair (no \"pair\")";
    };
    if (type == "Sequence") {
        for (const json& step : spec.value("processors", json::array()))
            add_post_processor(step, where, prefix, suffix, pair, pair_refusal);
    } else if (type == "BertProcessing" || type == "RobertaProcessing") {
        const int cls = pair_id("cls"), sep = pair_id("sep");
        prefix.push_back(cls);
        suffix.insert(suffix.begin(), sep);
        const bool roberta = type == "RobertaProcessing";
        set_pair([&] { return std::optional(bert_pair(cls, sep, roberta ? 0 : 1, roberta)); });
    } else if (type == "TemplateProcessing") {
        const json& single = spec.contains("single") ? spec["single"] : json();
        const json& specials = spec.contains("special_tokens") ? spec["special_tokens"] : json::object();
        if (!single.is_array()) fail_input(here, "\"single\" is not a list");
        set_pair([&] { return template_pair(spec, specials, here); });
        bool after_sequence = false;
        for (const json& item : single) {
            if (item.contains("Sequence")) {
                after_sequence = true;
                continue;
            }
            const std::string name =
                item.contains("SpecialToken") ? item["SpecialToken"].value("id", std::string()) : std::string();
            const std::vector<int> ids = special_token_ids(specials, name, here);
            std::vector<int>& into = after_sequence ? suffix : prefix;
            into.insert(into.end(), ids.begin(), ids.end());
        }
    } else if (type != "ByteLevel") {
        fail_input(here,
                   fmt::format("unsupported type {} (supported: TemplateProcessing, BertProcessing, RobertaProcessing, "
                               "ByteLevel, Sequence)",
                               quote_text(type)));
    }
}

// Whether `spec` is a step of `type`, or a Sequence (its steps under `list_key`) holding one.
bool has_step_type(const json& spec, const std::string& type, const char* list_key) {
    if (!spec.is_object()) return false;
    if (spec.value("type", std::string()) == type) return true;
    if (!spec.contains(list_key) || !spec[list_key].is_array()) return false;
    for (const json& step : spec[list_key])
        if (step.is_object() && step.value("type", std::string()) == type) return true;
    return false;
}

json read_optional_json(const fs::path& path, const LoadLimits& limits) {
    return fs::exists(path) ? read_json_file(path.string(), "tokenizer configuration", limits) : json::object();
}

// Non-empty lines of a text file.
std::vector<std::string> read_lines(const std::string& path) {
    MappedFile file(path, "tokenizer");
    std::vector<std::string> lines;
    std::string_view text = file.text();
    while (!text.empty()) {
        const size_t end = std::min(text.find('\n'), text.size());
        std::string line(text.substr(0, end));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return lines;
}

// The pipeline of a tokenizer.json document (read from `path`), as HF's tokenizers library runs it.
std::unique_ptr<HfTokenizer::Impl> from_tokenizer_doc(const json& doc, const std::string& path,
                                                      uint64_t memory_budget) {
    if (!doc.is_object() || !doc.contains("model")) fail_input(path, "not a tokenizer.json (no \"model\")");
    auto step = [&](const char* key) { return doc.contains(key) ? doc[key] : json(); };
    TokenizerModel model = parse_model(doc["model"], path);
    const std::string kind = std::holds_alternative<WordPieceModel>(model)                        ? "WordPiece"
                             : std::holds_alternative<UnigramModel>(model)                        ? "Unigram"
                             : has_step_type(step("pre_tokenizer"), "ByteLevel", "pretokenizers") ? "byte-level BPE"
                                                                                                  : "BPE";
    auto impl = std::make_unique<HfTokenizer::Impl>(path, kind, std::move(model), step("normalizer"),
                                                    step("pre_tokenizer"), step("decoder"), memory_budget);
    impl->added = parse_added_tokens(step("added_tokens"), path);
    add_post_processor(step("post_processor"), path, impl->prefix_ids, impl->suffix_ids, impl->pair_template,
                       impl->pair_refusal);
    return impl;
}

std::unique_ptr<HfTokenizer::Impl> from_tokenizer_json(const std::string& path, const LoadLimits& limits) {
    return from_tokenizer_doc(read_json_file(path, "tokenizer", limits), path, limits.memory_budget);
}

// GPT-2's own files: vocab.json (or encoder.json) and merges.txt (or vocab.bpe).
std::unique_ptr<HfTokenizer::Impl> from_gpt2_files(const std::string& vocab_path, const std::string& merges_path,
                                                   const LoadLimits& limits) {
    std::unordered_map<std::string, int> vocab =
        parse_vocab(read_json_file(vocab_path, "tokenizer", limits), vocab_path);
    std::vector<std::string> lines = read_lines(merges_path);
    if (!lines.empty() && lines[0].rfind("#version", 0) == 0) lines.erase(lines.begin());
    std::erase_if(lines, [](const std::string& line) { return line.empty(); });
    const auto merges = parse_merges(json(lines), merges_path);
    std::vector<AddedToken> added;
    if (const auto eot = vocab.find("<|endoftext|>"); eot != vocab.end())
        added.push_back({eot->first, eot->second, true, false, false});
    auto impl = std::make_unique<HfTokenizer::Impl>(
        vocab_path, "byte-level BPE", BpeModel(std::move(vocab), merges, {}, merges_path), json(),
        json{{"type", "ByteLevel"}, {"add_prefix_space", false}}, json{{"type", "ByteLevel"}}, limits.memory_budget);
    impl->added = std::move(added);
    return impl;
}

// BERT's vocab.txt (id = line number), with the BertTokenizer defaults.
std::unique_ptr<HfTokenizer::Impl> from_vocab_txt(const std::string& path, bool lowercase, uint64_t memory_budget) {
    std::unordered_map<std::string, int> vocab;
    const std::vector<std::string> lines = read_lines(path);
    for (size_t i = 0; i < lines.size(); ++i) vocab.emplace(lines[i], static_cast<int>(i));
    std::vector<AddedToken> added;
    for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
        if (const auto found = vocab.find(special); found != vocab.end())
            added.push_back({found->first, found->second, true, false, false});
    auto impl = std::make_unique<HfTokenizer::Impl>(
        path, "WordPiece", WordPieceModel(std::move(vocab), "[UNK]", {}, path),
        json{{"type", "BertNormalizer"}, {"lowercase", lowercase}}, json{{"type", "BertPreTokenizer"}},
        json{{"type", "WordPiece"}}, memory_budget);
    impl->added = std::move(added);
    for (const auto& [ids, token] : {std::pair{&impl->prefix_ids, "[CLS]"}, std::pair{&impl->suffix_ids, "[SEP]"}})
        if (const auto id = impl->lookup(token)) ids->push_back(*id);
    if (impl->prefix_ids.size() == 1 && impl->suffix_ids.size() == 1)
        impl->pair_template = bert_pair(impl->prefix_ids[0], impl->suffix_ids[0], 1, false);
    return impl;
}

// tokenizer_config.json (named `where` in errors): the BOS/EOS tokens, and add_bos_token /
// add_eos_token where it says. A special token it names must be in the vocabulary and a flag must
// be a boolean: neither is dropped silently.
void apply_tokenizer_config(HfTokenizer::Impl& impl, const json& config, const std::string& where) {
    auto special = [&](const char* key, const char* fallback) -> std::optional<int> {
        const auto found = config.find(key);
        if (found == config.end() || found->is_null()) return impl.lookup(fallback);
        const std::optional<std::string> name = optional_string(config, key);
        if (!name) fail_input(where, fmt::format("\"{}\" must be a token (a string or {{\"content\": ...}})", key));
        const std::optional<int> id = impl.lookup(*name);
        if (!id) fail_input(where, fmt::format("\"{}\" {} is not a token of the vocabulary", key, quote_text(*name)));
        return id;
    };
    auto flag = [&](const char* key) -> std::optional<bool> {
        const auto found = config.find(key);
        if (found == config.end() || found->is_null()) return std::nullopt;
        if (!found->is_boolean())
            fail_input(where, fmt::format("\"{}\" must be true or false, not {}", key, found->dump()));
        return found->get<bool>();
    };
    impl.bos = special("bos_token", impl.kind == "byte-level BPE" ? "<|endoftext|>" : "<s>");
    impl.eos = special("eos_token", impl.kind == "byte-level BPE" ? "<|endoftext|>" : "</s>");
    // transformers' decode removes spaces before punctuation when the folder asks for it (T5 does);
    // a decoder that cleans up on its own (WordPiece) keeps doing so when the folder says false.
    if (flag("clean_up_tokenization_spaces") == true) impl.decoder.cleanup = true;
    const std::optional<bool> add_bos = flag("add_bos_token"), add_eos = flag("add_eos_token");
    if (add_bos) {
        impl.prefix_ids.clear();
        if (*add_bos && impl.bos) impl.prefix_ids.push_back(*impl.bos);
    }
    if (add_eos) {
        impl.suffix_ids.clear();
        if (*add_eos && impl.eos) impl.suffix_ids.push_back(*impl.eos);
    }
    if (add_bos || add_eos) {  // transformers' Llama template: each text between BOS and EOS, B's part of type 1
        impl.pair_refusal.clear();
        impl.pair_template.emplace();
        for (int type : {0, 1}) {
            impl.pair_template->push_back({PairPiece::Kind::special, impl.prefix_ids, type});
            impl.pair_template->push_back({type ? PairPiece::Kind::second : PairPiece::Kind::first, {}, type});
            impl.pair_template->push_back({PairPiece::Kind::special, impl.suffix_ids, type});
        }
    }
}

// The pipeline built by `make` (a JSON type error anywhere is the file's fault), its ids indexed
// and checked, then the configuration applied.
template <typename Make>
std::unique_ptr<HfTokenizer::Impl> checked_pipeline(const std::string& where, const json& config,
                                                    const std::string& config_where, Make make) {
    std::unique_ptr<HfTokenizer::Impl> impl;
    try {
        impl = make();
    } catch (const nlohmann::json::exception& e) {  // a value of the wrong JSON type somewhere
        fail_input(where, fmt::format("malformed tokenizer: {}", e.what()));
    }
    impl->index_ids();
    apply_tokenizer_config(*impl, config, config_where);
    // What add_special_tokens puts around a text must be tokens of the vocabulary.
    const size_t vocab_size = impl->token_of_id.size();
    std::vector<const std::vector<int>*> added_ids{&impl->prefix_ids, &impl->suffix_ids};
    if (impl->pair_template)
        for (const PairPiece& piece : *impl->pair_template) added_ids.push_back(&piece.ids);
    for (const std::vector<int>* ids : added_ids)
        for (int id : *ids)
            if (id < 0 || static_cast<size_t>(id) >= vocab_size)
                fail_input(
                    where,
                    fmt::format("the special token id {} the post-processor adds is not in the vocabulary (ids 0..{})",
                                id, static_cast<int64_t>(vocab_size) - 1));
    return impl;
}

// The tokenizer of a folder (tokenizer.json first, then the legacy pairs) or of a tokenizer.json.
std::unique_ptr<HfTokenizer::Impl> from_files(const std::string& path, bool folder, const fs::path& dir,
                                              const json& config, const LoadLimits& limits) {
    auto beside = [&](const char* name) { return fs::exists(dir / name) ? (dir / name).string() : std::string(); };
    if (!folder) return from_tokenizer_json(path, limits);
    if (!beside("tokenizer.json").empty()) return from_tokenizer_json(beside("tokenizer.json"), limits);
    if (!beside("vocab.json").empty() && !beside("merges.txt").empty())
        return from_gpt2_files(beside("vocab.json"), beside("merges.txt"), limits);
    if (!beside("encoder.json").empty() && !beside("vocab.bpe").empty())
        return from_gpt2_files(beside("encoder.json"), beside("vocab.bpe"), limits);
    if (!beside("vocab.txt").empty())
        return from_vocab_txt(beside("vocab.txt"), config.value("do_lower_case", true), limits.memory_budget);
    fail_input(
        path,
        "no tokenizer here: expected tokenizer.json, vocab.json + merges.txt, encoder.json + vocab.bpe or vocab.txt");
}

}  // namespace

HfTokenizer::HfTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HfTokenizer::~HfTokenizer() = default;
HfTokenizer::HfTokenizer(HfTokenizer&&) noexcept = default;
HfTokenizer& HfTokenizer::operator=(HfTokenizer&&) noexcept = default;

HfTokenizer HfTokenizer::load(const std::string& path, const LoadLimits& limits) {
    // Step 1: which files: tokenizer.json first, then the legacy pairs.
    const bool folder = fs::is_directory(path);
    const fs::path dir = folder ? fs::path(path) : fs::path(path).parent_path();
    const json config = read_optional_json(dir / "tokenizer_config.json", limits);
    // Step 2: ids indexed and checked, then the folder's configuration.
    return HfTokenizer(checked_pipeline(path, config, (dir / "tokenizer_config.json").string(),
                                        [&] { return from_files(path, folder, dir, config, limits); }));
}

HfTokenizer HfTokenizer::from_json(const nlohmann::json& tokenizer, const nlohmann::json& config,
                                   const std::string& where) {
    return HfTokenizer(checked_pipeline(where, config, where,
                                        [&] { return from_tokenizer_doc(tokenizer, where, default_memory_budget()); }));
}

const std::string& HfTokenizer::kind() const { return impl_->kind; }
int HfTokenizer::vocab_size() const { return static_cast<int>(impl_->token_of_id.size()); }
std::optional<int> HfTokenizer::bos_id() const { return impl_->bos; }
std::optional<int> HfTokenizer::eos_id() const { return impl_->eos; }
int HfTokenizer::first_ordinary_id() const {
    int id = 0;
    while (id < vocab_size() && (impl_->special_id[static_cast<size_t>(id)] ||
                                 byte_fallback_byte(impl_->token_of_id[static_cast<size_t>(id)])))
        ++id;
    return id;
}
std::optional<int> HfTokenizer::token_id(const std::string& token) const { return impl_->lookup(token); }

std::vector<int> HfTokenizer::encode(const std::string& text, bool add_special_tokens) const {
    if (!is_valid_utf8(text)) fail_input(impl_->path, "the text to encode is not UTF-8");
    std::vector<int> ids;
    if (add_special_tokens) ids = impl_->prefix_ids;
    // Added tokens are cut out first; each plain segment is normalized, split into words and
    // encoded word by word.
    for (const Segment& segment : impl_->split_on_added(text)) {
        if (segment.added_id >= 0) {
            ids.push_back(segment.added_id);
            continue;
        }
        for (const std::string& word : impl_->pre_tokenizer({impl_->normalizer(segment.text)}, segment.offset == 0))
            impl_->encode_word(word, ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), impl_->suffix_ids.begin(), impl_->suffix_ids.end());
    return ids;
}

EncodedText HfTokenizer::encode_pair(const std::string& first, const std::string& second) const {
    if (!impl_->pair_refusal.empty()) throw Error(ErrorKind::bad_input, impl_->pair_refusal);
    const std::vector<int> first_ids = encode(first, false), second_ids = encode(second, false);
    EncodedText out;
    auto add = [&](const std::vector<int>& ids, int type_id) {
        out.ids.insert(out.ids.end(), ids.begin(), ids.end());
        out.type_ids.insert(out.type_ids.end(), ids.size(), type_id);
    };
    if (!impl_->pair_template) {
        add(first_ids, 0);
        out.second_start = static_cast<int64_t>(out.ids.size());
        add(second_ids, 1);
        return out;
    }
    for (const PairPiece& piece : *impl_->pair_template) {
        if (piece.kind == PairPiece::Kind::second) out.second_start = static_cast<int64_t>(out.ids.size());
        add(piece.kind == PairPiece::Kind::first    ? first_ids
            : piece.kind == PairPiece::Kind::second ? second_ids
                                                    : piece.ids,
            piece.type_id);
    }
    return out;
}

std::string HfTokenizer::pair_separator() const {
    if (!impl_->pair_template) return {};
    const auto& pieces = *impl_->pair_template;
    for (size_t i = 0; i + 1 < pieces.size(); ++i)
        if (pieces[i].kind == PairPiece::Kind::first && pieces[i + 1].kind == PairPiece::Kind::special &&
            !pieces[i + 1].ids.empty())
            return impl_->token(pieces[i + 1].ids[0]);
    return {};
}

std::vector<int> HfTokenizer::start_ids() const { return impl_->prefix_ids; }

std::vector<int> HfTokenizer::separator_ids() const {
    std::vector<int> ids = impl_->suffix_ids;
    if (impl_->pair_template)
        for (size_t i = 1; i < impl_->pair_template->size(); ++i)
            if ((*impl_->pair_template)[i].kind == PairPiece::Kind::special)
                ids.insert(ids.end(), (*impl_->pair_template)[i].ids.begin(), (*impl_->pair_template)[i].ids.end());
    return ids;
}

std::string HfTokenizer::decode(const std::vector<int>& ids) const {
    std::vector<std::string> tokens;
    for (int id : ids) {
        const std::string& token = impl_->token(id);
        if (!impl_->special_id[id]) tokens.push_back(token);
    }
    return escape_invalid_utf8(impl_->decoder.decode(tokens));
}

std::vector<std::string> HfTokenizer::labels(const std::vector<int>& ids) const {
    std::vector<std::string> out;
    for (int id : ids) {
        const std::string& token = impl_->token(id);
        out.push_back(escape_invalid_utf8(impl_->special_id[id] ? token : impl_->decoder.token_text(token)));
    }
    return out;
}

}  // namespace attn_viz
