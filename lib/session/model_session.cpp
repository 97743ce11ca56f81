#include "model_session.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "model_tokenizer_file.hpp"
#include "seq2seq_report.hpp"
#include "token_ids.hpp"

namespace attn_viz {

ModelSession::ModelSession(const std::string& path, const LoadLimits& limits, BlockLoading blocks)
    : limits_(limits), files_(open_model_files(path, limits)) {
    files_.blocks = blocks;
    encoder_decoder_ = files_.format == ModelFormat::hf_folder && is_seq2seq_model_type(files_.config.model_type);
}

void ModelSession::load(const std::string& tokenizer_path) {
    load_weights();
    load_tokenizer(tokenizer_path);
}

void ModelSession::load_weights() {
    backend_ = std::make_unique<OnednnBackend>();
    if (encoder_decoder_)
        seq2seq_ =
            std::make_unique<Seq2SeqModel>(*backend_, read_hf_seq2seq_folder(files_.path, files_.config, limits_));
    else
        model_ = open_whole_model(*backend_, files_, limits_);
}

void ModelSession::load_tokenizer(const std::string& tokenizer_path) {
    tokenizer_ = read_model_tokenizer(files_, tokenizer_path, vocab_size(), limits_);
}

WholeModel& ModelSession::model() const {
    if (!model_) refuse_encoder_decoder(files_.path, files_.config.model_type);
    return *model_;
}

Seq2SeqModel& ModelSession::seq2seq() const {
    if (!seq2seq_) throw Error(ErrorKind::usage, fmt::format("{}: not an encoder-decoder model", files_.path));
    return *seq2seq_;
}

int64_t ModelSession::vocab_size() const {
    return model_ ? model_->description().vocab_size : seq2seq().weights().config.blocks.vocab_size;
}

int64_t ModelSession::max_tokens() const {
    return model_ ? model_->description().max_tokens : seq2seq().weights().config.blocks.max_tokens;
}

std::string ModelSession::description() const {
    return model_ ? model_description(files_.path, model_->description())
                  : seq2seq_model_description(files_.path, seq2seq().weights().config);
}

nlohmann::json ModelSession::shape() const {
    if (seq2seq_) {
        const Seq2SeqConfig& c = seq2seq_->weights().config;
        return {{"architecture", c.blocks.architecture},  {"n_layers", c.blocks.n_layers},
                {"n_decoder_layers", c.n_decoder_layers}, {"n_heads", c.blocks.n_heads},
                {"n_kv_heads", c.blocks.n_kv_heads},      {"dim", c.blocks.d_model},
                {"head_dim", c.blocks.head_dim},          {"vocab_size", c.blocks.vocab_size},
                {"max_tokens", c.blocks.max_tokens}};
    }
    const ModelDescription& d = model().description();
    return {{"architecture", d.architecture},
            {"n_layers", d.n_layers},
            {"n_heads", d.n_heads},
            {"n_kv_heads", d.n_kv_heads},
            {"dim", d.dim},
            {"head_dim", d.head_dim},
            {"vocab_size", d.vocab_size},
            {"max_tokens", d.max_tokens}};
}

InductionRange ModelSession::induction_range() const {
    return {tokenizer_->first_ordinary_id(), std::min<int64_t>(vocab_size(), tokenizer_->vocab_size())};
}

namespace {

// `text`, the value of `name`, refused (Error usage) when empty.
const std::string& nonempty_text(const std::string& name, const std::string& text) {
    if (text.empty()) throw Error(ErrorKind::usage, name + ": '' is an empty text");
    return text;
}

}  // namespace

ModelInputIds ModelSession::encode(const ModelInput& input, const ModelInputNames& names) const {
    const int given = int(input.text.has_value()) + int(input.ids.has_value()) + int(input.induction > 0);
    if (given != 1) throw Error(ErrorKind::usage, fmt::format("give one of {} or {}", names.text, names.ids));
    if (input.text_pair && !input.text)
        throw Error(ErrorKind::usage,
                    fmt::format("{} is a pair's second text: give {} too", names.text_pair, names.text));
    ModelInputIds out;
    if (input.induction > 0) {
        const InductionRange range = induction_range();
        const std::vector<int64_t> repeated =
            repeated_random_tokens(input.induction, range.first, range.end, input.seed);
        if (tokenizer_->begin_id() >= 0) out.ids.push_back(tokenizer_->begin_id());
        out.ids.insert(out.ids.end(), repeated.begin(), repeated.end());
        return out;
    }
    if (input.ids) {
        out.ids = *input.ids;
        return out;
    }
    EncodedText encoded = input.text_pair
                              ? encode_pair_within_context(*tokenizer_, nonempty_text(names.text, *input.text),
                                                           nonempty_text(names.text_pair, *input.text_pair),
                                                           max_tokens(), names.text_pair)
                              : encode_for_context(*tokenizer_, nonempty_text(names.text, *input.text), max_tokens(),
                                                   names.text, input.truncate);
    out.ids = std::move(encoded.ids);
    // A model of one token type or none (RoPE, GPT-2) runs every token as type 0: as transformers,
    // whose tokenizers give such a model no token_type_ids.
    if (model_ && model_->description().token_types > 1) out.token_types = std::move(encoded.type_ids);
    out.sentence_b_start = encoded.second_start;
    out.original_tokens = encoded.original_tokens;
    return out;
}

void ModelSession::check_tokens(const std::vector<int>& ids, const std::string& what) const {
    check_model_tokens(ids, vocab_size(), max_tokens(), what);
}

nlohmann::json ModelSession::input_stats(const ModelInput& input, const ModelInputIds& ids) const {
    nlohmann::json stats = nlohmann::json::object();
    if (input.text_pair) {  // BertViz's sentence_b_start: the index of the pair's second text's first token
        stats["text_pair"] = *input.text_pair;
        stats["sentence_b_start"] = ids.sentence_b_start;
        if (!ids.token_types.empty()) stats["token_types"] = ids.token_types;  // as the model ran them
    }
    if (ids.original_tokens > 0)
        stats["truncated_input"] = {{"original_tokens", ids.original_tokens}, {"tokens", ids.ids.size()}};
    if (input.induction > 0) {
        const InductionRange range = induction_range();
        stats["induction_input"] = {{"length", input.induction},
                                    {"seed", input.seed},
                                    {"first_token_id", tokenizer_->begin_id()},
                                    {"token_ids_from", range.first},
                                    {"token_ids_to", range.end}};
    }
    return stats;
}

}  // namespace attn_viz
