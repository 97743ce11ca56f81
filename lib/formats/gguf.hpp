// GGUF files (llama.cpp's model format, versions 2 and 3, little-endian): a header, typed
// metadata key/values (scalars, strings, arrays), tensor infos (name, dims, ggml type, offset)
// and the aligned tensor data. The file is memory-mapped and its untrusted structure fully
// validated when opened; metadata values and tensors are decoded only when asked for.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ggml_quants.hpp"
#include "load_limits.hpp"
#include "tensor.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

class MappedFile;

// gguf_type: the type of a metadata value.
enum class GgufValueType : uint32_t { u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };

struct GgufValue {
    GgufValueType type = GgufValueType::u8;          // `array` for arrays
    GgufValueType element_type = GgufValueType::u8;  // arrays: the elements' type (never `array`)
    uint64_t count = 1;                              // arrays: number of elements
    uint64_t offset = 0;                             // file offset of the value (arrays: of element 0)
};

struct GgufTensorInfo {
    std::string name;
    std::vector<int64_t> dims;  // as in the file: innermost (contiguous) first, 1..4 of them
    uint32_t type = 0;          // ggml type id (ggml_quants.hpp), known to ggml_type_info()
    uint64_t offset = 0;        // absolute file offset of the data
    uint64_t bytes = 0;
    // The row-major shape attn-viz uses: dims reversed ([ne1, ne0] for a matrix).
    std::vector<int64_t> shape() const { return {dims.rbegin(), dims.rend()}; }
};

// A TensorSource: the model readers load its tensors, by name, as they load a safetensors file's.
class GgufFile : public TensorSource {
public:
    // Maps the file and validates everything before allocating for it: magic, version (2 or 3;
    // v1 and big-endian files are refused by name), counts against the file size, every string
    // length, value type, nested arrays (refused), duplicate keys and tensor names, alignment
    // (general.alignment a power of two), dims (1..4, positive, a whole number of blocks per
    // row), element types, and each tensor's data lying inside the file at an aligned offset.
    // Throws Error(bad_input) naming the file (and the key or tensor); Error(io) when unreadable.
    explicit GgufFile(std::string path, const LoadLimits& limits = {});
    ~GgufFile();
    GgufFile(GgufFile&&) noexcept;
    GgufFile& operator=(GgufFile&&) noexcept;

    const std::string& path() const override { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    const LoadLimits& limits() const { return limits_; }

    bool has(const std::string& key) const { return metadata_.count(key) != 0; }
    const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
    // Scalars: nullopt when the key is absent; Error(bad_input) naming the file and key when the
    // value has another type (integers: any integer type holding a value >= 0).
    std::optional<uint64_t> get_uint(const std::string& key) const;
    std::optional<double> get_float(const std::string& key) const;  // f32, f64 or an integer
    std::optional<std::string> get_string(const std::string& key) const;
    std::optional<bool> get_bool(const std::string& key) const;  // any non-zero byte is true
    // A required non-negative integer (capped at 2^40; each reader bounds it further):
    // Error(bad_input) naming the file and key when absent.
    int64_t required_count(const std::string& key) const;
    // Arrays: Error(bad_input) when absent, of another element type, or over the memory budget.
    std::vector<std::string> get_string_array(const std::string& key) const;
    std::vector<float> get_float_array(const std::string& key) const;
    std::vector<int64_t> get_int_array(const std::string& key) const;  // any integer element type

    const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
    // nullptr when absent.
    const GgufTensorInfo* find_tensor(const std::string& name) const;
    std::vector<std::string> names() const override;  // sorted
    bool contains(const std::string& name) const override { return tensor_index_.count(name) != 0; }
    // The row-major shape (GgufTensorInfo::shape); Error(bad_input) naming the file when absent.
    const std::vector<int64_t>& shape(const std::string& name) const override;
    // The tensor as float32 in its row-major shape, from any decodable type (ggml_quants.hpp);
    // Error(bad_input) naming the file and tensor when absent, of a type attn-viz cannot decode,
    // over the memory budget or (unless allowed) not finite. The tensor's pages of the mapped file
    // are released from resident memory afterwards (MappedFile::release).
    Tensor load(const std::string& name) const override;
    // Rows [begin, begin + count) of matrix `name` ([rows, cols] in its row-major shape) decoded
    // into `out`: [count, cols] as stored, or straight into their transpose [cols, count] (x W for
    // a weight stored [out, in]); the values load() gives, with its checks and messages (a
    // non-finite value is named by its index in the whole tensor). Tiles of rows are decoded in
    // parallel over OpenMP's threads, and out's memory is reused when it holds enough, so that a
    // streamed model's blocks after the first allocate (and page-fault) nothing. The rows' file
    // pages are released afterwards.
    void load_rows(const std::string& name, int64_t begin, int64_t count, RowLayout layout, Tensor& out) const;
    // Each range by load_rows.
    void load_row_ranges(const std::string& name, const std::vector<RowRange>& ranges, RowLayout layout) const override;
    // Error(bad_input) naming the file and tensor when its type is not decodable.
    void check_decodable(const GgufTensorInfo& tensor) const;
    void check_element_type(const std::string& name) const override { check_decodable(info(name)); }

private:
    const GgufValue& value(const std::string& key, const char* wanted) const;
    const GgufTensorInfo& info(const std::string& name) const;  // Error(bad_input) when absent
    void parse();

    std::string path_;
    LoadLimits limits_;
    std::unique_ptr<MappedFile> file_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    std::map<std::string, GgufValue> metadata_;
    std::vector<GgufTensorInfo> tensors_;
    std::map<std::string, size_t> tensor_index_;
    std::vector<std::vector<int64_t>> shapes_;  // tensors_[i].shape(), kept for shape()
};

// Whether the file at `path` starts with the GGUF magic (false when it is missing or a folder);
// throws Error(io) naming it when it is a FIFO, a device or a socket, or cannot be opened.
bool is_gguf_file(const std::string& path);

}  // namespace attn_viz
