#include "layer_source.hpp"

#include "error.hpp"
#include "finite.hpp"
#include "token_file.hpp"
#include "weights_file.hpp"

namespace attn_viz {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

LayerWeights load_layer_weights(const LayerSource& source) {
    if (ends_with(source.path, ".safetensors")) {
        if (source.layout.empty())
            throw Error(ErrorKind::usage, source.path + ": a safetensors checkpoint needs --layout (torch-mha, bert, gpt2 or llama)");
        return load_layer(source.path, source.layout, source.layer, source.options);
    }
    if (!source.layout.empty())
        throw Error(ErrorKind::usage, "--layout applies to .safetensors checkpoints, not " + source.path);
    LayerWeights weights = read_weights_file(source.path);
    if (source.options.causal) weights.causal = *source.options.causal;
    return weights;
}

SequenceInput load_sequence(const SequenceSource& source, int64_t d_model) {
    if (!ends_with(source.path, ".npy") && !ends_with(source.path, ".safetensors")) {
        if (!source.tokens_path.empty() || !source.tensor_name.empty())
            throw Error(ErrorKind::usage, "--tokens and --input-tensor apply to .npy/.safetensors embeddings, not " + source.path);
        return read_input_file(source.path, d_model);
    }
    SequenceInput input;
    input.embeddings = read_embeddings(source.path, source.tensor_name);
    if (input.embeddings.rank() != 2 || input.embeddings.dim(1) != d_model || input.embeddings.dim(0) == 0)
        fail_input(source.path, "embeddings have shape " + shape_string(input.embeddings.shape) + ", expected [T, " +
                                    std::to_string(d_model) + "] with T >= 1");
    require_finite(input.embeddings, "embeddings", source.path);
    const int64_t T = input.embeddings.dim(0);
    input.tokens = source.tokens_path.empty() ? index_labels(T) : read_tokens(source.tokens_path);
    if (static_cast<int64_t>(input.tokens.size()) != T)
        fail_input(source.tokens_path, std::to_string(input.tokens.size()) + " tokens for " + std::to_string(T) + " embedding rows");
    return input;
}

}  // namespace attn_viz
