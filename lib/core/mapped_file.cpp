#include "mapped_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "error.hpp"
#include "input_open.hpp"
#include "unique_fd.hpp"

namespace attn_viz {

MappedFile::MappedFile(std::string path, const std::string& role) : path_(std::move(path)) {
    const UniqueFd fd = open_input_file(path_, role);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw Error(ErrorKind::io, fmt::format("{}: cannot read its size: {}", path_, std::strerror(errno)));
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
        if (p == MAP_FAILED) throw Error(ErrorKind::io, fmt::format("{}: cannot map: {}", path_, std::strerror(errno)));
        data_ = static_cast<const unsigned char*>(p);
    }
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

void MappedFile::release(size_t offset, size_t bytes) const {
    if (!data_ || offset >= size_) return;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t begin = offset / page * page, end = std::min(size_, offset + std::min(bytes, size_ - offset));
    ::madvise(const_cast<unsigned char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

}  // namespace attn_viz
