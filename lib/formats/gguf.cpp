// GGUF parsing and validation, and tensors decoded from the mapping.
#include "gguf.hpp"

#include <unistd.h>

#include <cstring>

#include <fmt/format.h>
#include <sys/stat.h>

#include "error.hpp"
#include "finite.hpp"
#include "ggml_quants.hpp"
#include "input_open.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

constexpr uint64_t max_string_bytes = uint64_t{1} << 24;  // far above any key, name or token
constexpr uint32_t max_dims = 4;                          // GGML_MAX_DIMS

const char* value_type_name(GgufValueType type) {
    static const char* names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                  "bool",  "string", "array",  "uint64", "int64",  "float64"};
    return names[static_cast<uint32_t>(type)];
}

// Bytes of one scalar of `type`; 0 for strings and arrays.
uint64_t scalar_bytes(GgufValueType type) {
    switch (type) {
        case GgufValueType::u8:
        case GgufValueType::i8:
        case GgufValueType::boolean:
            return 1;
        case GgufValueType::u16:
        case GgufValueType::i16:
            return 2;
        case GgufValueType::u32:
        case GgufValueType::i32:
        case GgufValueType::f32:
            return 4;
        case GgufValueType::u64:
        case GgufValueType::i64:
        case GgufValueType::f64:
            return 8;
        case GgufValueType::string:
        case GgufValueType::array:
            return 0;
    }
    return 0;
}

bool is_integer(GgufValueType type) {
    return type != GgufValueType::f32 && type != GgufValueType::f64 && type != GgufValueType::boolean &&
           type != GgufValueType::string && type != GgufValueType::array;
}

// Little-endian reads at a bounds-checked position; every failure names the file and `where`.
class Cursor {
public:
    Cursor(const unsigned char* data, uint64_t size, const std::string& path) : data_(data), size_(size), path_(path) {}
    uint64_t at() const { return at_; }
    uint64_t remaining() const { return size_ - at_; }

