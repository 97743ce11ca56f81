#include "interrupt.hpp"

namespace py = pybind11;

namespace attn_viz_python {

attn_viz::StepCallback PythonSteps::callback() {
    return [this](int64_t done, int64_t total) {
        py::gil_scoped_acquire gil;
        if (!progress_.is_none()) progress_(done, total);
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    };
}

}  // namespace attn_viz_python
