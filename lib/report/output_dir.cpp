#include "output_dir.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <fcntl.h>
#include <set>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.hpp"

namespace fs = std::filesystem;

namespace attn_viz {
namespace {

constexpr const char* manifest_name = ".attn-viz-run";  // lists a run's files, one per line

// Paths the signal handler must remove, kept in fixed storage (no allocation in a handler).
struct PendingPaths {
    static constexpr int capacity = 16;
    char paths[capacity][4096] = {};
    volatile sig_atomic_t used[capacity] = {};
    std::mutex mutex;

    void add(const std::string& p) {
        std::lock_guard lock(mutex);
        for (int i = 0; i < capacity; ++i)
            if (!used[i] && p.size() < sizeof paths[i]) {
                std::memcpy(paths[i], p.c_str(), p.size() + 1);
                used[i] = 1;
                return;
            }
    }
    void remove(const std::string& p) {
        std::lock_guard lock(mutex);
        for (int i = 0; i < capacity; ++i)
            if (used[i] && p == paths[i]) used[i] = 0;
    }
};
PendingPaths pending;

// While commit() moves files into place, an interrupt waits for it to finish.
std::atomic<bool> committing{false}, interrupt_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

// Removes `name` (relative to the directory `parent`, or a path with AT_FDCWD) and, if it is a
// directory, everything below it, with raw system calls only (openat, getdents64, unlinkat,
// close): it runs in the signal handler, where malloc and fork could deadlock on a lock the
// interrupted thread holds. Symbolic links are removed, never followed.
void empty_directory_in_handler(int dir, char* buffer, size_t size, int depth);

void remove_tree_in_handler(int parent, const char* name, int depth) {
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
    if (depth > 16) return;
    const int dir = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return;
    alignas(8) char buffer[4096];
    // Read from the start until a pass finds nothing left (entries shift as they are removed),
    // then remove the directory; other threads (PNG encoders) may still be adding files, so an
    // ENOTEMPTY sends it round again. Bounded, in case something cannot be removed.
    for (int attempt = 0; attempt < 16; ++attempt) {
        empty_directory_in_handler(dir, buffer, sizeof buffer, depth);
        if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) break;
    }
    close(dir);
}

// Removes every entry of the open directory `dir` (see remove_tree_in_handler).
void empty_directory_in_handler(int dir, char* buffer, size_t size, int depth) {
    for (int pass = 0, removed = 1; removed && pass < 64; ++pass) {
        removed = 0;
        lseek(dir, 0, SEEK_SET);
        for (long n; (n = syscall(SYS_getdents64, dir, buffer, size)) > 0;) {
            for (long at = 0; at < n;) {
                const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
                at += entry->d_reclen;
                const char* child = entry->d_name;
                if (child[0] == '.' && (child[1] == 0 || (child[1] == '.' && child[2] == 0))) continue;
                remove_tree_in_handler(dir, child, depth + 1);
                removed = 1;
            }
        }
    }
}

// The SIGINT/SIGTERM/SIGHUP handler: removes every pending staging path, exits 130.
void remove_pending_and_exit(int) {
    if (committing) {
        interrupt_pending = true;
        return;
    }
    for (int i = 0; i < PendingPaths::capacity; ++i)
        if (pending.used[i]) remove_tree_in_handler(AT_FDCWD, pending.paths[i], 0);
    _exit(130);
}

// For its lifetime, an interrupt is only recorded (any thread may receive it, so blocking the
// signal in this one would not do); when it ends, a recorded interrupt exits with 130.
class HeldInterrupts {
public:
    HeldInterrupts() { committing = true; }
    ~HeldInterrupts() {
        committing = false;
        if (interrupt_pending) remove_pending_and_exit(0);
    }
    HeldInterrupts(const HeldInterrupts&) = delete;
    HeldInterrupts& operator=(const HeldInterrupts&) = delete;
};

std::set<std::string> read_manifest(const fs::path& dir) {
    std::set<std::string> files;
    std::ifstream in(dir / manifest_name);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) files.insert(line);
    return files;
}

// Only plain relative paths below the run directory may be listed or removed.
bool safe_relative(const std::string& p) {
    const fs::path path(p);
    if (path.empty() || path.is_absolute()) return false;
    for (const auto& part : path)
        if (part == ".." || part == ".") return false;
    return true;
}

}  // namespace

void install_interrupt_cleanup() {
    struct sigaction action {};
    action.sa_handler = remove_pending_and_exit;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a signal recorded during commit() must not fail its system calls
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGHUP, &action, nullptr);
    signal(SIGXFSZ, SIG_IGN);
}

