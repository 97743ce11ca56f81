// The module's classes, each bound by its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace attn_viz_python {

void bind_model(pybind11::module_& m);  // attn_viz.Model (model_binding.cpp)
void bind_layer(pybind11::module_& m);  // attn_viz.Layer (layer_binding.cpp)

}  // namespace attn_viz_python
