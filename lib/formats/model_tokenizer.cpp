#include "model_tokenizer.hpp"

#include <filesystem>

#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"
#include "llama_model_file.hpp"

namespace attn_viz {

namespace {

class Llama2cModelTokenizer : public ModelTokenizer {
public:
    explicit Llama2cModelTokenizer(Llama2cTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override { return tokenizer_.encode(text, /*bos=*/true, /*eos=*/false); }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override { return tokenizer_.labels(ids); }
    int begin_id() const override { return Llama2cTokenizer::bos_id; }
    std::vector<int> end_ids() const override { return {Llama2cTokenizer::bos_id}; }  // as llama2.c's run.c stops

private:
    Llama2cTokenizer tokenizer_;
};

class HfModelTokenizer : public ModelTokenizer {
public:
    explicit HfModelTokenizer(HfTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
    std::vector<int> encode(const std::string& text) const override { return tokenizer_.encode(text, /*add_special_tokens=*/true); }
    std::string decode(const std::vector<int>& ids) const override { return tokenizer_.decode(ids); }
    std::vector<std::string> labels(const std::vector<int>& ids) const override { return tokenizer_.labels(ids); }
    int begin_id() const override { return tokenizer_.bos_id().value_or(-1); }
    std::vector<int> end_ids() const override {
        if (const auto eos = tokenizer_.eos_id()) return {*eos};
        return {};
    }

private:
    HfTokenizer tokenizer_;
};

bool is_hf_tokenizer(const std::string& path) { return std::filesystem::is_directory(path) || path.ends_with(".json"); }

}  // namespace

std::unique_ptr<ModelTokenizer> read_model_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                                     const LoadLimits& limits) {
    const std::string& path = tokenizer_path.empty() ? model_path : tokenizer_path;
    if (is_hf_tokenizer(path)) return std::make_unique<HfModelTokenizer>(HfTokenizer::load(path, limits));
    return std::make_unique<Llama2cModelTokenizer>(read_llama_tokenizer(model_path, tokenizer_path, vocab_size, limits));
}

}  // namespace attn_viz
