// safetensors reading (validated header, lazy per-tensor float32 conversion) and writing.
#include "safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "file_write.hpp"
#include "finite.hpp"
#include "json_input.hpp"
#include "mapped_file.hpp"
#include "memory_budget.hpp"

namespace attn_viz {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

constexpr uint64_t max_header_bytes = 100ull << 20;  // 100 MB of JSON is far beyond any real model
constexpr size_t max_rank = 8;

struct DtypeInfo {
    SafetensorsDtype dtype;
    const char* name;
    uint64_t bytes;
};

constexpr DtypeInfo dtype_table[] = {
    {SafetensorsDtype::f64, "F64", 8},         {SafetensorsDtype::f32, "F32", 4},
    {SafetensorsDtype::f16, "F16", 2},         {SafetensorsDtype::bf16, "BF16", 2},
    {SafetensorsDtype::i64, "I64", 8},         {SafetensorsDtype::i32, "I32", 4},
    {SafetensorsDtype::i16, "I16", 2},         {SafetensorsDtype::i8, "I8", 1},
    {SafetensorsDtype::u64, "U64", 8},         {SafetensorsDtype::u32, "U32", 4},
    {SafetensorsDtype::u16, "U16", 2},         {SafetensorsDtype::u8, "U8", 1},
    {SafetensorsDtype::boolean, "BOOL", 1},    {SafetensorsDtype::f8_e4m3, "F8_E4M3", 1},
    {SafetensorsDtype::f8_e5m2, "F8_E5M2", 1},
};

const DtypeInfo& dtype_info(SafetensorsDtype dtype) {
    for (const DtypeInfo& info : dtype_table)
        if (info.dtype == dtype) return info;
    throw Error(ErrorKind::internal, "safetensors: unknown dtype enumerator");
}

// Parses one header entry; `where` is "<file>: tensor '<name>'".
SafetensorsEntry parse_entry(const nlohmann::json& value, const std::string& where) {
    if (!value.is_object()) fail_input(where, "header entry is not an object");
    SafetensorsEntry entry;

    // Step 1: the dtype must be one safetensors defines.
    auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) fail_input(where, "has no \"dtype\" string");
    const std::string dtype_name = dtype->get<std::string>();
    const DtypeInfo* info = nullptr;
    for (const DtypeInfo& candidate : dtype_table)
        if (dtype_name == candidate.name) info = &candidate;
    if (!info) fail_input(where, fmt::format("has unknown dtype \"{}\"", dtype_name));
    entry.dtype = info->dtype;

    // Step 2: shape of non-negative integers; element count without overflow.
    auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array()) fail_input(where, "has no \"shape\" list");
    if (shape->size() > max_rank) fail_input(where, "has more than 8 dimensions");
    for (const auto& dim : *shape) {
        if (!dim.is_number_unsigned())
            fail_input(where, fmt::format("shape {} is not a list of non-negative integers", json_excerpt(*shape)));
        if (dim.get<uint64_t>() > (uint64_t{1} << 48))
            fail_input(where, fmt::format("shape {} is absurdly large", json_excerpt(*shape)));
        entry.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
    }
    uint64_t count = 1;
    for (int64_t dim : entry.shape) {
        const uint64_t d = static_cast<uint64_t>(dim);
        if (d != 0 && count > (uint64_t{1} << 60) / d)
            fail_input(where, fmt::format("shape {} is absurdly large", json_excerpt(*shape)));
        count *= d;
    }
    if (count > (uint64_t{1} << 60) / info->bytes)
        fail_input(where, fmt::format("shape {} is absurdly large", json_excerpt(*shape)));

    // Step 3: the byte range must hold exactly count elements.
    auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned())
        fail_input(where, "has no \"data_offsets\" pair of non-negative integers");
    entry.begin = (*offsets)[0].get<uint64_t>();
    entry.end = (*offsets)[1].get<uint64_t>();
    if (entry.begin > entry.end) fail_input(where, "data_offsets begin after they end");
    if (entry.end - entry.begin != count * info->bytes)
        fail_input(where,
                   fmt::format("shape {} of {} needs {} bytes but data_offsets span {}", shape_string(entry.shape),
                               info->name, count * info->bytes, entry.end - entry.begin));
    return entry;
}

// The dtypes converted to and from float32.
bool is_float_dtype(SafetensorsDtype dtype) {
    return dtype == SafetensorsDtype::f64 || dtype == SafetensorsDtype::f32 || dtype == SafetensorsDtype::f16 ||
           dtype == SafetensorsDtype::bf16;
}

