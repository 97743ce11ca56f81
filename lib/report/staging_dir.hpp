// Staging folders: where a run's files wait until they are moved into place, and what an
// interrupt removes.
//
// A staging folder is made beside its destination under a fresh name,
// "DEST.attn-viz-partial-PID-XXXXXX" (mkdir(2) fails rather than reuse anything that exists, a
// symbolic link included), and is locked with flock(2) for as long as its run lives. A staging
// folder whose lock nobody holds was left by a run that died (kill -9, a crash): making a staging
// folder first removes such leftovers of the same destination, without following a symbolic link.
// A lock on the folder that holds them keeps two runs from doing this at the same time.
#pragma once

#include <string>

#include "unique_fd.hpp"

namespace attn_viz {

class StagingDir {
public:
    // Makes a staging folder for `destination` in the (existing) folder that will hold it, after
    // removing the staging folders of dead runs for the same destination there. Throws Error(io)
    // naming `destination` if it cannot.
    explicit StagingDir(const std::string& destination);
    ~StagingDir() { remove(); }  // removes the folder and everything in it, unless released
    StagingDir(const StagingDir&) = delete;
    StagingDir& operator=(const StagingDir&) = delete;

    const std::string& path() const { return path_; }
    int fd() const { return fd_.get(); }  // the open, locked folder

    // The folder was renamed into place: nothing is left to remove; the lock goes.
    void release() noexcept;
    // Removes the folder and everything in it now (symbolic links inside are removed, never
    // followed); the lock goes.
    void remove() noexcept;

private:
    std::string path_;
    UniqueFd fd_;
};

// Whether `name` is the name of a staging folder for a destination called `destination_name`.
bool is_staging_name(const std::string& name, const std::string& destination_name);

// For its lifetime (OutputDir::commit()), an interrupt is only recorded; when it ends, a recorded
// interrupt removes the staging folders and exits with 130.
class HeldInterrupts {
public:
    HeldInterrupts();
    ~HeldInterrupts();
    HeldInterrupts(const HeldInterrupts&) = delete;
    HeldInterrupts& operator=(const HeldInterrupts&) = delete;
};

// What an interrupt prints on stderr, one line ("attn-viz: interrupted: nothing written, ..."),
// replacing the last one set (the default: "attn-viz: interrupted"). A line too long for the
// handler's fixed storage (8 KB) leaves the previous one.
void set_interrupt_line(const std::string& line);

// Installs SIGINT/SIGTERM/SIGHUP handlers that remove every live staging folder, print the
// interrupt line (set_interrupt_line) and exit with status 130, and ignores SIGXFSZ so that exceeding a file size limit
// (ulimit -f) makes write() fail with EFBIG and the run end through its normal I/O error path (exit 4) instead of being
// killed with its staging files left behind. Called once by main().
void install_interrupt_cleanup();

}  // namespace attn_viz
