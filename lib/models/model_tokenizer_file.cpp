#include "model_tokenizer_file.hpp"

#include <filesystem>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_tokenizer.hpp"
#include "llama_model_file.hpp"

namespace attn_viz {

namespace {

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

std::unique_ptr<ModelTokenizer> read_model_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                                     const LoadLimits& limits) {
    const std::string& path = tokenizer_path.empty() ? model_path : tokenizer_path;
    if (const std::string hf = hf_tokenizer_location(path); !hf.empty()) {
        auto tokenizer = as_model_tokenizer(HfTokenizer::load(hf, limits));
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
        if (model == "gpt2") return as_model_tokenizer(read_gguf_bpe_tokenizer(file, vocab_size));
        if (model == "bert") return as_model_tokenizer(read_gguf_wordpiece_tokenizer(file, vocab_size));
        return as_model_tokenizer(read_gguf_llama_tokenizer(file, vocab_size));
    }
    return as_model_tokenizer(read_llama_tokenizer(model_path, tokenizer_path, vocab_size, limits));
}

}  // namespace attn_viz