OutputDir::OutputDir(std::string dir, bool force) : dir_(std::move(dir)) {
    if (dir_.empty()) throw Error(ErrorKind::usage, "--out needs a directory");
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
    std::error_code ec;
    if (fs::exists(dir_, ec)) {
        if (!fs::is_directory(dir_, ec)) throw Error(ErrorKind::usage, dir_ + ": exists and is not a directory");
        if (!force && !fs::exists(fs::path(dir_) / manifest_name) && !fs::is_empty(dir_, ec))
            throw Error(ErrorKind::usage, dir_ + ": directory is not empty and holds no previous attn-viz run "
                                                 "(use --force to write into it anyway)");
    }
    staging_ = dir_ + ".attn-viz-partial-" + std::to_string(getpid());
}

OutputDir::~OutputDir() {
    if (!committed_) discard();
}

std::string OutputDir::file(const std::string& relative) {
    if (files_.empty() && !fs::exists(staging_)) {
        // Registered before it exists: a signal between creating and registering would leave it.
        pending.add(staging_);
        std::error_code ec;
        fs::create_directories(staging_, ec);
        if (ec) throw Error(ErrorKind::io, staging_ + ": cannot create: " + ec.message());
    }
    const fs::path target = fs::path(staging_) / relative;
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw Error(ErrorKind::io, target.parent_path().string() + ": cannot create: " + ec.message());
    files_.push_back(relative);
    return target.string();
}

std::string OutputDir::external_file(const std::string& final_path) {
    std::error_code ec;
    const fs::file_status status = fs::status(final_path, ec);
    if (fs::is_directory(status)) throw Error(ErrorKind::usage, final_path + ": is a directory, expected a file name");
    if (fs::exists(status) && !fs::is_regular_file(status)) return final_path;  // a device or FIFO: nothing to keep
    const std::string temp = final_path + ".attn-viz-partial-" + std::to_string(getpid());
    externals_.emplace_back(temp, final_path);
    pending.add(temp);
    return temp;
}

void OutputDir::commit() {
    // Step 0: an interrupt from here on (the renames below take microseconds) is only recorded,
    // and acted on (exit 130) once everything is in place or commit() has failed.
    const HeldInterrupts held_interrupts;
    // Step 1: the manifest, so a later run knows which files are its predecessor's.
    {
        std::ofstream manifest(file(manifest_name));
        for (const std::string& f : files_)
            if (f != manifest_name) manifest << f << '\n';
        if (!manifest.flush()) throw Error(ErrorKind::io, dir_ + ": cannot write the run manifest (disk full?)");
    }
    std::error_code ec;
    if (!fs::exists(dir_)) {
        // Step 2a: a new directory appears whole, in one rename.
        fs::create_directories(fs::absolute(dir_).parent_path(), ec);
        fs::rename(staging_, dir_, ec);
        if (ec) throw Error(ErrorKind::io, dir_ + ": cannot move results into place: " + ec.message());
    } else {
        // Step 2b: an existing directory: each file is replaced atomically, then files of the
        // previous run that this one did not write are removed.
        const std::set<std::string> previous = read_manifest(dir_);
        for (const std::string& f : files_) refuse_overwriting_inputs((fs::path(dir_) / f).string(), inputs_);
        for (const std::string& old : previous)
            if (safe_relative(old)) refuse_overwriting_inputs((fs::path(dir_) / old).string(), inputs_);
        for (const std::string& f : files_) {
            const fs::path to = fs::path(dir_) / f;
            fs::create_directories(to.parent_path(), ec);
            fs::rename(fs::path(staging_) / f, to, ec);
            if (ec) throw Error(ErrorKind::io, to.string() + ": cannot move into place: " + ec.message());
        }
        const std::set<std::string> written(files_.begin(), files_.end());
        for (const std::string& old : previous)
            if (!written.count(old) && safe_relative(old)) fs::remove(fs::path(dir_) / old, ec);
        fs::remove_all(staging_, ec);
    }
    pending.remove(staging_);
    // Step 3: files outside the directory.
    for (const auto& [temp, final_path] : externals_) {
        fs::rename(temp, final_path, ec);
        if (ec) throw Error(ErrorKind::io, final_path + ": cannot move into place: " + ec.message());
        pending.remove(temp);
    }
    committed_ = true;
}

void OutputDir::discard() noexcept {
    std::error_code ec;
    fs::remove_all(staging_, ec);
    pending.remove(staging_);
    for (const auto& [temp, final_path] : externals_) {
        fs::remove(temp, ec);
        pending.remove(temp);
    }
}

void refuse_overwriting_inputs(const std::string& path, const std::vector<std::string>& inputs) {
    std::error_code ec;
    for (const std::string& input : inputs)
        if (!input.empty() && fs::exists(path, ec) && fs::equivalent(path, input, ec))
            throw Error(ErrorKind::usage, path + ": refusing to overwrite an input file");
}

}  // namespace attn_viz
