#include "sequence_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <sys/stat.h>

#include "error.hpp"
#include "input_open.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"
#include "model_tokenizer.hpp"
#include "unicode_text.hpp"

namespace fs = std::filesystem;

namespace attn_viz {

std::string CorpusShard::text() const { return fmt::format("{}/{}", index, count); }

CorpusShard parse_corpus_shard(const std::string& text) {
    CorpusShard shard;
    const size_t slash = text.find('/');
    const auto whole = [&](size_t begin, size_t end, int64_t& value) {
        const char* first = text.data() + begin;
        const char* last = text.data() + end;
        const auto [ptr, ec] = std::from_chars(first, last, value);
        return first != last && ec == std::errc() && ptr == last;
    };
    if (slash == std::string::npos || !whole(0, slash, shard.index) || !whole(slash + 1, text.size(), shard.count) ||
        shard.count < 1 || shard.count > max_corpus_shards || shard.index < 0 || shard.index >= shard.count)
        throw Error(ErrorKind::usage,
                    fmt::format("'{}' is not a shard I/N with 0 <= I < N <= {} (e.g. 0/4)", text, max_corpus_shards));
    return shard;
}

namespace {

// The size of `file`, an entry of a corpus folder named *.json, which must be a regular file or a
// symbolic link to one: anything else is refused (Error io) naming the entry and what it is, so
// that no sequence of the corpus is left out without a word and a named pipe is never opened
// (which would wait for a writer).
int64_t corpus_file_size(const std::string& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode))
            throw Error(ErrorKind::io, fmt::format("{}: is {}, not a regular file", file, file_type_name(st.st_mode)));
        return static_cast<int64_t>(st.st_size);
    }
    const int error = errno;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(file, ec))) {
        if (error == ENOENT)
            throw Error(ErrorKind::io, fmt::format("{}: is a symbolic link to {}, which does not exist", file,
                                                   fs::read_symlink(file, ec).string()));
        throw Error(ErrorKind::io,
                    fmt::format("{}: is a symbolic link that cannot be followed: {}", file, std::strerror(error)));
    }
    throw Error(ErrorKind::io, fmt::format("{}: cannot read its type: {}", file, std::strerror(error)));
}

// A line that holds no sequence: only spaces, tabs and carriage returns, or nothing.
bool is_blank_line(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

// A text line of a corpus as the document {"text": line}, without a trailing "\r".
nlohmann::json text_document(std::string line, const std::string& where) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!is_valid_utf8(line)) fail_input(where, "is not UTF-8");
    return {{"text", std::move(line)}};
}

}  // namespace

CorpusDocuments::CorpusDocuments(const std::string& path, const LoadLimits& limits, CorpusShard shard,
                                 CorpusLines lines)
    : path_(path),
      limits_(limits),
      shard_(shard),
      text_lines_(lines == CorpusLines::json_or_text && !path.ends_with(".jsonl")) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        // Only the names decide what is listed: an entry is never followed or opened here.
        fs::directory_iterator entries(path, ec);
        for (; !ec && entries != fs::directory_iterator(); entries.increment(ec))
            if (entries->path().extension() == ".json") files_.push_back(entries->path().string());
        if (ec) throw Error(ErrorKind::io, fmt::format("{}: cannot list the folder: {}", path, ec.message()));
        std::sort(files_.begin(), files_.end());
        if (files_.empty()) fail_input(path, "folder holds no .json input files");
        for (const std::string& file : files_) {
            add_text(fs::path(file).filename().string());
            fingerprint_.add_int(corpus_file_size(file));
        }
        base_dir_ = path;
        return;
    }
    jsonl_ = std::make_unique<InputLines>(path, "corpus");
    base_dir_ = fs::path(path).parent_path().string();
}

CorpusDocuments::CorpusDocuments(const std::string& name, std::vector<std::string> lines, CorpusShard shard)
    : path_(name), shard_(shard), held_lines_(std::move(lines)) {}

bool CorpusDocuments::next_line(int64_t& number) {
    if (!jsonl_) {
        if (held_next_ == held_lines_.size()) return false;
        line_ = std::move(held_lines_[held_next_++]);
        number = static_cast<int64_t>(held_next_);
        return true;
    }
    // Every line, another shard's too, is held only up to what parsing it (JSON) or tokenizing it
    // (plain text) within the budget allows (the fingerprint needs all of it), so every shard
    // refuses the same over-long line.
    const uint64_t bytes_per_line_byte = text_lines_ ? tokenize_bytes_per_text_byte : json_bytes_per_text_byte;
    if (!jsonl_->next(line_, limits_.memory_budget / bytes_per_line_byte)) return false;
    number = jsonl_->line_number();
    return true;
}

void CorpusDocuments::add_text(const std::string& text) {
    fingerprint_.add_int(static_cast<int64_t>(text.size()));
    fingerprint_.add_bytes(text.data(), text.size());
}

bool CorpusDocuments::next(nlohmann::json& doc, std::string& where) {
    if (!files_.empty()) {
        while (sequences_passed_ < static_cast<int64_t>(files_.size())) {
            const int64_t sequence = sequences_passed_++;
            if (!shard_.holds(sequence)) continue;
            where = files_[static_cast<size_t>(sequence)];
            doc = read_json_file(where, "input sequence", limits_);
            return true;
        }
        return false;
    }
    int64_t number = 0;
    while (next_line(number)) {
        if (is_blank_line(line_)) continue;
        add_text(line_);
        if (!shard_.holds(sequences_passed_++)) continue;
        where = fmt::format("{}:{}", path_, number);
        doc = text_lines_ ? text_document(line_, where) : parse_json_text(line_, where);
        return true;
    }
    return false;
}

