// Progress and Ctrl-C for a computation that runs with the GIL released: the library tells a
// StepCallback after each step (a model's block, a corpus's sequence); these take the GIL, call
// the Python progress function (done, total) if there is one, and check for a pending signal, so
// Ctrl-C (KeyboardInterrupt) or an exception the progress function raises stops the run after
// the step in progress, as the CLI stops at Ctrl-C.
#pragma once

#include <functional>

#include <pybind11/pybind11.h>

#include "sequence_stream.hpp"
#include "whole_model.hpp"

namespace attn_viz_python {

class PythonSteps {
public:
    explicit PythonSteps(pybind11::object progress) : progress_(std::move(progress)) {}
    // Each valid while this object lives; each throws pybind11::error_already_set to stop the run.
    attn_viz::StepCallback callback();            // progress(done, total), then Ctrl-C
    attn_viz::StepCallback interruption_check();  // Ctrl-C only (a corpus's blocks)
    // progress(done, total) after each of the sequences of `documents`, counted first when there
    // is a progress function (CorpusDocuments::count_sequences), then Ctrl-C.
    std::function<void(int64_t done)> count_callback(const attn_viz::CorpusDocuments& documents);

private:
    pybind11::object progress_;  // None or a callable (done, total)
    pybind11::object total_;     // count_callback's total
};

}  // namespace attn_viz_python
