// attn_viz.Error: the library's errors (attn_viz::Error) as one Python exception class, a subclass
// of RuntimeError, carrying the same one-line message and the kind ("usage", "bad_input", "io",
// "internal") as its `kind` attribute.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace attn_viz_python {

void register_errors(pybind11::module_& m);

// `path`, the value of the argument `argument`, when it can name a file: one holding a NUL byte
// (Python strings may) is Error(usage) naming the argument and the value as Python shows it
// ("path: 'm\x00junk' holds a NUL byte, which no file name can"), never opened as its part before
// the NUL.
const std::string& path_argument(const char* argument, const std::string& path);

}  // namespace attn_viz_python
