// Read-only memory map of an input file: loaders parse straight from the mapping, so a
// 400 MB checkpoint is never copied into a std::string first. Every file mapped is recorded as an
// input of the run (input_files.hpp), so no output can replace it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attn_viz {

class MappedFile {
public:
    // Maps the whole file and records it as an input read as `role` ("weights", ".npy tensor");
    // throws Error(io) naming the path when it cannot be opened.
    MappedFile(std::string path, const std::string& role);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::string& path() const { return path_; }
    const unsigned char* data() const { return data_; }
    size_t size() const { return size_; }
    std::string_view text() const { return {reinterpret_cast<const char*>(data_), size_}; }
    // Drops the pages holding [offset, offset + bytes) from this process's resident memory once a
    // loader is done with them (a GGUF block dequantized): they stay in the page cache, and a later
    // read of them maps them again. Advice only: the mapping stays valid.
    void release(size_t offset, size_t bytes) const;

private:
    std::string path_;
    const unsigned char* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace attn_viz
