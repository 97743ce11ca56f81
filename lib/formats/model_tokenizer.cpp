#include "model_tokenizer.hpp"

#include <filesystem>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"
#include "llama_model_file.hpp"
#include "memory_budget.hpp"

namespace attn_viz {

namespace {

class Llama2cModelTokenizer : public ModelTokenizer {
public:
    explicit Llama2cModelTokenizer(Llama2cTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override { return tokenizer_.encode(text, /*bos=*/true, /*eos=*/false); }
    int64_t min_token_count(const std::string& text) const override { return tokenizer_.min_token_count(text, true, false); }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override { return tokenizer_.labels(ids); }
    int vocab_size() const override { return tokenizer_.vocab_size(); }
    int begin_id() const override { return Llama2cTokenizer::bos_id; }
    std::vector<int> end_ids() const override { return {Llama2cTokenizer::bos_id}; }  // as llama2.c's run.c stops

private:
    Llama2cTokenizer tokenizer_;
};

class HfModelTokenizer : public ModelTokenizer {
public:
    explicit HfModelTokenizer(HfTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override { return tokenizer_.encode(text, /*add_special_tokens=*/true); }
    int64_t min_token_count(const std::string&) const override { return 0; }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override { return tokenizer_.labels(ids); }
    int vocab_size() const override { return tokenizer_.vocab_size(); }
    int begin_id() const override { return tokenizer_.bos_id().value_or(-1); }
    std::vector<int> end_ids() const override {
        if (const auto eos = tokenizer_.eos_id()) return {*eos};
        return {};
    }

private:
    HfTokenizer tokenizer_;
};

// What HfTokenizer::load takes for `path`: a folder or tokenizer.json as it is, a legacy vocabulary
// file (vocab.json, merges.txt, encoder.json, vocab.bpe, vocab.txt) as its folder; "" otherwise.
std::string hf_tokenizer_location(const std::string& path) {
    const std::filesystem::path file(path);
    const std::string name = file.filename().string();
    for (const char* legacy : {"vocab.json", "merges.txt", "encoder.json", "vocab.bpe", "vocab.txt"})
        if (name == legacy) return file.parent_path().empty() ? std::string(".") : file.parent_path().string();
    if (std::filesystem::is_directory(path) || path.ends_with(".json")) return path;
    return "";
}

}  // namespace

std::vector<int> encode_within_context(const ModelTokenizer& tokenizer, const std::string& text, int64_t max_tokens, const std::string& where) {
    const std::string limit = "the model's sequence length " + std::to_string(max_tokens);
    if (const int64_t at_least = tokenizer.min_token_count(text); at_least > max_tokens)
        fail_input(where, "a text of " + std::to_string(text.size()) + " bytes is at least " + std::to_string(at_least) +
                              " tokens, more than " + limit);
    std::vector<int> ids = tokenizer.encode(text);
    if (static_cast<int64_t>(ids.size()) > max_tokens) fail_input(where, std::to_string(ids.size()) + " tokens exceed " + limit);
    return ids;
}

std::unique_ptr<ModelTokenizer> read_model_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                                     const LoadLimits& limits) {
    const std::string& path = tokenizer_path.empty() ? model_path : tokenizer_path;
    if (const std::string hf = hf_tokenizer_location(path); !hf.empty()) {
        auto tokenizer = std::make_unique<HfModelTokenizer>(HfTokenizer::load(hf, limits));
        // Fewer tokens than the model's embedding rows is common (Pythia pads its embedding); more is
        // a tokenizer of another model, whose ids would run past the embedding.
        if (vocab_size > 0 && tokenizer->vocab_size() > vocab_size)
            fail_input(hf, "its vocabulary of " + std::to_string(tokenizer->vocab_size()) + " tokens does not fit the model's " +
                               std::to_string(vocab_size) + " (" + model_path + "): a tokenizer of another model?");
        return tokenizer;
    }
    if (is_gguf_file(path)) {  // a GGUF file's own: SentencePiece "llama", byte-level BPE "gpt2" or WordPiece "bert"
        const GgufFile file(path, limits);
        const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
        if (model == "gpt2") return std::make_unique<HfModelTokenizer>(read_gguf_bpe_tokenizer(file, vocab_size));
        if (model == "bert") return std::make_unique<HfModelTokenizer>(read_gguf_wordpiece_tokenizer(file, vocab_size));
        return std::make_unique<Llama2cModelTokenizer>(read_gguf_llama_tokenizer(file, vocab_size));
    }
    return std::make_unique<Llama2cModelTokenizer>(read_llama_tokenizer(model_path, tokenizer_path, vocab_size, limits));
}

void check_tokenizing_memory(uint64_t text_bytes, uint64_t budget, const std::string& where) {
    check_memory_elements(text_bytes, tokenize_bytes_per_text_byte, budget,
                          where + ": tokenizing " + std::to_string(text_bytes) + " bytes of text");
}

}  // namespace attn_viz
