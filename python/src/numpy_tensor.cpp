#include "numpy_tensor.hpp"

namespace py = pybind11;

namespace attn_viz_python {

py::array_t<float> to_numpy(attn_viz::Tensor&& tensor) {
    auto* owned = new attn_viz::Tensor(std::move(tensor));
    py::capsule base(owned, [](void* p) { delete static_cast<attn_viz::Tensor*>(p); });
    return py::array_t<float>(owned->shape, owned->ptr(), base);
}

}  // namespace attn_viz_python
