// attn_viz.Error: the library's errors (attn_viz::Error) as one Python exception class, a subclass
// of RuntimeError, carrying the same one-line message and the kind ("usage", "bad_input", "io",
// "internal") as its `kind` attribute.
#pragma once

#include <pybind11/pybind11.h>

namespace attn_viz_python {

void register_errors(pybind11::module_& m);

}  // namespace attn_viz_python