int64_t CorpusDocuments::count_sequences() const {
    int64_t passed = 0, held = 0;
    const auto count_line = [&](std::string_view line) {
        if (!is_blank_line(line) && shard_.holds(passed++)) ++held;
    };
    if (!files_.empty()) {
        for (size_t n = 0; n < files_.size(); ++n) held += shard_.holds(static_cast<int64_t>(n)) ? 1 : 0;
    } else if (!jsonl_) {
        for (const std::string& line : held_lines_) count_line(line);
    } else {
        const MappedFile file(path_, "corpus");
        const std::string_view text = file.text();
        for (size_t begin = 0; begin < text.size();) {
            const size_t end = std::min(text.find('\n', begin), text.size());
            count_line(text.substr(begin, end - begin));
            begin = end + 1;
        }
    }
    return held;
}

SequenceStream::SequenceStream(CorpusDocuments& documents, int64_t d_model, const LoadLimits& limits)
    : documents_(documents), d_model_(d_model), limits_(limits) {}

bool SequenceStream::next(SequenceInput& out, std::string& where) {
    nlohmann::json doc;
    if (!documents_.next(doc, where)) return false;
    out = parse_sequence(doc, d_model_, where, documents_.base_dir(), limits_);
    return true;
}

ModelSequence parse_model_sequence(const nlohmann::json& doc, const std::string& where, const SequenceKeys& keys) {
    const std::string text_key = keys.text, tokens_key = keys.tokens;
    const bool has_text = doc.is_object() && doc.contains(text_key),
               has_tokens = doc.is_object() && doc.contains(tokens_key);
    if (has_text == has_tokens)
        fail_input(where,
                   fmt::format("expected a JSON object with either \"{}\" (a string) or \"{}\" (a list of token ids)",
                               text_key, tokens_key));
    ModelSequence sequence;
    // "text_pair" (the second text of a pair, BERT-style) goes with the default keys' "text" only.
    const bool has_pair = text_key == "text" && doc.is_object() && doc.contains("text_pair");
    if (has_pair && !has_text)
        fail_input(where, "\"text_pair\" is the second text of a pair: it goes with \"text\", not with token ids");
    if (has_pair) {
        if (!doc["text_pair"].is_string() || doc["text_pair"].get_ref<const std::string&>().empty())
            fail_input(where, "\"text_pair\" must be a non-empty string");
        sequence.text_pair = doc["text_pair"].get<std::string>();
    }
    if (has_text) {
        if (!doc[text_key].is_string()) fail_input(where, fmt::format("\"{}\" must be a string", text_key));
        sequence.text = doc[text_key].get<std::string>();
        return sequence;
    }
    const nlohmann::json& tokens = doc[tokens_key];
    if (!tokens.is_array() || tokens.empty())
        fail_input(where, fmt::format("\"{}\" must be a non-empty list of token ids", tokens_key));
    for (size_t t = 0; t < tokens.size(); ++t) {
        const nlohmann::json& id = tokens[t];
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > std::numeric_limits<int>::max())
            fail_input(where, fmt::format("{}[{}] is not a token id (a whole number >= 0)", tokens_key, t));
        sequence.token_ids.push_back(static_cast<int>(id.get<int64_t>()));
    }
    return sequence;
}

namespace {

// The ids (and a pair's token types) of the sequence `keys` name in `doc`, as model_sequence_ids
// reads them.
EncodedText sequence_ids(const nlohmann::json& doc, const ModelTokenizer& tokenizer, int64_t max_tokens,
                         uint64_t memory_budget, const std::string& where, const SequenceKeys& keys, bool truncate) {
    ModelSequence sequence = parse_model_sequence(doc, where, keys);
    if (!sequence.text) return {std::move(sequence.token_ids), {}};
    check_tokenizing_memory(sequence.text->size() + (sequence.text_pair ? sequence.text_pair->size() : 0),
                            memory_budget, where);
    if (sequence.text_pair)
        return encode_pair_within_context(tokenizer, *sequence.text, *sequence.text_pair, max_tokens, where);
    return encode_for_context(tokenizer, *sequence.text, max_tokens, where, truncate);
}

bool has_target(const nlohmann::json& doc) {
    return doc.is_object() && (doc.contains(target_keys.text) || doc.contains(target_keys.tokens));
}

}  // namespace

EncodedText model_sequence_ids(const nlohmann::json& doc, const ModelTokenizer& tokenizer, int64_t max_tokens,
                               const LoadLimits& limits, const std::string& where) {
    if (has_target(doc))
        fail_input(
            where,
            "\"target_text\" and \"target_tokens\" are the decoder input of an encoder-decoder model (bart, t5); "
            "this model has no decoder input");
    return sequence_ids(doc, tokenizer, max_tokens, limits.memory_budget, where, {}, limits.truncate_texts);
}

SequencePair model_sequence_pair_ids(const nlohmann::json& doc, const ModelTokenizer& tokenizer, int64_t max_tokens,
                                     uint64_t memory_budget, const std::string& where) {
    if (!has_target(doc))
        fail_input(
            where,
            "an encoder-decoder's corpus line needs its decoder input too: {\"text\": ..., \"target_text\": ...} or "
            "{\"tokens\": [...], \"target_tokens\": [...]}");
    if (doc.contains("text_pair"))
        fail_input(where,
                   "\"text_pair\" is a BERT-style encoder's second text; an encoder-decoder takes \"text\" "
                   "and its decoder input");
    SequencePair pair;
    pair.source = sequence_ids(doc, tokenizer, max_tokens, memory_budget, where, {}, false).ids;
    pair.target = sequence_ids(doc, tokenizer, max_tokens, memory_budget, where, target_keys, false).ids;
    return pair;
}

}  // namespace attn_viz
