// Tokenizing texts for display: inputs files, tables and JSON lines.
#include "tokenized_texts.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "input_lines.hpp"
#include "sequence_stream.hpp"
#include "unicode_text.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

// A string as a JSON literal: quoted, control characters escaped (labels are valid UTF-8 already).
std::string json_literal(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `tokenize()`, with an error it throws prefixed by the input's line ("c.jsonl:3: ...").
template <typename Tokenize>
TokenizedText at_line(const std::string& where, Tokenize tokenize) {
    try {
        return tokenize();
    } catch (const Error& e) {
        throw Error(e.kind(), fmt::format("{}: {}", where, e.what()), e.remedy());
    }
}

}  // namespace

TokenizedText tokenize_text(const ModelTokenizer& tokenizer, const std::string& text) {
    TokenizedText result{text, tokenizer.encode(text), {}};
    result.labels = tokenizer.labels(result.ids);
    return result;
}

TokenizedText tokenize_pair(const ModelTokenizer& tokenizer, const std::string& text, const std::string& text_pair) {
    EncodedText pair = tokenizer.encode_pair(text, text_pair);
    TokenizedText result{text, std::move(pair.ids), {}, text_pair, std::move(pair.type_ids), pair.second_start};
    result.labels = tokenizer.labels(result.ids);
    return result;
}

TokenizedText describe_ids(const ModelTokenizer& tokenizer, const std::vector<int>& ids) {
    std::vector<std::string> labels = tokenizer.labels(ids);  // checks every id first
    return {tokenizer.decode(ids), ids, std::move(labels)};
}

void for_each_tokenized_input(const std::string& path, const ModelTokenizer& tokenizer, const LoadLimits& limits,
                              const std::function<void(const TokenizedText&, const std::string& where)>& on_text) {
    CorpusDocuments documents(path, limits, {}, CorpusLines::json_or_text);
    nlohmann::json doc;
    std::string where;
    while (documents.next(doc, where)) {
        const ModelSequence sequence = parse_model_sequence(doc, where);
        if (sequence.text && !is_valid_utf8(*sequence.text)) fail_input(where, "\"text\" is not UTF-8");
        if (sequence.text_pair && !is_valid_utf8(*sequence.text_pair)) fail_input(where, "\"text_pair\" is not UTF-8");
        if (sequence.text)
            check_tokenizing_memory(sequence.text->size() + sequence.text_pair.value_or("").size(),
                                    limits.memory_budget, where);
        on_text(at_line(where,
                        [&] {
                            if (sequence.text_pair)
                                return tokenize_pair(tokenizer, *sequence.text, *sequence.text_pair);
                            return sequence.text ? tokenize_text(tokenizer, *sequence.text)
                                                 : describe_ids(tokenizer, sequence.token_ids);
                        }),
                where);
    }
}

std::string token_table(const TokenizedText& tokenized) {
    std::string table = fmt::format("{}", json_literal(escape_invalid_utf8(tokenized.text)));
    if (tokenized.text_pair)
        table += fmt::format(" + {} (from position {})", json_literal(escape_invalid_utf8(*tokenized.text_pair)),
                             tokenized.second_start);
    table += fmt::format(": {} tokens\n", tokenized.ids.size());
    const bool typed = !tokenized.type_ids.empty();
    table += fmt::format("{:>8} {:>10}{}  {}\n", "position", "id", typed ? "  type" : "", "token");
    for (size_t t = 0; t < tokenized.ids.size(); ++t)
        table +=
            fmt::format("{:8} {:10}{}  {}\n", t, tokenized.ids[t],
                        typed ? fmt::format("{:6}", tokenized.type_ids[t]) : "", json_literal(tokenized.labels[t]));
    return table;
}

nlohmann::json tokenized_json(const TokenizedText& tokenized) {
    nlohmann::json out = {
        {"text", escape_invalid_utf8(tokenized.text)}, {"ids", tokenized.ids}, {"tokens", tokenized.labels}};
    if (tokenized.text_pair) {
        out["text_pair"] = escape_invalid_utf8(*tokenized.text_pair);
        out["token_type_ids"] = tokenized.type_ids;
        out["sentence_b_start"] = tokenized.second_start;
    }
    return out;
}

}  // namespace attn_viz
