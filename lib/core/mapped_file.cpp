#include "mapped_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.hpp"
#include "input_files.hpp"

namespace attn_viz {

MappedFile::MappedFile(std::string path, const std::string& role) : path_(std::move(path)) {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorKind::io, path_ + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int stat_errno = errno;
        ::close(fd);
        throw Error(ErrorKind::io, path_ + ": cannot read its size: " + std::strerror(stat_errno));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(ErrorKind::io, path_ + ": not a regular file (a directory, device or pipe)");
    }
    record_input_file(fd, path_, role);
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int map_errno = errno;
            ::close(fd);
            throw Error(ErrorKind::io, path_ + ": cannot map: " + std::strerror(map_errno));
        }
        data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);
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
