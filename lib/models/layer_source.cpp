#include "layer_source.hpp"

#include <fmt/format.h>

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

LayerWeights load_layer_weights(const LayerSource& source, const LoadLimits& limits) {
    if (ends_with(source.path, ".safetensors")) {
        if (source.layout.empty())
            throw Error(
                ErrorKind::usage,
                fmt::format("{}: a safetensors checkpoint needs a layout: torch-mha, bert, gpt2 or llama", source.path),
                Remedy::give_layout);
        return load_layer(source.path, source.layout, source.layer, source.options, limits);
    }
    if (!source.layout.empty())
        throw Error(ErrorKind::usage, fmt::format("{}: a layout ({}) applies to .safetensors checkpoints only",
                                                  source.path, source.layout));
    LayerWeights weights = read_weights_file(source.path, limits);
    if (source.options.causal) weights.causal = *source.options.causal;
    return weights;
}

SequenceInput load_sequence(const SequenceSource& source, int64_t d_model, const LoadLimits& limits) {
    if (!ends_with(source.path, ".npy") && !ends_with(source.path, ".safetensors")) {
        if (!source.tokens_path.empty() || !source.tensor_name.empty())
            throw Error(ErrorKind::usage,
                        fmt::format("{}: a tokens file and a tensor name apply to .npy/.safetensors embeddings only",
                                    source.path));
        return read_input_file(source.path, d_model, limits);
    }
    SequenceInput input;
    input.embeddings = read_embeddings(source.path, source.tensor_name, limits);
    if (input.embeddings.rank() != 2 || input.embeddings.dim(1) != d_model || input.embeddings.dim(0) == 0)
        fail_input(source.path, fmt::format("embeddings have shape {}, expected [T, {}] with T >= 1",
                                            shape_string(input.embeddings.shape), d_model));
    require_finite(input.embeddings, "embeddings", source.path, limits);
    const int64_t T = input.embeddings.dim(0);
    input.tokens = source.tokens_path.empty() ? index_labels(T) : read_tokens(source.tokens_path);
    if (static_cast<int64_t>(input.tokens.size()) != T)
        fail_input(source.tokens_path, fmt::format("{} tokens for {} embedding rows", input.tokens.size(), T));
    return input;
}

}  // namespace attn_viz