template <typename Convert>
void convert_elements(const unsigned char* src, size_t element_bytes, Tensor& tensor, Convert convert) {
    for (int64_t i = 0; i < tensor.size(); ++i) tensor.data[static_cast<size_t>(i)] = convert(src + i * element_bytes);
}

}  // namespace

const char* safetensors_dtype_name(SafetensorsDtype dtype) { return dtype_info(dtype).name; }

SafetensorsFile::SafetensorsFile(std::string path, const LoadLimits& limits)
    : path_(std::move(path)), limits_(limits), file_(std::make_unique<MappedFile>(path_, "safetensors file")) {
    const unsigned char* bytes = file_->data();
    const uint64_t size = file_->size();

    // Step 1: header length, checked against the file and a sane maximum before reading it.
    if (size < 8) fail_input(path_, fmt::format("too short for a safetensors file ({} bytes)", size));
    uint64_t header_len = 0;
    std::memcpy(&header_len, bytes, 8);
    if (header_len > max_header_bytes)
        fail_input(path_, fmt::format("safetensors header length {} is absurd", header_len));
    if (header_len > size - 8)
        fail_input(path_, fmt::format("truncated: safetensors header length {} exceeds the file ({} bytes)", header_len,
                                      size));
    data_start_ = 8 + header_len;
    const uint64_t buffer_size = size - data_start_;

    // Step 2: parse the JSON header.
    check_memory_elements(header_len, json_bytes_per_text_byte, limits_.memory_budget,
                          fmt::format("{}: parsing the safetensors header", path_));
    const nlohmann::json header =
        parse_json_unique_names(std::string_view(reinterpret_cast<const char*>(bytes) + 8, header_len), path_,
                                "safetensors header is not valid JSON", "safetensors header: tensor");
    if (!header.is_object()) fail_input(path_, "safetensors header is not a JSON object");

    // Step 3: validate every entry on its own, then the byte ranges against the buffer.
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") {
            if (!value.is_object()) fail_input(path_, "__metadata__ is not an object");
            for (const auto& [key, text] : value.items())
                if (text.is_string()) metadata_[key] = text.get<std::string>();
            continue;
        }
        const std::string where = fmt::format("{}: tensor '{}'", path_, name);
        SafetensorsEntry entry = parse_entry(value, where);
        if (entry.end > buffer_size)
            fail_input(where, fmt::format("data_offsets end at {}, past the data buffer ({} bytes; file truncated?)",
                                          entry.end, buffer_size));
        entries_.emplace(name, std::move(entry));
    }

    // Step 4: no two tensors may share bytes.
    std::vector<std::pair<const std::string*, const SafetensorsEntry*>> by_begin;
    for (const auto& [name, entry] : entries_)
        if (entry.end > entry.begin) by_begin.emplace_back(&name, &entry);
    std::sort(by_begin.begin(), by_begin.end(),
              [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
    for (size_t i = 1; i < by_begin.size(); ++i)
        if (by_begin[i].second->begin < by_begin[i - 1].second->end)
            fail_input(fmt::format("{}: tensor '{}'", path_, *by_begin[i].first),
                       fmt::format("overlaps tensor '{}'", *by_begin[i - 1].first));
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile&&) noexcept = default;
SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&&) noexcept = default;

std::vector<std::string> SafetensorsFile::names() const {
    std::vector<std::string> names;
    for (const auto& [name, entry] : entries_) names.push_back(name);
    return names;
}

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) fail_input(path_, fmt::format("has no tensor '{}'", name));
    return it->second;
}

void SafetensorsFile::check_element_type(const std::string& name) const {
    const SafetensorsEntry& e = entry(name);
    if (!is_float_dtype(e.dtype))
        fail_input(
            fmt::format("{}: tensor '{}'", path_, name),
            fmt::format("has dtype {}; only F64, F32, F16 and BF16 can be loaded", safetensors_dtype_name(e.dtype)));
}

