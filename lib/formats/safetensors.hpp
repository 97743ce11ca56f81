// safetensors files (Hugging Face's weight format): an 8-byte little-endian header length, a JSON
// header naming each tensor's dtype, shape and byte range, then the raw little-endian buffer.
// The file is memory-mapped and its untrusted header fully validated when opened; a tensor is
// converted to float32 only when asked for by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "load_limits.hpp"
#include "tensor.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

class MappedFile;

// Element types a safetensors file may declare. Only the floating ones can be loaded.
enum class SafetensorsDtype { f64, f32, f16, bf16, i64, i32, i16, i8, u64, u32, u16, u8, boolean, f8_e4m3, f8_e5m2 };

// "F32", "BF16", ...
const char* safetensors_dtype_name(SafetensorsDtype dtype);

struct SafetensorsEntry {
    SafetensorsDtype dtype = SafetensorsDtype::f32;
    std::vector<int64_t> shape;
    uint64_t begin = 0;  // byte range in the data buffer (after the header)
    uint64_t end = 0;
};

class SafetensorsFile : public TensorSource {
public:
    // Maps the file and validates the header against its size (Error(bad_input) naming the file
    // and the tensor; Error(io) when it cannot be opened). Nothing is converted yet; `limits`
    // apply to the header and to every load().
    explicit SafetensorsFile(std::string path, const LoadLimits& limits = {});
    ~SafetensorsFile();
    SafetensorsFile(SafetensorsFile&&) noexcept;
    SafetensorsFile& operator=(SafetensorsFile&&) noexcept;

    const std::string& path() const override { return path_; }
    std::vector<std::string> names() const override;  // sorted
    bool contains(const std::string& name) const override { return entries_.count(name) != 0; }
    // Throws Error(bad_input) naming the file when `name` is absent.
    const SafetensorsEntry& entry(const std::string& name) const;
    const std::vector<int64_t>& shape(const std::string& name) const override { return entry(name).shape; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

    // The tensor converted to float32 (from F64, F32, F16 or BF16); other dtypes, a tensor over
    // the memory budget and (unless allowed) non-finite values are refused.
    Tensor load(const std::string& name) const override;
    // Error(bad_input) naming the file and tensor unless its dtype is F64, F32, F16 or BF16.
    void check_element_type(const std::string& name) const override;

private:
    std::string path_;
    LoadLimits limits_;
    std::unique_ptr<MappedFile> file_;
    uint64_t data_start_ = 0;
    std::map<std::string, SafetensorsEntry> entries_;
    std::map<std::string, std::string> metadata_;
};

// Writes tensors (in the given order, names unique) stored as `dtype` (F64, F32, F16 or BF16;
// F16/BF16 rounded to nearest even). Throws Error(io) when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       SafetensorsDtype dtype = SafetensorsDtype::f32);

// IEEE half and bfloat16 conversions, round to nearest even (exposed for tests and writers).
uint16_t float_to_f16(float value);
float f16_to_float(uint16_t bits);
uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);

}  // namespace attn_viz
