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

// The CLI's report options with the threads the model or layer was opened with (0 = all cores),
// as `--threads` gives them to the statistics' and pictures' parallel loops: without them every
// analysis ran on all cores whatever `threads` said, and at one thread OpenMP's idle spinning took
// 80% of a corpus run (5.8 s against the CLI's 0.8 s for 50 sentences of stories260K).
attn_viz::ReportOptions report_options(int threads);

// The folder `out` (replaced with `force`, as --force) staged by `stage` with the GIL released and
// `mutex` held, then committed: every file appears together, or none. html: report.html too;
// threads: as report_options.
void write_run_folder(
    std::mutex& mutex, const std::string& out, bool force, bool html, int threads,
    const std::function<void(attn_viz::OutputDir&, const attn_viz::ReportOptions&, attn_viz::Timings&)>& stage);

// JSON text as a Python dict (json.loads), so the dict holds exactly what the file would.
pybind11::object json_to_python(const std::string& text);

}  // namespace attn_viz_python
