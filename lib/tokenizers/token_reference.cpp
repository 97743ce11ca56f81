#include "token_reference.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"

namespace attn_viz {
namespace {

// The ids whose label is `text`.
std::vector<int> labelled_ids(const ModelTokenizer& tokenizer, const std::string& text) {
    std::vector<int> all(static_cast<size_t>(tokenizer.vocab_size()));
    for (size_t id = 0; id < all.size(); ++id) all[id] = static_cast<int>(id);
    const std::vector<std::string> labels = tokenizer.labels(all);
    std::vector<int> found;
    for (size_t id = 0; id < labels.size(); ++id)
        if (labels[id] == text) found.push_back(static_cast<int>(id));
    return found;
}

// "410 \" \", 268 \" b\"": ids with their labels quoted as JSON strings.
std::string ids_with_labels(const ModelTokenizer& tokenizer, const std::vector<int>& ids) {
    const std::vector<std::string> labels = tokenizer.labels(ids);
    std::vector<std::string> tokens;
    for (size_t i = 0; i < ids.size(); ++i)
        tokens.push_back(fmt::format("{} {}", ids[i], nlohmann::json(labels[i]).dump()));
    return fmt::format("{}", fmt::join(tokens, ", "));
}

// The id of the quoted token text `reference`: the token labelled so (of several, the one the text
// encodes to), else the one token the text encodes to.
int text_id(const std::string& reference, const ModelTokenizer& tokenizer) {
    const nlohmann::json parsed = nlohmann::json::parse(reference, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_string())
        throw Error(ErrorKind::usage, fmt::format("{} is not a quoted token text like \" ball\"", reference));
    const std::string text = parsed.get<std::string>();
    const std::vector<int> labelled = labelled_ids(tokenizer, text);
    if (labelled.size() == 1) return labelled.front();
    const std::vector<int> ids = tokenizer.encode_without_special_tokens(text);
    std::vector<int> encoded_labelled;  // a byte token and a piece may show the same text: the one the text uses
    for (int id : labelled)
        if (std::find(ids.begin(), ids.end(), id) != ids.end()) encoded_labelled.push_back(id);
    if (encoded_labelled.size() == 1) return encoded_labelled.front();
    if (labelled.empty() && ids.size() == 1) return ids.front();
    if (!labelled.empty())
        throw Error(ErrorKind::usage, fmt::format("{} is the text of {} tokens ({}): name one by its id", reference,
                                                  labelled.size(), fmt::join(labelled, ", ")));
    throw Error(ErrorKind::usage, fmt::format("{} is {} tokens, not one: it encodes to {}", reference, ids.size(),
                                              ids.empty() ? std::string("nothing") : ids_with_labels(tokenizer, ids)));
}

// The id `reference` spells as a whole number.
int written_id(const std::string& reference) {
    if (reference.empty() || reference.size() > 10 || reference.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(reference) > INT32_MAX)
        throw Error(ErrorKind::usage,
                    fmt::format("'{}' is neither a token id nor a quoted token text like \" ball\"", reference));
    return static_cast<int>(std::stoll(reference));
}

}  // namespace

int token_reference_id(const std::string& reference, const ModelTokenizer* tokenizer, int64_t vocab_size) {
    const bool quoted = !reference.empty() && reference.front() == '"';
    if (quoted && tokenizer == nullptr)
        throw Error(ErrorKind::usage, fmt::format("{} names a token by its text, which needs a tokenizer", reference));
    const int id = quoted ? text_id(reference, *tokenizer) : written_id(reference);
    if (id >= vocab_size)
        throw Error(ErrorKind::usage,
                    fmt::format("token {} is outside the vocabulary (0..{})", reference, vocab_size - 1));
    return id;
}

std::vector<std::string> split_token_references(const std::string& text) {
    std::vector<std::string> parts(1);
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ',' && !quoted) {
            parts.emplace_back();
            continue;
        }
        if (c == ' ' && !quoted) continue;  // "3, 7" as "3,7"
        parts.back() += c;
        if (c == '"') quoted = !quoted;
        if (c == '\\' && quoted && i + 1 < text.size()) parts.back() += text[++i];
    }
    return parts;
}

std::string token_words(int id, const std::string& label) {
    return label.empty() ? fmt::format("token {}", id) : fmt::format("token {} '{}'", id, label);
}

}  // namespace attn_viz
