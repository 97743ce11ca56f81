// What Result and Seq2SeqResult share: writing a run's folder as the CLI's --out does, and
// statistics documents as Python dicts.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include <pybind11/pybind11.h>

#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"

namespace attn_viz_python {

// The folder `out` (replaced with `force`, as --force) staged by `stage` with the GIL released and
// `mutex` held, then committed: every file appears together, or none. html: report.html too.
void write_run_folder(
    std::mutex& mutex, const std::string& out, bool force, bool html,
    const std::function<void(attn_viz::OutputDir&, const attn_viz::ReportOptions&, attn_viz::Timings&)>& stage);

// JSON text as a Python dict (json.loads), so the dict holds exactly what the file would.
pybind11::object json_to_python(const std::string& text);

}  // namespace attn_viz_python