    void need(uint64_t bytes, const std::string& where) const {
        if (bytes > remaining()) fail_input(path_, fmt::format("{} runs past the end of the file (truncated?)", where));
    }
    template <typename T>
    T read(const std::string& where) {
        need(sizeof(T), where);
        T value;
        std::memcpy(&value, data_ + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    std::string_view string(const std::string& where) {
        const uint64_t length = read<uint64_t>(fmt::format("{} length", where));
        if (length > max_string_bytes)
            fail_input(path_, fmt::format("{} declares a string of {} bytes (more than 2^24)", where, length));
        need(length, where);
        std::string_view s(reinterpret_cast<const char*>(data_ + at_), length);
        at_ += length;
        return s;
    }
    void skip(uint64_t bytes, const std::string& where) {
        need(bytes, where);
        at_ += bytes;
    }
    GgufValueType value_type(const std::string& where) {
        const uint32_t type = read<uint32_t>(fmt::format("{} type", where));
        if (type > static_cast<uint32_t>(GgufValueType::f64))
            fail_input(path_, fmt::format("{} has unknown value type {}", where, type));
        return static_cast<GgufValueType>(type);
    }

private:
    const unsigned char* data_;
    uint64_t size_;
    uint64_t at_ = 0;
    const std::string& path_;
};

// Walks over one value of `type` (not an array), checking it lies inside the file.
void skip_scalar(Cursor& c, GgufValueType type, const std::string& where) {
    if (type == GgufValueType::string)
        c.string(where);
    else
        c.skip(scalar_bytes(type), where);
}

// One metadata value at the cursor, walked over and validated (an array's strings one by one).
GgufValue parse_value(Cursor& c, const std::string& where, const std::string& path) {
    GgufValue v;
    v.type = v.element_type = c.value_type(where);
    if (v.type != GgufValueType::array) {
        v.offset = c.at();
        skip_scalar(c, v.type, where);
        return v;
    }
    v.element_type = c.value_type(fmt::format("{} array element", where));
    if (v.element_type == GgufValueType::array)
        fail_input(path, fmt::format("{} is an array of arrays (not supported)", where));
    v.count = c.read<uint64_t>(fmt::format("{} array length", where));
    v.offset = c.at();
    // Each element takes at least its scalar size (a string at least its 8-byte length).
    const uint64_t least = v.element_type == GgufValueType::string ? 8 : scalar_bytes(v.element_type);
    if (v.count > c.remaining() / least)
        fail_input(path, fmt::format("{} declares {} elements, more than the file holds (truncated?)", where, v.count));
    if (v.element_type == GgufValueType::string) {
        for (uint64_t i = 0; i < v.count; ++i) c.string(fmt::format("{} element {}", where, i));
    } else {
        c.skip(v.count * least, where);
    }
    return v;
}

uint64_t round_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// Reads an integer scalar of any width as int64 (unsigned 64-bit values above INT64_MAX saturate).
int64_t integer_at(const unsigned char* p, GgufValueType type) {
    auto get = [p]<typename T>(T) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (type) {
        case GgufValueType::u8:
            return get(uint8_t{});
        case GgufValueType::i8:
            return get(int8_t{});
        case GgufValueType::u16:
            return get(uint16_t{});
        case GgufValueType::i16:
            return get(int16_t{});
        case GgufValueType::u32:
            return get(uint32_t{});
        case GgufValueType::i32:
            return get(int32_t{});
        case GgufValueType::u64: {
            const uint64_t v = get(uint64_t{});
            return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
        }
        case GgufValueType::i64:
            return get(int64_t{});
        default:
            return 0;
    }
}

}  // namespace

GgufFile::GgufFile(std::string path, const LoadLimits& limits)
    : path_(std::move(path)), limits_(limits), file_(std::make_unique<MappedFile>(path_, "GGUF model")) {
    parse();
}

GgufFile::~GgufFile() = default;
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;

void GgufFile::parse() {
    Cursor c(file_->data(), file_->size(), path_);

    // Step 1: the header.
    if (file_->size() < 4 || std::memcmp(file_->data(), "GGUF", 4) != 0)
        fail_input(path_, "not a GGUF file (no \"GGUF\" magic)");
    c.skip(4, "magic");
    version_ = c.read<uint32_t>("header");
    if (version_ == 1)
        fail_input(path_, "is GGUF version 1, which attn-viz does not read (versions 2 and 3 are supported)");
    if (version_ == 0x02000000 || version_ == 0x03000000)
        fail_input(path_, "is a big-endian GGUF file; only little-endian GGUF is supported");
    if (version_ != 2 && version_ != 3) fail_input(path_, fmt::format("has unknown GGUF version {}", version_));
    const uint64_t tensor_count = c.read<uint64_t>("header tensor count");
    const uint64_t kv_count = c.read<uint64_t>("header metadata count");
    // A key/value takes at least 8 + 1 + 4 + 1 bytes, a tensor info at least 8 + 1 + 4 + 8 + 4 + 8.
    if (kv_count > c.remaining() / 14 || tensor_count > c.remaining() / 33)
        fail_input(
            path_,
            fmt::format("header declares {} metadata keys and {} tensors, more than its {} bytes can hold (truncated?)",
                        kv_count, tensor_count, file_->size()));

    // Step 2: the metadata, each value walked over and validated.
    for (uint64_t i = 0; i < kv_count; ++i) {
        const std::string where = fmt::format("metadata entry {}", i);
        std::string key(c.string(fmt::format("{} key", where)));
        if (metadata_.count(key)) fail_input(path_, fmt::format("metadata key \"{}\" appears twice", key));
        metadata_.emplace(key, parse_value(c, fmt::format("{} (\"{}\")", where, key), path_));
    }
    if (has("general.alignment")) {
        const GgufValue& a = metadata_.at("general.alignment");
        if (a.type != GgufValueType::u32) fail_input(path_, "general.alignment is not a uint32");
        alignment_ = static_cast<uint64_t>(integer_at(file_->data() + a.offset, a.type));
        if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0)
            fail_input(path_, fmt::format("general.alignment {} is not a power of two", alignment_));
    }

