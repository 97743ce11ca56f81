#include "output_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <sys/stat.h>

#include "error.hpp"
#include "file_write.hpp"
#include "input_files.hpp"

namespace fs = std::filesystem;

namespace attn_viz {
namespace {

constexpr const char* manifest_name = ".attn-viz-run";  // lists a run's files, one per line

// Refuses (Error usage) when the entry `name` of the open folder `dir_fd` (AT_FDCWD: a path),
// shown as `shown`, is a file the run reads; `action` is "overwrite" or "remove".
void refuse_if_input(int dir_fd, const std::string& name, const std::string& shown, const std::string& action) {
    const std::optional<InputFile> input = input_file_at(dir_fd, name);
    if (!input) return;
    throw Error(ErrorKind::usage, fmt::format("{}: refusing to {} an input: {}{}{}", shown, action, input->path,
                                              input->role.empty() ? "" : ", read as ", input->role));
}

// "layer_01/head_03.png" -> {"layer_01", "head_03.png"}; "stats.json" -> {"", "stats.json"}.
std::pair<std::string, std::string> split_folder(const std::string& relative) {
    const size_t slash = relative.rfind('/');
    if (slash == std::string::npos) return {"", relative};
    return {relative.substr(0, slash), relative.substr(slash + 1)};
}

enum class Walk {
    find_to_remove,  // a missing part, a symbolic link or a non-folder: no folder
    find_to_write,   // a missing part: no folder; a symbolic link or a non-folder: Error(usage)
    make_to_write,   // as find_to_write, but missing parts are made
};

// The folder `folder` ("", "layer_01", "seq_00/layer_01") below the open folder `root` (named
// `root_name` in messages), opened one part at a time without following a symbolic link, so that
// nothing is ever reached outside `root`; an empty UniqueFd when there is no such folder (`walk`).
UniqueFd open_folder_below(int root, const std::string& root_name, const std::string& folder, Walk walk) {
    UniqueFd current(openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    size_t start = 0;
    while (current && start < folder.size()) {
        const size_t end = std::min(folder.find('/', start), folder.size());
        const std::string part = folder.substr(start, end - start);
        const std::string shown = fmt::format("{}/{}", root_name, folder.substr(0, end));
        const auto open_part = [&] {
            return UniqueFd(openat(current.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        };
        UniqueFd next = open_part();
        if (!next && errno == ENOENT && walk == Walk::make_to_write) {
            if (mkdirat(current.get(), part.c_str(), 0777) != 0 && errno != EEXIST)
                throw Error(ErrorKind::io, fmt::format("{}: cannot create: {}", shown, std::strerror(errno)));
            next = open_part();
        }
        if (!next && (errno == ELOOP || errno == ENOTDIR) && walk != Walk::find_to_remove)
            throw Error(ErrorKind::usage,
                        fmt::format("{}: is a symbolic link or not a folder: refusing to write through it", shown));
        if (!next && walk == Walk::make_to_write)
            throw Error(ErrorKind::io, fmt::format("{}: cannot open: {}", shown, std::strerror(errno)));
        current = std::move(next);
        start = end + 1;
    }
    return current;
}

// The files a previous run listed in its manifest in the open folder `root`, keeping only names
// attn-viz writes (a hand-edited or planted entry is never acted on).
std::vector<std::string> read_manifest(int root) {
    std::vector<std::string> files;
    const UniqueFd manifest(openat(root, manifest_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!manifest) return files;
    std::string text;
    char buffer[65536];
    for (ssize_t n; (n = read(manifest.get(), buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
    for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        const std::string line = text.substr(start, end - start);
        if (is_attn_viz_output_name(line)) files.push_back(line);
        start = end + 1;
    }
    return files;
}

bool is_regular_file_at(int dir_fd, const std::string& name) {
    struct stat st {};
    return fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

bool is_folder_at(int dir_fd, const std::string& name) {
    struct stat st {};
    return fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

bool is_attn_viz_output_name(const std::string& relative) {
    static const std::set<std::string> extensions = {".png", ".svg", ".json", ".csv", ".html", ".npy"};
    for (size_t start = 0;;) {
        const size_t end = relative.find('/', start);
        const std::string part = relative.substr(start, end - start);  // to the end when there is no '/'
        if (part.empty() || part[0] == '.' ||
            part.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                std::string::npos)
            return false;
        const size_t dot = part.rfind('.');
        if (end == std::string::npos) return dot != std::string::npos && extensions.count(part.substr(dot));
        start = end + 1;
    }
}

OutputDir::OutputDir(std::string dir, bool force) : dir_(std::move(dir)) {
    if (dir_.empty()) throw Error(ErrorKind::usage, "the output directory has no name");
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
    std::error_code ec;
    if (fs::exists(dir_, ec)) {
        if (!fs::is_directory(dir_, ec))
            throw Error(ErrorKind::usage, fmt::format("{}: exists and is not a directory", dir_));
        if (!force && fs::exists(fs::path(dir_) / manifest_name, ec))
            throw Error(ErrorKind::usage, fmt::format("{}: holds an earlier attn-viz run, which is kept", dir_),
                        Remedy::replace_earlier_run);
        if (!force && !fs::is_empty(dir_, ec))
            throw Error(ErrorKind::usage,
                        fmt::format("{}: directory is not empty and holds no previous attn-viz run", dir_),
                        Remedy::force_output_dir);
    }
    // True until commit() has moved everything into place: until then nothing is in DIR.
    set_interrupt_line(
        fs::exists(fs::path(dir_) / manifest_name, ec)
            ? fmt::format("attn-viz: interrupted: nothing written, the previous results in {} are kept", dir_)
            : fmt::format("attn-viz: interrupted: nothing written to {}", dir_));
}

OutputDir::OutputDir(KeepNothing) : keep_nothing_(true) {}

OutputDir::~OutputDir() {  // the staging folders remove themselves unless committed
    for (const std::string& staged : staged_paths_) forget_staged_file(staged);
}

std::string OutputDir::file(const std::string& relative) {
    if (relative != manifest_name && !is_attn_viz_output_name(relative))
        throw Error(ErrorKind::internal, fmt::format("{}: not a name attn-viz writes in a run directory", relative));
    std::error_code ec;
    const std::string destination =
        keep_nothing_ ? relative : fmt::format("{}/{}", dir_, relative);  // as errors name it
    if (keep_nothing_) {
        if (!staging_)
            staging_ = std::make_unique<StagingDir>((fs::temp_directory_path() / "attn-viz-unkept").string());
    } else {
        refuse_if_input(AT_FDCWD, destination, destination, "overwrite");
        if (!staging_) {
            const fs::path parent = fs::path(dir_).parent_path();
            if (!parent.empty()) fs::create_directories(parent, ec);
            if (ec) throw Error(ErrorKind::io, fmt::format("{}: cannot create: {}", parent.string(), ec.message()));
            staging_ = std::make_unique<StagingDir>(dir_);
        }
    }
    const fs::path target = fs::path(staging_->path()) / relative;
    fs::create_directories(target.parent_path(), ec);
    if (ec)
        throw Error(ErrorKind::io,
                    fmt::format("{}: cannot create: {}", fs::path(destination).parent_path().string(), ec.message()));
    files_.push_back(relative);
    staged_paths_.push_back(target.string());
    name_staged_file(target.string(), destination);
    return target.string();
}

std::vector<std::pair<std::string, std::string>> OutputDir::staged_files() const {
    std::vector<std::pair<std::string, std::string>> staged;
    for (const std::string& relative : files_)
        staged.emplace_back(relative, (fs::path(staging_->path()) / relative).string());
    return staged;
}

std::string OutputDir::external_file(const std::string& final_path) {
    if (keep_nothing_)
        throw Error(ErrorKind::internal,
                    fmt::format("{}: a run that keeps no files writes no file outside it", final_path));
    std::error_code ec;
    const fs::file_status status = fs::status(final_path, ec);
    if (fs::is_directory(status))
        throw Error(ErrorKind::usage, fmt::format("{}: is a directory, expected a file name", final_path));
    if (fs::exists(status) && !fs::is_regular_file(status)) return final_path;  // a device or FIFO: nothing to keep
    refuse_if_input(AT_FDCWD, final_path, final_path, "overwrite");
    for (const External& e : externals_)
        if (e.final_path == final_path) return fmt::format("{}/{}", e.staging->path(), e.staged_name);
    const fs::path target(final_path);
    std::unique_ptr<StagingDir>& staging = external_staging_[target.parent_path().string()];
    if (!staging) {
        // Missing parent folders are created, as the run directory's are.
        if (!target.parent_path().empty()) {
            fs::create_directories(target.parent_path(), ec);
            if (ec)
                throw Error(ErrorKind::io,
                            fmt::format("{}: cannot create: {}", target.parent_path().string(), ec.message()));
        }
        staging = std::make_unique<StagingDir>(final_path);
    }
    externals_.push_back({final_path, target.filename().string(), staging.get()});
    staged_paths_.push_back(fmt::format("{}/{}", staging->path(), externals_.back().staged_name));
    name_staged_file(staged_paths_.back(), final_path);
    return staged_paths_.back();
}

void OutputDir::protect_inputs(const std::vector<std::string>& inputs) {
    for (const std::string& input : inputs) record_input_file(input, "");
}

void OutputDir::commit() {
    if (keep_nothing_) return;  // the staging folder removes itself
    // Step 0: an interrupt from here on (the renames below take microseconds) is only recorded,
    // and acted on (exit 130) once everything is in place or commit() has failed.
    const HeldInterrupts held_interrupts;
    // Step 1: the manifest, so a later run knows which files are its predecessor's.
    {
        std::string manifest;
        for (const std::string& f : files_)
            if (f != manifest_name) manifest += fmt::format("{}\n", f);
        FileWriter writer(file(manifest_name), fmt::format("{}/{}", dir_, manifest_name));
        writer.write(manifest);
        writer.close();
    }
    // Step 2: no destination may be a file the run has read by now; checked before anything moves.
    for (const External& e : externals_) refuse_if_input(AT_FDCWD, e.final_path, e.final_path, "overwrite");
    std::error_code ec;
    if (!fs::exists(dir_)) {
        // Step 3a: a new directory appears whole, in one rename.
        fs::rename(staging_->path(), dir_, ec);
        if (ec) throw Error(ErrorKind::io, fmt::format("{}: cannot move results into place: {}", dir_, ec.message()));
        staging_->release();
    } else {
        move_into_existing_dir();
    }
    // Step 4: files outside the directory.
    for (const External& e : externals_)
        if (renameat(e.staging->fd(), e.staged_name.c_str(), AT_FDCWD, e.final_path.c_str()) != 0)
            throw Error(ErrorKind::io,
                        fmt::format("{}: cannot move into place: {}", e.final_path, std::strerror(errno)));
    for (auto& [folder, staging] : external_staging_) staging->remove();
    set_interrupt_line(fmt::format("attn-viz: interrupted after the results were written to {}", dir_));
}

// Step 3b of commit(): each file is replaced atomically, then files of the previous run that this
// one did not write are removed. Every check comes first; nothing is reached through a symbolic
// link inside the directory.
void OutputDir::move_into_existing_dir() {
    const UniqueFd root(open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root) throw Error(ErrorKind::io, fmt::format("{}: cannot open: {}", dir_, std::strerror(errno)));
    for (const std::string& f : files_) {
        const auto [folder, name] = split_folder(f);
        const UniqueFd parent = open_folder_below(root.get(), dir_, folder, Walk::find_to_write);
        if (!parent) continue;
        refuse_if_input(parent.get(), name, fmt::format("{}/{}", dir_, f), "overwrite");
        if (is_folder_at(parent.get(), name))
            throw Error(ErrorKind::usage, fmt::format("{}/{}: is a folder, expected a file", dir_, f));
    }
    const std::set<std::string> written(files_.begin(), files_.end());
    std::vector<std::string> stale;  // the previous run's files this one does not write again
    for (const std::string& old : read_manifest(root.get())) {
        if (written.count(old)) continue;
        const auto [folder, name] = split_folder(old);
        const UniqueFd parent = open_folder_below(root.get(), dir_, folder, Walk::find_to_remove);
        if (!parent || !is_regular_file_at(parent.get(), name)) continue;
        refuse_if_input(parent.get(), name, fmt::format("{}/{}", dir_, old), "remove");
        stale.push_back(old);
    }
    for (const std::string& f : files_) {
        const auto [folder, name] = split_folder(f);
        const UniqueFd parent = open_folder_below(root.get(), dir_, folder, Walk::make_to_write);
        if (renameat(staging_->fd(), f.c_str(), parent.get(), name.c_str()) != 0)
            throw Error(ErrorKind::io, fmt::format("{}/{}: cannot move into place: {}", dir_, f, std::strerror(errno)));
    }
    for (const std::string& old : stale) {
        const auto [folder, name] = split_folder(old);
        const UniqueFd parent = open_folder_below(root.get(), dir_, folder, Walk::find_to_remove);
        if (parent && is_regular_file_at(parent.get(), name)) unlinkat(parent.get(), name.c_str(), 0);
    }
    staging_->remove();
}

void refuse_overwriting_inputs(const std::string& path, const std::vector<std::string>& inputs) {
    for (const std::string& input : inputs) record_input_file(input, "");
    if (!path.empty()) refuse_if_input(AT_FDCWD, path, path, "overwrite");
}

}  // namespace attn_viz
