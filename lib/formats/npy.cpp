#include "npy.hpp"

#include <cstring>

#include <fmt/format.h>

#include "error.hpp"
#include "file_write.hpp"
#include "mapped_file.hpp"

namespace attn_viz {
namespace {

// The value text after `'key':` in the header dict, up to the next top-level comma or brace.
std::string header_value(const std::string& header, const std::string& key, const std::string& where) {
    size_t k = header.find(fmt::format("'{}'", key));
    if (k == std::string::npos) fail_input(where, fmt::format("npy header has no '{}'", key));
    size_t colon = header.find(':', k);
    if (colon == std::string::npos) fail_input(where, fmt::format("npy header is malformed near '{}'", key));
    size_t start = colon + 1;
    while (start < header.size() && header[start] == ' ') ++start;
    size_t end = start;
    if (end < header.size() && header[end] == '(') {
        end = header.find(')', end);
        if (end == std::string::npos) fail_input(where, "npy header has an unterminated shape");
        return header.substr(start, end - start + 1);
    }
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
    return header.substr(start, end - start);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& where) {
    std::vector<int64_t> shape;
    size_t i = 1;  // past '('
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
        if (i >= text.size() || text[i] == ')') break;
        int64_t v = 0;
        size_t digits = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (v > (int64_t{1} << 40)) fail_input(where, "npy shape dimension is absurdly large");
            v = v * 10 + (text[i] - '0');
            ++i, ++digits;
        }
        if (digits == 0) fail_input(where, fmt::format("npy shape {} is not a tuple of integers", text));
        while (i < text.size() && text[i] == 'L') ++i;  // Python 2 longs
        shape.push_back(v);
    }
    if (shape.size() > 8) fail_input(where, "npy array has more than 8 dimensions");
    return shape;
}

}  // namespace

Tensor parse_npy(const unsigned char* bytes, size_t size, const std::string& where, const LoadLimits& limits) {
    // Step 1: magic string, version, header length.
    if (size < 10 || std::memcmp(bytes, "\x93NUMPY", 6) != 0) fail_input(where, "not a NumPy .npy file (bad magic)");
    const int major = bytes[6];
    size_t header_len = 0, header_start = 0;
    if (major == 1) {
        header_len = bytes[8] | (size_t{bytes[9]} << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) fail_input(where, "truncated .npy header");
        header_len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
        header_start = 12;
    } else {
        fail_input(where, fmt::format("unsupported .npy format version {}", major));
    }
    if (header_len > size - header_start) fail_input(where, "truncated .npy header");
    const std::string header(reinterpret_cast<const char*>(bytes + header_start), header_len);

    // Step 2: dtype, order and shape from the header dict.
    const std::string descr = header_value(header, "descr", where);
    size_t item_size = 0;
    if (descr == "'<f4'" || descr == "'|f4'")
        item_size = 4;
    else if (descr == "'<f8'" || descr == "'|f8'")
        item_size = 8;
    else
        fail_input(where, fmt::format("unsupported .npy dtype {} (need little-endian float32 or float64)", descr));
    if (header_value(header, "fortran_order", where) != "False")
        fail_input(where, ".npy array is in Fortran order (need C order)");
    const std::string shape_text = header_value(header, "shape", where);
    if (shape_text.empty() || shape_text.front() != '(') fail_input(where, "npy shape is not a tuple");
    const std::vector<int64_t> shape = parse_shape(shape_text, where);

    // Step 3: the data must be exactly what the shape says, checked before allocating.
    const size_t data_start = header_start + header_len;
    const int64_t count = element_count(shape, where);
    const size_t available = size - data_start;
    if (static_cast<uint64_t>(count) > available / item_size)
        fail_input(where, fmt::format("truncated .npy data: shape {} needs {} values of {} bytes, file has {} bytes",
                                      shape_string(shape), count, item_size, available));

    check_memory_elements(static_cast<uint64_t>(count), sizeof(float), limits.memory_budget,
                          fmt::format("{}: .npy array of shape {}", where, shape_string(shape)));
    Tensor t;
    t.shape = shape;
    t.data.resize(static_cast<size_t>(count));
    const unsigned char* src = bytes + data_start;
    if (count == 0) {
        // nothing to copy (and memcpy must not see the empty vector's null pointer)
    } else if (item_size == 4) {
        std::memcpy(t.data.data(), src, static_cast<size_t>(count) * 4);
    } else {
        for (int64_t i = 0; i < count; ++i) {
            double d;
            std::memcpy(&d, src + i * 8, 8);
            t.data[static_cast<size_t>(i)] = narrow_to_float(d);
        }
    }
    return t;
}

Tensor read_npy(const std::string& path, const LoadLimits& limits, const std::string& role) {
    MappedFile file(path, role);
    return parse_npy(file.data(), file.size(), path, limits);
}

void write_npy(const std::string& path, const Tensor& tensor) {
    NpyWriter out(path, tensor.shape);
    out.append(tensor.data.data(), tensor.data.size());
    out.close();
}

NpyWriter::NpyWriter(const std::string& path, const std::vector<int64_t>& shape) : path_(path), file_(path) {
    std::string text = "(";
    for (size_t i = 0; i < shape.size(); ++i) text += fmt::format("{}, ", shape[i]);
    if (shape.size() > 1)
        text.resize(text.size() - 2);
    else if (shape.size() == 1)
        text.resize(text.size() - 1);
    text += ")";
    for (int64_t n : shape) expected_ *= static_cast<uint64_t>(n);
    std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", text);
    // Pad so that magic + version + length + header is a multiple of 64, ending in '\n'.
    const size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
    const char preamble[10] = {'\x93',
                               'N',
                               'U',
                               'M',
                               'P',
                               'Y',
                               1,
                               0,
                               static_cast<char>(header.size() & 0xff),
                               static_cast<char>(header.size() >> 8)};
    file_.write({preamble, sizeof preamble});
    file_.write(header);
    file_.flush();
}

void NpyWriter::append(const float* values, uint64_t count) {
    if (written_ + count > expected_)
        throw Error(ErrorKind::internal, fmt::format("{}: more values than the .npy shape holds", path_));
    file_.write({reinterpret_cast<const char*>(values), count * sizeof(float)});
    file_.flush();
    written_ += count;
}

void NpyWriter::close() {
    if (written_ != expected_)
        throw Error(ErrorKind::internal,
                    fmt::format("{}: {} values written of the .npy shape's {}", path_, written_, expected_));
    file_.close();
}

}  // namespace attn_viz