    // Step 3: the tensor infos; offsets are relative to the aligned start of the data.
    check_memory_elements(tensor_count, sizeof(GgufTensorInfo), limits_.memory_budget,
                          fmt::format("{}: tensor infos", path_));
    tensors_.reserve(tensor_count);
    for (uint64_t i = 0; i < tensor_count; ++i) {
        GgufTensorInfo t;
        t.name = std::string(c.string(fmt::format("tensor info {} name", i)));
        const std::string where = fmt::format("tensor \"{}\"", t.name);
        if (tensor_index_.count(t.name)) fail_input(path_, fmt::format("{} appears twice", where));
        const uint32_t n_dims = c.read<uint32_t>(fmt::format("{} dimension count", where));
        if (n_dims == 0 || n_dims > max_dims)
            fail_input(path_, fmt::format("{} has {} dimensions (1..4 allowed)", where, n_dims));
        for (uint32_t d = 0; d < n_dims; ++d) {
            const int64_t dim = c.read<int64_t>(fmt::format("{} dimensions", where));
            if (dim <= 0) fail_input(path_, fmt::format("{} has dimension {} (must be positive)", where, dim));
            t.dims.push_back(dim);
        }
        t.type = c.read<uint32_t>(fmt::format("{} type", where));
        const GgmlTypeInfo* info = ggml_type_info(t.type);
        if (!info) fail_input(path_, fmt::format("{} has unknown ggml type {}", where, t.type));
        t.offset = c.read<uint64_t>(fmt::format("{} offset", where));
        if (t.dims[0] % info->block_elements != 0)
            fail_input(path_, fmt::format("{} rows of {} values are not whole {} blocks of {}", where, t.dims[0],
                                          info->name, info->block_elements));
        // bytes = (ne0 / block) * block_bytes * ne1 * ne2 * ne3, refused on overflow (it must fit the file anyway).
        uint64_t bytes = static_cast<uint64_t>(t.dims[0] / info->block_elements);
        bool overflow = __builtin_mul_overflow(bytes, static_cast<uint64_t>(info->block_bytes), &bytes);
        for (uint32_t d = 1; d < n_dims; ++d)
            overflow = overflow || __builtin_mul_overflow(bytes, static_cast<uint64_t>(t.dims[d]), &bytes);
        if (overflow || bytes > file_->size())
            fail_input(path_, fmt::format("{} is larger than the file ({} bytes)", where, file_->size()));
        t.bytes = bytes;
        tensor_index_.emplace(t.name, tensors_.size());
        shapes_.push_back(t.shape());
        tensors_.push_back(std::move(t));
    }

    // Step 4: every tensor's data inside the file, at an aligned offset.
    const uint64_t data_start = round_up(c.at(), alignment_);
    for (GgufTensorInfo& t : tensors_) {
        const std::string where = fmt::format("tensor \"{}\"", t.name);
        if (t.offset % alignment_ != 0)
            fail_input(path_,
                       fmt::format("{} offset {} is not a multiple of the alignment {}", where, t.offset, alignment_));
        if (data_start > file_->size() || t.offset > file_->size() - data_start ||
            t.bytes > file_->size() - data_start - t.offset)
            fail_input(path_, fmt::format("{} data ({} bytes at offset {}) runs past the end of the file (truncated?)",
                                          where, t.bytes, t.offset));
        t.offset += data_start;
    }
}

const GgufValue& GgufFile::value(const std::string& key, const char* wanted) const {
    auto it = metadata_.find(key);
    if (it == metadata_.end()) fail_input(path_, fmt::format("has no metadata key \"{}\" ({})", key, wanted));
    return it->second;
}

std::optional<uint64_t> GgufFile::get_uint(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const GgufValue& v = metadata_.at(key);
    const int64_t value = is_integer(v.type) ? integer_at(file_->data() + v.offset, v.type) : -1;
    if (value < 0)
        fail_input(path_, fmt::format("metadata \"{}\" is a {}{}, expected a non-negative integer", key,
                                      value_type_name(v.type), is_integer(v.type) ? " below zero" : ""));
    return static_cast<uint64_t>(value);
}

