#include "model_tokenizer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"
#include "memory_budget.hpp"
#include "unicode_text.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

// The labels of `ids` by `tokenizer`, an id at or past its vocabulary as "<id N>" (a row of a
// padded embedding, as Pythia's, or a random model's prediction outside a small tokenizer).
template <typename Tokenizer>
std::vector<std::string> labels_within(const Tokenizer& tokenizer, const std::vector<int>& ids) {
    const int known = tokenizer.vocab_size();
    std::vector<int> inside;
    for (int id : ids)
        if (id < known) inside.push_back(id);
    const std::vector<std::string> inside_labels = tokenizer.labels(inside);
    std::vector<std::string> labels;
    size_t next = 0;
    for (int id : ids) labels.push_back(id < known ? inside_labels[next++] : fmt::format("<id {}>", id));
    return labels;
}

class Llama2cModelTokenizer : public ModelTokenizer {
public:
    explicit Llama2cModelTokenizer(Llama2cTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override {
        return tokenizer_.encode(text, adds_bos(), /*eos=*/false);
    }
    std::vector<int> encode_without_special_tokens(const std::string& text) const override {
        return tokenizer_.encode(text, /*bos=*/false, /*eos=*/false);
    }
    EncodedText encode_pair(const std::string&, const std::string&) const override {
        throw Error(ErrorKind::usage,
                    "a llama2.c tokenizer has no template for a text pair: join the two texts into one");
    }
    std::string pair_separator() const override { return {}; }
    int64_t min_token_count(const std::string& text) const override {
        return tokenizer_.min_token_count(text, adds_bos(), false);
    }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override {
        return labels_within(tokenizer_, ids);
    }
    int vocab_size() const override { return tokenizer_.vocab_size(); }
    int first_ordinary_id() const override { return tokenizer_.first_ordinary_id(); }
    int begin_id() const override { return tokenizer_.specials().bos; }
    std::vector<int> end_ids() const override { return {tokenizer_.specials().bos}; }  // as llama2.c's run.c stops
    std::vector<int> start_ids() const override { return {tokenizer_.specials().bos}; }
    std::vector<int> separator_ids() const override { return {}; }

private:
    bool adds_bos() const { return tokenizer_.specials().add_bos; }
    Llama2cTokenizer tokenizer_;
};

class HfModelTokenizer : public ModelTokenizer {
public:
    explicit HfModelTokenizer(HfTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override {
        return tokenizer_.encode(text, /*add_special_tokens=*/true);
    }
    std::vector<int> encode_without_special_tokens(const std::string& text) const override {
        return tokenizer_.encode(text, /*add_special_tokens=*/false);
    }
    EncodedText encode_pair(const std::string& first, const std::string& second) const override {
        return tokenizer_.encode_pair(first, second);
    }
    std::string pair_separator() const override { return tokenizer_.pair_separator(); }
    int64_t min_token_count(const std::string&) const override { return 0; }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override {
        return labels_within(tokenizer_, ids);
    }
    int vocab_size() const override { return tokenizer_.vocab_size(); }
    int first_ordinary_id() const override { return tokenizer_.first_ordinary_id(); }
    int begin_id() const override { return tokenizer_.bos_id().value_or(-1); }
    std::vector<int> end_ids() const override {
        if (const auto eos = tokenizer_.eos_id()) return {*eos};
        return {};
    }
    std::vector<int> start_ids() const override { return tokenizer_.start_ids(); }
    std::vector<int> separator_ids() const override { return tokenizer_.separator_ids(); }

private:
    HfTokenizer tokenizer_;
};

}  // namespace

bool is_punctuation_label(const std::string& label) {
    if (!is_valid_utf8(label)) return false;
    std::u32string text = decode_utf8(label);
    while (!text.empty() && is_unicode_whitespace(text.back())) text.pop_back();
    size_t begin = 0;
    while (begin < text.size() && is_unicode_whitespace(text[begin])) ++begin;
    if (text.compare(begin, 2, U"##") == 0 && text.size() > begin + 2) begin += 2;
    if (begin == text.size()) return false;
    return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(begin), text.end(),
                       [](char32_t c) { return is_punctuation(c); });
}

