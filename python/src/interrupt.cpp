#include "interrupt.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

// Ctrl-C (or another signal whose handler raises) pending: stop here (the caller holds the GIL).
void stop_on_signal() {
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

}  // namespace

attn_viz::StepCallback PythonSteps::callback() {
    return [this](int64_t done, int64_t total) {
        py::gil_scoped_acquire gil;
        if (!progress_.is_none()) progress_(done, total);
        stop_on_signal();
    };
}

attn_viz::StepCallback PythonSteps::interruption_check() {
    return [](int64_t, int64_t) {
        py::gil_scoped_acquire gil;
        stop_on_signal();
    };
}

std::function<void(int64_t done)> PythonSteps::count_callback(const attn_viz::CorpusDocuments& documents) {
    // The total is held by this object, so the callback copies no Python object without the GIL.
    if (!progress_.is_none()) total_ = py::int_(documents.count_sequences());
    return [this](int64_t done) {
        py::gil_scoped_acquire gil;
        if (!progress_.is_none()) progress_(done, total_);
        stop_on_signal();
    };
}

}  // namespace attn_viz_python