std::optional<double> GgufFile::get_float(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const GgufValue& v = metadata_.at(key);
    const unsigned char* p = file_->data() + v.offset;
    if (v.type == GgufValueType::f32) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    if (v.type == GgufValueType::f64) {
        double f;
        std::memcpy(&f, p, 8);
        return f;
    }
    if (is_integer(v.type)) return static_cast<double>(integer_at(p, v.type));
    fail_input(path_, fmt::format("metadata \"{}\" is a {}, expected a number", key, value_type_name(v.type)));
}

std::optional<std::string> GgufFile::get_string(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const GgufValue& v = metadata_.at(key);
    if (v.type != GgufValueType::string)
        fail_input(path_, fmt::format("metadata \"{}\" is a {}, expected a string", key, value_type_name(v.type)));
    uint64_t length;
    std::memcpy(&length, file_->data() + v.offset, 8);
    return std::string(reinterpret_cast<const char*>(file_->data() + v.offset + 8), length);
}

std::optional<bool> GgufFile::get_bool(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const GgufValue& v = metadata_.at(key);
    if (v.type != GgufValueType::boolean)
        fail_input(path_, fmt::format("metadata \"{}\" is a {}, expected a bool", key, value_type_name(v.type)));
    return file_->data()[v.offset] != 0;
}

std::vector<std::string> GgufFile::get_string_array(const std::string& key) const {
    const GgufValue& v = value(key, "an array of strings");
    if (v.type != GgufValueType::array || v.element_type != GgufValueType::string)
        fail_input(path_, fmt::format("metadata \"{}\" is not an array of strings", key));
    // A string costs its bytes plus a std::string; the file (validated) bounds the total.
    check_memory_elements(v.count, sizeof(std::string), limits_.memory_budget, fmt::format("{}: {}", path_, key));
    std::vector<std::string> result;
    result.reserve(v.count);
    const unsigned char* p = file_->data() + v.offset;
    for (uint64_t i = 0; i < v.count; ++i) {
        uint64_t length;
        std::memcpy(&length, p, 8);
        result.emplace_back(reinterpret_cast<const char*>(p + 8), length);
        p += 8 + length;
    }
    return result;
}

std::vector<float> GgufFile::get_float_array(const std::string& key) const {
    const GgufValue& v = value(key, "an array of float32");
    if (v.type != GgufValueType::array || v.element_type != GgufValueType::f32)
        fail_input(path_, fmt::format("metadata \"{}\" is not an array of float32", key));
    check_memory_elements(v.count, sizeof(float), limits_.memory_budget, fmt::format("{}: {}", path_, key));
    std::vector<float> result(v.count);
    if (v.count) std::memcpy(result.data(), file_->data() + v.offset, v.count * 4);
    return result;
}

