// Small lookups every Hugging Face folder reader shares: where a checkpoint's names start, tensors
// a family may or may not have, LayerNorm pairs. Each checks the shape before converting.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "model_weights.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

// The first of `prefixes` under which `source` holds `probe`; Error(bad_input) naming the file
// and the first prefix's tensor otherwise.
std::string find_prefix(const TensorSource& source, std::initializer_list<const char*> prefixes,
                        const std::string& probe);

// The tensor `name` of `shape`, or empty when the checkpoint has no such tensor (a misshapen one is
// Error(bad_input) naming the file and the tensor).
Tensor optional_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape);

// A weight stored [out, in] (torch's nn.Linear and ggml's layout) as x W's [in, out], checked.
Tensor linear_weight(const TensorSource& source, const std::string& name, int64_t in, int64_t out);

// `name`.weight and `name`.bias ([D] each); checkpoints converted from TensorFlow name them
// `name`.gamma and `name`.beta, which transformers renames when loading.
NormWeights layer_norm(const TensorSource& source, const std::string& name, int64_t d);

}  // namespace attn_viz
