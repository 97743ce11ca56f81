#include "checkpoint_tensors.hpp"

#include <fmt/format.h>

namespace attn_viz {

std::string find_prefix(const TensorSource& source, std::initializer_list<const char*> prefixes,
                        const std::string& probe) {
    for (const char* prefix : prefixes)
        if (source.contains(fmt::format("{}{}", prefix, probe))) return prefix;
    fail_input(source.path(), fmt::format("has no tensor \"{}{}\"", *prefixes.begin(), probe));
}

Tensor optional_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape) {
    return source.contains(name) ? load_of_shape(source, name, shape) : Tensor{};
}

Tensor linear_weight(const TensorSource& source, const std::string& name, int64_t in, int64_t out) {
    return transposed(load_of_shape(source, name, {out, in}));
}

NormWeights layer_norm(const TensorSource& source, const std::string& name, int64_t d) {
    const bool tensorflow_names =
        !source.contains(fmt::format("{}.weight", name)) && source.contains(fmt::format("{}.gamma", name));
    return {load_of_shape(source, fmt::format("{}{}", name, tensorflow_names ? ".gamma" : ".weight"), {d}),
            load_of_shape(source, fmt::format("{}{}", name, tensorflow_names ? ".beta" : ".bias"), {d})};
}

}  // namespace attn_viz
