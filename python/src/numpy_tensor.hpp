// Library tensors as NumPy arrays without copying: the array's base is a capsule that owns the
// tensor, so its buffer lives exactly as long as the array (and its views).
#pragma once

#include <pybind11/numpy.h>

#include "tensor.hpp"

namespace attn_viz_python {

// tensor: any shape -> a float32 array of that shape over the same buffer.
pybind11::array_t<float> to_numpy(attn_viz::Tensor&& tensor);

}  // namespace attn_viz_python
