#include "model_tokenizer_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_tokenizer.hpp"

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

// The Hugging Face tokenizer at `location` (a folder or tokenizer.json) for the model at
// `model_path` ("" when none), of `vocab_size` rows (0: any).
std::unique_ptr<ModelTokenizer> read_hf_tokenizer(const std::string& location, int64_t vocab_size,
                                                  const std::string& model_path, const LoadLimits& limits) {
    HfTokenizer tokenizer = HfTokenizer::load(location, limits);
    // Fewer tokens than the model's embedding rows is common (Pythia pads its embedding); more is
    // a tokenizer of another model, whose ids would run past the embedding.
    if (vocab_size > 0 && tokenizer.vocab_size() > vocab_size)
        fail_input(location,
                   fmt::format(
                       "its vocabulary of {} tokens does not fit the model's {}{}: a tokenizer of another model?",
                       tokenizer.vocab_size(), vocab_size, model_path.empty() ? "" : fmt::format(" ({})", model_path)));
    return as_model_tokenizer(std::move(tokenizer));
}

// A GGUF file's own tokenizer, by tokenizer.ggml.model: SentencePiece "llama" (the default),
// byte-level BPE "gpt2" or WordPiece "bert".
std::unique_ptr<ModelTokenizer> read_gguf_tokenizer(const GgufFile& file, int64_t vocab_size) {
    const std::string model = file.get_string("tokenizer.ggml.model").value_or("");
    if (model == "gpt2") return as_model_tokenizer(read_gguf_bpe_tokenizer(file, vocab_size));
    if (model == "bert") return as_model_tokenizer(read_gguf_wordpiece_tokenizer(file, vocab_size));
    return as_model_tokenizer(read_gguf_llama_tokenizer(file, vocab_size));
}

// read_tokenizer_file for the model at `model_path` ("" when none), named in messages.
std::unique_ptr<ModelTokenizer> read_tokenizer_for(const std::string& path, int64_t vocab_size,
                                                   const std::string& model_path, const LoadLimits& limits) {
    if (const std::string hf = hf_tokenizer_location(path); !hf.empty())
        return read_hf_tokenizer(hf, vocab_size, model_path, limits);
    if (is_gguf_file(path)) return read_gguf_tokenizer(GgufFile(path, limits), vocab_size);
    return as_model_tokenizer(Llama2cTokenizer(path, vocab_size));
}

}  // namespace

std::unique_ptr<ModelTokenizer> read_tokenizer_file(const std::string& path, int64_t vocab_size,
                                                    const LoadLimits& limits) {
    return read_tokenizer_for(path, vocab_size, "", limits);
}

std::unique_ptr<ModelTokenizer> read_model_tokenizer(const ModelFiles& model, const std::string& tokenizer_path,
                                                     int64_t vocab_size, const LoadLimits& limits) {
    if (!tokenizer_path.empty()) return read_tokenizer_for(tokenizer_path, vocab_size, model.path, limits);
    switch (model.format) {
        case ModelFormat::hf_folder:
            return read_hf_tokenizer(model.path, vocab_size, model.path, limits);
        case ModelFormat::gguf:
            return read_gguf_tokenizer(*model.gguf, vocab_size);
        case ModelFormat::llama2c:
            break;
    }
    fail_input(model.path,
               "is a llama2.c checkpoint, whose tokenizer is a separate file (tokenizer.bin) that was not given");
}

}  // namespace attn_viz