std::vector<TokenRole> token_roles(const ModelTokenizer& tokenizer, const std::vector<int>& ids) {
    const std::vector<int> starts = tokenizer.start_ids(), separators = tokenizer.separator_ids();
    const auto holds = [](const std::vector<int>& list, int id) {
        return std::find(list.begin(), list.end(), id) != list.end();
    };
    const std::vector<std::string> labels = tokenizer.labels(ids);
    std::vector<TokenRole> roles;
    for (size_t n = 0; n < ids.size(); ++n)
        roles.push_back(holds(separators, ids[n])         ? TokenRole::separator
                        : holds(starts, ids[n])           ? TokenRole::start
                        : is_punctuation_label(labels[n]) ? TokenRole::punctuation
                                                          : TokenRole::other);
    return roles;
}

std::unique_ptr<ModelTokenizer> as_model_tokenizer(Llama2cTokenizer tokenizer) {
    return std::make_unique<Llama2cModelTokenizer>(std::move(tokenizer));
}

std::unique_ptr<ModelTokenizer> as_model_tokenizer(HfTokenizer tokenizer) {
    return std::make_unique<HfModelTokenizer>(std::move(tokenizer));
}

namespace {

// `ids` (tokenizer.encode(text), more than `max_tokens`) cut to `max_tokens`: the special tokens
// the tokenizer put before and after the text's own ids kept, the text's last ids dropped.
std::vector<int> truncated_ids(const ModelTokenizer& tokenizer, const std::string& text, const std::vector<int>& ids,
                               int64_t max_tokens, const std::string& where) {
    const std::vector<int> own = tokenizer.encode_without_special_tokens(text);
    const auto found = std::search(ids.begin(), ids.end(), own.begin(), own.end());
    if (found == ids.end() || own.empty())
        fail_input(where, "cannot tell the tokenizer's special tokens from the text's, to cut the text");
    const int64_t lead = found - ids.begin(), trail = static_cast<int64_t>(ids.size() - own.size()) - lead;
    if (lead + trail >= max_tokens)
        fail_input(where, fmt::format("the tokenizer's {} special tokens leave no room for the text in the model's "
                                      "sequence length {}",
                                      lead + trail, max_tokens));
    std::vector<int> cut(ids.begin(), ids.begin() + (max_tokens - trail));
    cut.insert(cut.end(), ids.end() - trail, ids.end());
    return cut;
}

}  // namespace

EncodedText encode_for_context(const ModelTokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                               const std::string& where, bool truncate) {
    const bool refuse = !truncate;
    const std::string limit = fmt::format("the model's sequence length {}", max_tokens);
    if (const int64_t at_least = tokenizer.min_token_count(text); refuse && at_least > max_tokens)
        fail_input(where,
                   fmt::format("a text of {} bytes is at least {} tokens, more than {}", text.size(), at_least, limit),
                   Remedy::truncate_text);
    EncodedText encoded;
    encoded.ids = tokenizer.encode(text);
    const int64_t tokens = static_cast<int64_t>(encoded.ids.size());
    if (tokens <= max_tokens) return encoded;
    if (refuse) fail_input(where, fmt::format("{} tokens exceed {}", tokens, limit), Remedy::truncate_text);
    encoded.ids = truncated_ids(tokenizer, text, encoded.ids, max_tokens, where);
    encoded.original_tokens = tokens;
    return encoded;
}

std::vector<int> encode_within_context(const ModelTokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                                       const std::string& where) {
    return encode_for_context(tokenizer, text, max_tokens, where, /*truncate=*/false).ids;
}

EncodedText encode_pair_within_context(const ModelTokenizer& tokenizer, const std::string& first,
                                       const std::string& second, int64_t max_tokens, const std::string& where) {
    EncodedText pair;
    try {
        pair = tokenizer.encode_pair(first, second);
    } catch (const Error& e) {  // a tokenizer without pairs: said of what asked for one
        if (e.kind() != ErrorKind::usage) throw;
        throw Error(ErrorKind::usage, fmt::format("{}: {}", where, e.what()));
    }
    if (static_cast<int64_t>(pair.ids.size()) > max_tokens)
        fail_input(where, fmt::format("the pair's {} tokens exceed the model's sequence length {}", pair.ids.size(),
                                      max_tokens));
    return pair;
}

void check_tokenizing_memory(uint64_t text_bytes, uint64_t budget, const std::string& where) {
    check_memory_elements(text_bytes, tokenize_bytes_per_text_byte, budget,
                          fmt::format("{}: tokenizing {} bytes of text", where, text_bytes));
}

}  // namespace attn_viz
