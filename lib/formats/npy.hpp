// NumPy .npy files (format versions 1-3): little-endian float32 or float64, C order.
#pragma once

#include <string>

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

}  // namespace attn_viz