std::vector<int64_t> GgufFile::get_int_array(const std::string& key) const {
    const GgufValue& v = value(key, "an array of integers");
    if (v.type != GgufValueType::array || !is_integer(v.element_type))
        fail_input(path_, fmt::format("metadata \"{}\" is not an array of integers", key));
    check_memory_elements(v.count, sizeof(int64_t), limits_.memory_budget, fmt::format("{}: {}", path_, key));
    std::vector<int64_t> result(v.count);
    const uint64_t step = scalar_bytes(v.element_type);
    for (uint64_t i = 0; i < v.count; ++i) result[i] = integer_at(file_->data() + v.offset + i * step, v.element_type);
    return result;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::info(const std::string& name) const {
    const GgufTensorInfo* t = find_tensor(name);
    if (!t) fail_input(path_, fmt::format("has no tensor \"{}\"", escape_invalid_utf8(name)));
    return *t;
}

std::vector<std::string> GgufFile::names() const {
    std::vector<std::string> names;
    for (const auto& [name, index] : tensor_index_) names.push_back(name);
    return names;
}

const std::vector<int64_t>& GgufFile::shape(const std::string& name) const {
    return shapes_[static_cast<size_t>(&info(name) - tensors_.data())];
}

int64_t GgufFile::required_count(const std::string& key) const {
    const std::optional<uint64_t> count = get_uint(key);
    if (!count) fail_input(path_, fmt::format("has no metadata \"{}\"", key));
    return *count > (uint64_t{1} << 40) ? int64_t{1} << 40 : static_cast<int64_t>(*count);
}

Tensor GgufFile::load(const std::string& name) const {
    const GgufTensorInfo* t = &info(name);
    check_decodable(*t);
    const std::string what = fmt::format("{}: tensor \"{}\"", path_, name);
    const std::vector<int64_t> shape = t->shape();
    check_memory_elements(static_cast<uint64_t>(element_count(shape, what)), sizeof(float), limits_.memory_budget,
                          fmt::format("{} of shape {}", what, shape_string(shape)));
    Tensor result = Tensor::uninitialized(shape, what);
    dequantize_row(t->type, file_->data() + t->offset, result.ptr(), static_cast<int64_t>(result.data.size()));
    file_->release(t->offset, t->bytes);  // a streamed model's resident memory holds no block's file pages
    require_finite(result, name, path_, limits_);
    return result;
}

void GgufFile::load_row_ranges(const std::string& name, const std::vector<RowRange>& ranges, RowLayout layout) const {
    for (const RowRange& range : ranges) load_rows(name, range.begin, range.count, layout, *range.out);
}

void GgufFile::load_rows(const std::string& name, int64_t begin, int64_t count, RowLayout layout, Tensor& out) const {
    const GgufTensorInfo* t = &info(name);
    check_decodable(*t);
    const std::string what = fmt::format("{}: tensor \"{}\"", path_, name);
    const std::vector<int64_t> shape = t->shape();
    if (shape.size() != 2 || begin < 0 || count < 0 || begin + count > shape[0])
        throw Error(ErrorKind::internal, fmt::format("{} of shape {} has no rows [{}, {})", what, shape_string(shape),
                                                     begin, begin + count));
    const int64_t cols = shape[1];
    const std::vector<int64_t> out_shape =
        layout == RowLayout::transposed ? std::vector<int64_t>{cols, count} : std::vector<int64_t>{count, cols};
    check_memory_elements(static_cast<uint64_t>(element_count(out_shape, what)), sizeof(float), limits_.memory_budget,
                          fmt::format("{} of shape {}", what, shape_string(shape)));
    // Step 1: out in the memory it has when that is enough (resize within the capacity neither
    // allocates nor zeroes).
    const size_t size = static_cast<size_t>(cols * count);
    if (out.data.capacity() < size) out = Tensor::uninitialized(out_shape, what);
    out.shape = out_shape;
    out.data.resize(size);
    // Step 2: decode (and transpose), then let the rows' file pages go.
    const GgmlTypeInfo* info = ggml_type_info(t->type);
    const uint64_t row_bytes = static_cast<uint64_t>(cols / info->block_elements * info->block_bytes);
    const unsigned char* rows = file_->data() + t->offset + static_cast<uint64_t>(begin) * row_bytes;
    const bool finite = dequantize_rows(t->type, rows, count, cols, out.ptr(), layout);
    file_->release(t->offset + static_cast<uint64_t>(begin) * row_bytes, static_cast<uint64_t>(count) * row_bytes);
    // Step 3: a non-finite value is refused by load(), which names the first in the tensor's own
    // order (the rows before `begin` were checked by the calls that decoded them).
    if (!finite && !limits_.allow_nonfinite) static_cast<void>(load(name));
}

void GgufFile::check_decodable(const GgufTensorInfo& tensor) const {
    const GgmlTypeInfo* info = ggml_type_info(tensor.type);
    if (!info->decodable)
        fail_input(fmt::format("{}: tensor \"{}\"", path_, tensor.name),
                   fmt::format("is of type {}, which attn-viz cannot decode (F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
                               "Q5_1, Q8_0, Q4_K, Q5_K, Q6_K and Q8_K are supported)",
                               info->name));
}

bool is_gguf_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return false;
    const UniqueFd fd = open_input_file(path, "");
    char magic[4] = {};
    return ::read(fd.get(), magic, 4) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace attn_viz
