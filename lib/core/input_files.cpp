#include "input_files.hpp"

#include <fcntl.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include <sys/stat.h>

namespace attn_viz {
namespace {

using FileIdentity = std::pair<dev_t, ino_t>;

struct InputRegistry {
    std::mutex mutex;
    std::map<FileIdentity, InputFile> files;
};

InputRegistry& registry() {
    static InputRegistry instance;
    return instance;
}

std::optional<FileIdentity> identity(int dir_fd, const std::string& name, int flags) {
    struct stat st {};
    if (fstatat(dir_fd, name.c_str(), &st, flags) != 0) return std::nullopt;
    return FileIdentity{st.st_dev, st.st_ino};
}

void record(const struct stat& st, const std::string& path, const std::string& role) {
    if (!S_ISREG(st.st_mode)) return;
    const FileIdentity id{st.st_dev, st.st_ino};
    InputRegistry& r = registry();
    const std::lock_guard lock(r.mutex);
    auto [it, added] = r.files.try_emplace(id, InputFile{path, role});
    if (added) return;
    // A record of an earlier file with this inode number (deleted since) gives way.
    if (identity(AT_FDCWD, it->second.path, 0) != id)
        it->second = InputFile{path, role};
    else if (it->second.role.empty())
        it->second.role = role;
}

}  // namespace

void record_input_file(int fd, const std::string& path, const std::string& role) {
    struct stat st {};
    if (fstat(fd, &st) == 0) record(st, path, role);
}

void record_input_file(const std::string& path, const std::string& role) {
    struct stat st {};
    if (!path.empty() && stat(path.c_str(), &st) == 0) record(st, path, role);
}

std::optional<InputFile> input_file_at(int dir_fd, const std::string& name) {
    for (const int flags : {AT_SYMLINK_NOFOLLOW, 0}) {
        const std::optional<FileIdentity> id = identity(dir_fd, name, flags);
        if (!id) continue;
        std::optional<InputFile> found;
        {
            InputRegistry& r = registry();
            const std::lock_guard lock(r.mutex);
            auto it = r.files.find(*id);
            if (it != r.files.end()) found = it->second;
        }
        if (found && identity(AT_FDCWD, found->path, 0) == id) return found;
    }
    return std::nullopt;
}

std::vector<InputFile> recorded_input_files() {
    std::vector<std::pair<FileIdentity, InputFile>> recorded;
    {
        InputRegistry& r = registry();
        const std::lock_guard lock(r.mutex);
        recorded.assign(r.files.begin(), r.files.end());
    }
    std::vector<InputFile> files;
    for (const auto& [id, file] : recorded)
        if (identity(AT_FDCWD, file.path, 0) == id) files.push_back(file);
    std::sort(files.begin(), files.end(), [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
    return files;
}

}  // namespace attn_viz
