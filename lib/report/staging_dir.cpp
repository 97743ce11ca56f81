#include "staging_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "error.hpp"

namespace attn_viz {
namespace {

constexpr const char* staging_infix = ".attn-viz-partial-";

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

// The line an interrupt prints on stderr before exiting (set_interrupt_line), in fixed storage: the
// handler may only write() it. Its size is 0 while it is being replaced.
struct InterruptLine {
    char text[8192] = "attn-viz: interrupted\n";
    volatile sig_atomic_t size = 22;
};
InterruptLine interrupt_line;

// While commit() moves files into place, an interrupt waits for it to finish.
std::atomic<bool> committing{false}, interrupt_pending{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

// Removes `name` (relative to the directory `parent`, or a path with AT_FDCWD) and, if it is a
// directory, everything below it, with raw system calls only (openat, getdents64, unlinkat,
// close): it runs in the signal handler, where malloc and fork could deadlock on a lock the
// interrupted thread holds. Symbolic links are removed, never followed.
void empty_directory(int dir, char* buffer, size_t size, int depth);

void remove_tree(int parent, const char* name, int depth) {
    if (unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
    if (depth > 16) return;
    const int dir = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return;
    alignas(8) char buffer[4096];
    // Read from the start until a pass finds nothing left (entries shift as they are removed),
    // then remove the directory; other threads (PNG encoders) may still be adding files, so an
    // ENOTEMPTY sends it round again. Bounded, in case something cannot be removed.
    for (int attempt = 0; attempt < 16; ++attempt) {
        empty_directory(dir, buffer, sizeof buffer, depth);
        if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) break;
    }
    close(dir);
}

// Removes every entry of the open directory `dir` (see remove_tree).
void empty_directory(int dir, char* buffer, size_t size, int depth) {
    for (int pass = 0, removed = 1; removed && pass < 64; ++pass) {
        removed = 0;
        lseek(dir, 0, SEEK_SET);
        for (long n; (n = syscall(SYS_getdents64, dir, buffer, size)) > 0;) {
            for (long at = 0; at < n;) {
                const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + at);
                at += entry->d_reclen;
                const char* child = entry->d_name;
                if (child[0] == '.' && (child[1] == 0 || (child[1] == '.' && child[2] == 0))) continue;
                remove_tree(dir, child, depth + 1);
                removed = 1;
            }
        }
    }
}

// The SIGINT/SIGTERM/SIGHUP handler: removes every pending staging folder, exits 130.
void remove_pending_and_exit(int) {
    if (committing) {
        interrupt_pending = true;
        return;
    }
    for (int i = 0; i < PendingPaths::capacity; ++i)
        if (pending.used[i]) remove_tree(AT_FDCWD, pending.paths[i], 0);
    if (interrupt_line.size > 0) {
        const ssize_t written = write(STDERR_FILENO, interrupt_line.text, static_cast<size_t>(interrupt_line.size));
        (void)written;  // nothing more can be done about a stderr that cannot be written
    }
    _exit(130);
}

// Six random letters and digits.
std::string random_suffix() {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[6] = {};
    if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
        throw Error(ErrorKind::io, std::string("cannot draw a random name: ") + std::strerror(errno));
    std::string suffix;
    for (unsigned char b : bytes) suffix += alphabet[b % (sizeof alphabet - 1)];
    return suffix;
}

// Removes the staging folders for `destination_name` in the open folder `parent` whose lock
// nobody holds (their runs died). A symbolic link or a file with such a name is left alone.
void remove_dead_runs_staging(int parent, const std::string& destination_name) {
    std::vector<std::string> candidates;
    if (DIR* listing = fdopendir(dup(parent))) {
        while (const dirent* entry = readdir(listing))
            if (is_staging_name(entry->d_name, destination_name)) candidates.emplace_back(entry->d_name);
        closedir(listing);
    }
    for (const std::string& name : candidates) {
        const UniqueFd folder(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (folder && flock(folder.get(), LOCK_EX | LOCK_NB) == 0) remove_tree(parent, name.c_str(), 0);
    }
}

}  // namespace

bool is_staging_name(const std::string& name, const std::string& destination_name) {
    // DEST + staging_infix + PID + "-" + six letters or digits
    const std::string prefix = fmt::format("{}{}", destination_name, staging_infix);
    if (name.size() < prefix.size() + 8 || name.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string rest = name.substr(prefix.size());
    const size_t dash = rest.size() - 7;
    if (rest[dash] != '-' || rest.find_first_not_of("0123456789") != dash) return false;
    for (size_t i = dash + 1; i < rest.size(); ++i)
        if (!std::isalnum(static_cast<unsigned char>(rest[i]))) return false;
    return true;
}

StagingDir::StagingDir(const std::string& destination) {
    const std::filesystem::path target(destination);
    const std::string parent_path = target.parent_path().empty() ? "." : target.parent_path().string();
    const std::string base = target.filename().string();
    // Errors name the destination and its folder, never the staging name the user did not give.
    const auto cannot_write = [&](int error_number) {
        return Error(ErrorKind::io,
                     fmt::format("{}: cannot write in {}: {}", destination, parent_path, std::strerror(error_number)));
    };
    const UniqueFd parent(open(parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent) throw cannot_write(errno);
    // Held until `parent` closes: no other run removes or makes a staging folder here meanwhile,
    // so none sees this one between its mkdir and its lock. (Where flock is not supported, dead
    // runs' folders cannot be told from live ones and are left alone.)
    flock(parent.get(), LOCK_EX);
    remove_dead_runs_staging(parent.get(), base);
    // The name is recorded for the interrupt handler before the folder exists: a signal between
    // mkdir and recording it would otherwise leave the folder behind. (A name that exists already
    // carries this process's PID, so it can only be a dead run's leftover.)
    std::string name;
    for (int attempt = 0;; ++attempt) {
        name = fmt::format("{}{}{}-{}", base, staging_infix, getpid(), random_suffix());
        path_ = (target.parent_path() / name).string();
        pending.add(path_);
        if (mkdirat(parent.get(), name.c_str(), 0777) == 0) break;
        const int mkdir_errno = errno;
        pending.remove(path_);
        if (mkdir_errno != EEXIST || attempt == 100) throw cannot_write(mkdir_errno);
    }
    fd_ = UniqueFd(openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd_) {
        const int open_errno = errno;
        remove();
        throw Error(ErrorKind::io,
                    fmt::format("{}: cannot open its staging folder: {}", destination, std::strerror(open_errno)));
    }
    flock(fd_.get(), LOCK_EX | LOCK_NB);
}

void StagingDir::release() noexcept {
    pending.remove(path_);
    path_.clear();
    fd_.reset();
}

void StagingDir::remove() noexcept {
    if (path_.empty()) return;
    remove_tree(AT_FDCWD, path_.c_str(), 0);
    release();
}

void set_interrupt_line(const std::string& line) {
    // On a terminal the line first erases a progress line (progress.hpp) it would otherwise follow.
    const std::string text = fmt::format("{}{}\n", isatty(STDERR_FILENO) == 1 ? "\r\033[K" : "", line);
    if (text.size() > sizeof interrupt_line.text) return;
    interrupt_line.size = 0;
    std::memcpy(interrupt_line.text, text.data(), text.size());
    interrupt_line.size = static_cast<sig_atomic_t>(text.size());
}

HeldInterrupts::HeldInterrupts() { committing = true; }

HeldInterrupts::~HeldInterrupts() {
    committing = false;
    if (interrupt_pending) remove_pending_and_exit(0);
}

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

}  // namespace attn_viz
