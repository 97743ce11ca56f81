// attn_viz._core: the native half of the Python package attn_viz (python/attn_viz/__init__.py
// re-exports it): Model, Layer, Result, Seq2SeqResult and Error over the library's top layer.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "model.hpp"
#include "onednn_backend.hpp"
#include "run_result.hpp"

PYBIND11_MODULE(_core, m) {
    attn_viz::cap_onednn_isa();  // as the CLI's main() does: the same kernels, the same numbers
    m.doc() = "attn-viz's native core: run attention of whole models and layer files";
    attn_viz_python::register_errors(m);
    attn_viz_python::bind_run_result(m);
    attn_viz_python::bind_seq2seq_result(m);
    attn_viz_python::bind_model(m);
    attn_viz_python::bind_layer(m);
}
