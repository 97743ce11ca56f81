#include "run_folder.hpp"

#include "errors.hpp"

namespace py = pybind11;

namespace attn_viz_python {

attn_viz::ReportOptions report_options(int threads) {
    attn_viz::ReportOptions options;
    options.threads = threads;
    return options;
}

void write_run_folder(
    std::mutex& mutex, const std::string& out, bool force, bool html, int threads,
    const std::function<void(attn_viz::OutputDir&, const attn_viz::ReportOptions&, attn_viz::Timings&)>& stage) {
    path_argument("out", out);
    py::gil_scoped_release released;
    std::lock_guard<std::mutex> lock(mutex);
    attn_viz::ReportOptions options = report_options(threads);
    options.html = html;
    attn_viz::OutputDir dir(out, force);
    attn_viz::Timings timings;
    stage(dir, options, timings);
    dir.commit();
}

py::object json_to_python(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

}  // namespace attn_viz_python
