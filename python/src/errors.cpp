#include "errors.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

const char* kind_name(attn_viz::ErrorKind kind) {
    switch (kind) {
        case attn_viz::ErrorKind::usage:
            return "usage";
        case attn_viz::ErrorKind::bad_input:
            return "bad_input";
        case attn_viz::ErrorKind::io:
            return "io";
        case attn_viz::ErrorKind::internal:
            return "internal";
    }
    return "internal";
}

// The class attn_viz.Error; never destroyed: it lives as long as the interpreter, past the
// module's static objects.
py::exception<attn_viz::Error>* error_class = nullptr;

}  // namespace

const std::string& path_argument(const char* argument, const std::string& path) {
    if (path.find('\0') == std::string::npos) return path;
    std::string shown;
    for (char c : path) shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
    throw attn_viz::Error(attn_viz::ErrorKind::usage,
                          fmt::format("{}: '{}' holds a NUL byte, which no file name can", argument, shown));
}

void register_errors(py::module_& m) {
    error_class = new py::exception<attn_viz::Error>(m, "Error", PyExc_RuntimeError);
    py::register_exception_translator([](std::exception_ptr thrown) {
        try {
            if (thrown) std::rethrow_exception(thrown);
        } catch (const attn_viz::Error& e) {
            py::object instance = py::handle(error_class->ptr())(e.what());
            instance.attr("kind") = kind_name(e.kind());
            PyErr_SetObject(error_class->ptr(), instance.ptr());
        }
    });
}

}  // namespace attn_viz_python
