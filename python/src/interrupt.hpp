// Progress and Ctrl-C for a computation that runs with the GIL released: the library tells a
// StepCallback after each step (a model's block); this one takes the GIL, calls the Python
// progress function (done, total) if there is one, and checks for a pending signal, so Ctrl-C
// (KeyboardInterrupt) or an exception the progress function raises stops the run after the step
// in progress, as the CLI stops at Ctrl-C.
#pragma once

#include <pybind11/pybind11.h>

#include "whole_model.hpp"

namespace attn_viz_python {

class PythonSteps {
public:
    explicit PythonSteps(pybind11::object progress) : progress_(std::move(progress)) {}
    // Valid while this object lives; throws pybind11::error_already_set to stop the run.
    attn_viz::StepCallback callback();

private:
    pybind11::object progress_;  // None or a callable (done, total)
};

}  // namespace attn_viz_python
