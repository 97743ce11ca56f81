#include "checkpoint_tensors.hpp"

namespace attn_viz {

std::string find_prefix(const TensorSource& source, std::initializer_list<const char*> prefixes,
                        const std::string& probe) {
    for (const char* prefix : prefixes)
        if (source.contains(prefix + probe)) return prefix;
    fail_input(source.path(), "missing tensor '" + std::string(*prefixes.begin()) + probe + "'");
}

Tensor optional_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape) {
    return source.contains(name) ? load_of_shape(source, name, shape) : Tensor{};
}

NormWeights layer_norm(const TensorSource& source, const std::string& name, int64_t d) {
    const bool tensorflow_names = !source.contains(name + ".weight") && source.contains(name + ".gamma");
    return {load_of_shape(source, name + (tensorflow_names ? ".gamma" : ".weight"), {d}),
            load_of_shape(source, name + (tensorflow_names ? ".beta" : ".bias"), {d})};
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

}  // namespace attn_viz
