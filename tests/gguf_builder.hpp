// Writes GGUF files byte by byte for the tests (version 3, little-endian): metadata of every kind
// and tensors with raw data, each at the next aligned offset, exactly as the specification lays
// them out. Tests then corrupt the bytes to make hostile files.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace test_support {

class GgufBuilder {
public:
    uint32_t version = 3;
    uint64_t alignment = 32;  // the data's alignment (set general.alignment too when not 32)

    template <typename T>
    static void put(std::string& out, const T& value) {
        out.append(reinterpret_cast<const char*>(&value), sizeof value);
    }
    static void put_string(std::string& out, const std::string& s) {
        put(out, static_cast<uint64_t>(s.size()));
        out += s;
    }

    void add_u32(const std::string& key, uint32_t value) { scalar(key, 4, value); }
    void add_i32(const std::string& key, int32_t value) { scalar(key, 5, value); }
    void add_f32(const std::string& key, float value) { scalar(key, 6, value); }
    void add_u64(const std::string& key, uint64_t value) { scalar(key, 10, value); }
    void add_bool(const std::string& key, bool value) { scalar(key, 7, static_cast<uint8_t>(value)); }
    void add_string(const std::string& key, const std::string& value) {
        header(key, 8);
        put_string(kv_, value);
    }
    void add_string_array(const std::string& key, const std::vector<std::string>& values) {
        array_header(key, 8, values.size());
        for (const std::string& s : values) put_string(kv_, s);
    }
    void add_f32_array(const std::string& key, const std::vector<float>& values) {
        array_header(key, 6, values.size());
        for (float v : values) put(kv_, v);
    }
    void add_i32_array(const std::string& key, const std::vector<int32_t>& values) {
        array_header(key, 5, values.size());
        for (int32_t v : values) put(kv_, v);
    }

    // dims innermost first (as GGUF stores them); `data` is the tensor's raw bytes.
    void add_tensor(const std::string& name, const std::vector<int64_t>& dims, uint32_t type, const std::string& data) {
        while (data_.size() % alignment) data_ += '\0';
        put_string(infos_, name);
        put(infos_, static_cast<uint32_t>(dims.size()));
        for (int64_t d : dims) put(infos_, d);
        put(infos_, type);
        put(infos_, static_cast<uint64_t>(data_.size()));
        data_ += data;
        ++tensors_;
    }
    void add_f32_tensor(const std::string& name, const std::vector<int64_t>& dims, std::span<const float> values) {
        add_tensor(name, dims, 0, std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
    }

    std::string bytes() const {
        std::string out = "GGUF";
        put(out, version);
        put(out, tensors_);
        put(out, kvs_);
        out += kv_;
        out += infos_;
        while (out.size() % alignment) out += '\0';
        return out + data_;
    }
    // Bytes before the tensor infos (for tests that corrupt a field of the first info).
    size_t infos_start() const { return 24 + kv_.size(); }

private:
    void header(const std::string& key, uint32_t type) {
        put_string(kv_, key);
        put(kv_, type);
        ++kvs_;
    }
    void array_header(const std::string& key, uint32_t element_type, uint64_t count) {
        header(key, 9);
        put(kv_, element_type);
        put(kv_, count);
    }
    template <typename T>
    void scalar(const std::string& key, uint32_t type, T value) {
        header(key, type);
        put(kv_, value);
    }

    std::string kv_, infos_, data_;
    uint64_t kvs_ = 0, tensors_ = 0;
};

}  // namespace test_support