Tensor SafetensorsFile::load(const std::string& name) const {
    check_element_type(name);
    const SafetensorsEntry& e = entry(name);
    const unsigned char* src = file_->data() + data_start_ + e.begin;
    const std::string what = fmt::format("{}: tensor '{}'", path_, name);
    check_memory_elements(static_cast<uint64_t>(element_count(e.shape, what)), sizeof(float), limits_.memory_budget,
                          fmt::format("{} of shape {}", what, shape_string(e.shape)));
    // Sizes were checked against the file when it was opened; every element is written below.
    Tensor t = Tensor::uninitialized(e.shape, what);
    if (t.empty()) return t;
    switch (e.dtype) {
        case SafetensorsDtype::f32:
            if (!t.empty()) std::memcpy(t.ptr(), src, t.data.size() * 4);  // an empty vector's pointer may be null
            break;
        case SafetensorsDtype::f64:
            convert_elements(src, 8, t, [](const unsigned char* p) {
                double d;
                std::memcpy(&d, p, 8);
                return narrow_to_float(d);
            });
            break;
        case SafetensorsDtype::f16:
            convert_elements(src, 2, t, [](const unsigned char* p) {
                uint16_t h;
                std::memcpy(&h, p, 2);
                return f16_to_float(h);
            });
            break;
        case SafetensorsDtype::bf16:
            convert_elements(src, 2, t, [](const unsigned char* p) {
                uint16_t h;
                std::memcpy(&h, p, 2);
                return bf16_to_float(h);
            });
            break;
        default:
            break;  // refused above
    }
    // A streamed model's resident memory holds no block's file pages (as GgufFile::load).
    file_->release(data_start_ + e.begin, e.end - e.begin);
    require_finite(t, name, path_, limits_);
    return t;
}

void write_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                       SafetensorsDtype dtype) {
    if (!is_float_dtype(dtype))
        throw Error(ErrorKind::internal,
                    fmt::format("{}: write_safetensors supports F64, F32, F16 and BF16 only", path));
    const uint64_t element_bytes = dtype_info(dtype).bytes;

    // Step 1: header with consecutive byte ranges, padded with spaces to a multiple of 8.
    nlohmann::json header = nlohmann::json::object();
    uint64_t offset = 0;
    for (const auto& [name, tensor] : tensors) {
        const uint64_t bytes = static_cast<uint64_t>(tensor.size()) * element_bytes;
        header[name] = {{"dtype", safetensors_dtype_name(dtype)},
                        {"shape", tensor.shape},
                        {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string header_text = header.dump();
    header_text.append((8 - header_text.size() % 8) % 8, ' ');

    // Step 2: length, header, then each tensor converted to the storage dtype.
    FileWriter out(path);
    const uint64_t header_len = header_text.size();
    out.write({reinterpret_cast<const char*>(&header_len), 8});
    out.write(header_text);
    for (const auto& [name, tensor] : tensors) {
        std::vector<unsigned char> bytes(static_cast<size_t>(tensor.size()) * element_bytes);
        for (size_t i = 0; i < tensor.data.size(); ++i) {
            const float v = tensor.data[i];
            unsigned char* dst = bytes.data() + i * element_bytes;
            if (dtype == SafetensorsDtype::f64) {
                const double d = v;
                std::memcpy(dst, &d, 8);
            } else if (dtype == SafetensorsDtype::f32)
                std::memcpy(dst, &v, 4);
            else {
                const uint16_t h = dtype == SafetensorsDtype::f16 ? float_to_f16(v) : float_to_bf16(v);
                std::memcpy(dst, &h, 2);
            }
        }
        out.write({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    }
    out.close();
}

uint16_t float_to_f16(float value) {
    uint32_t x = std::bit_cast<uint32_t>(value);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    x &= 0x7fffffff;
    if (x >= 0x7f800000) return sign | (x > 0x7f800000 ? 0x7e00 : 0x7c00);  // NaN stays NaN, inf stays inf
    if (x >= 0x477ff000) return sign | 0x7c00;                              // >= 65520 rounds to inf
    if (x < 0x38800000) {
        // Below 2^-14: a half subnormal, mantissa = value * 2^24 rounded to nearest even (exact scaling).
        const float scaled = std::bit_cast<float>(x) * 16777216.0f;
        return sign | static_cast<uint16_t>(std::nearbyint(scaled));
    }
    // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to nearest even.
    x += 0xc8000fff + ((x >> 13) & 1);
    return sign | static_cast<uint16_t>(x >> 13);
}

float f16_to_float(uint16_t h) {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16;
    const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ffu;
    if (exponent == 0) {
        const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16(float value) {
    const uint32_t x = std::bit_cast<uint32_t>(value);
    if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
    return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

}  // namespace attn_viz
