// NumPy .npy files (format versions 1-3): little-endian float32 or float64, C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "file_write.hpp"
#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Reads an .npy file as float32. Validates magic, header, dtype, order and that the declared
// shape matches the file's size and limits.memory_budget before allocating; errors name the file.
// Values are not checked for finiteness (the callers name the tensor). The file is recorded as an
// input read as `role` (input_files.hpp).
Tensor read_npy(const std::string& path, const LoadLimits& limits = {}, const std::string& role = ".npy tensor");

// Parses .npy bytes already in memory (`where` names them in errors).
Tensor parse_npy(const unsigned char* bytes, size_t size, const std::string& where, const LoadLimits& limits = {});

// Writes float32, C order, format version 1.0, straight to `path`.
void write_npy(const std::string& path, const Tensor& tensor);

// Writes a float32 .npy file of `shape` piece by piece (e.g. [L, H, T, S] one layer at a time):
// the header at construction, then the values in C order through append() (each piece handed to
// the system before it returns, so the file grows piece by piece); close() refuses
// (Error internal) a file that did not get exactly the shape's values.
class NpyWriter {
public:
    NpyWriter(const std::string& path, const std::vector<int64_t>& shape);
    void append(const float* values, uint64_t count);
    void close();

private:
    std::string path_;
    FileWriter file_;
    uint64_t expected_ = 1, written_ = 0;
};

}  // namespace attn_viz
