// Opening any supported model path as its whole model, and greedy decoding over any decoder.
#include "whole_model.hpp"

#include <algorithm>
#include <filesystem>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_transformer.hpp"
#include "hf_config.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "llama_model.hpp"
#include "llama_model_file.hpp"
#include "transformer_model.hpp"

namespace attn_viz {

std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const std::string& path, const LoadLimits& limits) {
    if (std::filesystem::is_directory(path)) {
        const std::string model_type = read_hf_config((std::filesystem::path(path) / "config.json").string()).model_type;
        const std::vector<std::string>& llama_types = hf_llama_model_types();
        // Every other type goes to read_hf_transformer_folder, whose error lists all supported ones.
        if (std::find(llama_types.begin(), llama_types.end(), model_type) == llama_types.end())
            return std::make_unique<TransformerModel>(backend, read_hf_transformer_folder(path, limits));
    } else if (is_gguf_file(path)) {
        // GGUF gpt2, gptneox and bert files read whole into the folders' TransformerWeights; llama
        // streams its blocks from the same parsed file.
        const auto file = std::make_shared<const GgufFile>(path, limits);
        const std::vector<std::string>& transformer_types = gguf_transformer_architectures();
        const std::string architecture = file->get_string("general.architecture").value_or("");
        if (std::find(transformer_types.begin(), transformer_types.end(), architecture) != transformer_types.end())
            return std::make_unique<TransformerModel>(backend, read_gguf_transformer(*file));
        return std::make_unique<LlamaModel>(backend, read_gguf_llama_streaming(file));
    }
    return std::make_unique<LlamaModel>(backend, read_llama_model(path, limits));
}

ModelRun WholeModel::run(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms, const StepCallback& on_layer) {
    std::vector<LayerResult> layers;
    std::vector<Tensor> residual;
    ModelRun run = run_blocks(tokens, with_contributions, with_value_norms,
                              [&](size_t l, LayerResult& result, Tensor& entering, const LayerWeights&) {
                                  layers.push_back(std::move(result));
                                  residual.push_back(std::move(entering));
                                  if (on_layer) on_layer(static_cast<int64_t>(l) + 1, description().n_layers);
                              });
    run.layers = std::move(layers);
    run.residual = std::move(residual);
    return run;
}

std::vector<int> greedy_generate(WholeModel& model, const std::vector<int>& prompt, int steps, const StepCallback& on_token,
                                 const std::vector<int>& end_ids, int64_t choices) {
    if (prompt.empty()) fail_input("prompt", "greedy generation needs at least one prompt token (e.g. BOS)");
    const int64_t seq_len = model.description().max_tokens, vocab = model.description().vocab_size;
    if (!model.has_logits())
        throw Error(ErrorKind::internal, "greedy_generate: a " + model.description().architecture + " model has no next-token logits");
    if (static_cast<int64_t>(prompt.size()) > seq_len)
        fail_input("prompt", std::to_string(prompt.size()) + " tokens exceed the model's sequence length " + std::to_string(seq_len));
    const int64_t length = std::min<int64_t>(seq_len, static_cast<int64_t>(prompt.size()) + std::max(steps, 0));

    // Every step runs the full forward over one fixed length: positions past the current one hold
    // filler ids that the causal mask hides from earlier positions, so the logits at the current
    // position are exact while oneDNN reuses one set of primitives instead of compiling a new
    // shape per step.
    std::vector<int> sequence = prompt;
    std::vector<int> padded(static_cast<size_t>(length), prompt.back());
    std::copy(prompt.begin(), prompt.end(), padded.begin());
    while (static_cast<int64_t>(sequence.size()) < length) {
        const ModelRun run = model.run(padded, false);
        const float* row = run.logits.ptr() + (static_cast<int64_t>(sequence.size()) - 1) * vocab;
        const int next = static_cast<int>(std::max_element(row, row + (choices > 0 ? std::min(choices, vocab) : vocab)) - row);
        if (std::find(end_ids.begin(), end_ids.end(), next) != end_ids.end()) break;
        padded[sequence.size()] = next;
        sequence.push_back(next);
        if (on_token) on_token(static_cast<int64_t>(sequence.size() - prompt.size()), length - static_cast<int64_t>(prompt.size()));
    }
    return sequence;
}

}  // namespace attn_viz
