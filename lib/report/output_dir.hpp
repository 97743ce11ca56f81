// Writing a run's results without ever leaving half of them behind.
//
// Every file of a run is written into a staging directory beside the destination
// ("DIR.attn-viz-partial-PID"), and files outside it (--dump-attention F.npy) under a temporary
// name beside their destination. commit() moves everything into place with rename(2); if the run
// fails, throws or is interrupted (SIGINT, SIGTERM) first, the staging files are removed and the
// previous results, if any, are left as they were.
#pragma once

#include <string>
#include <vector>

namespace attn_viz {

class OutputDir {
public:
    // Refuses (Error usage) a non-empty `dir` that holds files other than a previous attn-viz
    // run's, unless `force`. Nothing is created until the first file is requested.
    OutputDir(std::string dir, bool force);
    ~OutputDir();  // removes whatever was not committed
    OutputDir(const OutputDir&) = delete;
    OutputDir& operator=(const OutputDir&) = delete;

    // Where to write `relative` (e.g. "head_00.png", "layer_01/head_03.png") inside the run
    // directory; parent folders are created in the staging area.
    std::string file(const std::string& relative);

    // Where to write a file that belongs at `final_path`, outside the run directory. A
    // `final_path` that exists and is not a regular file (/dev/stdout, a FIFO) is written
    // directly; an existing directory is refused (Error usage).
    std::string external_file(const std::string& final_path);

    // Files commit() must never replace or remove (the run's inputs): commit() refuses
    // (Error usage) before moving anything when one of them would be.
    void protect_inputs(std::vector<std::string> inputs) { inputs_ = std::move(inputs); }

    // Moves everything into place. Files a previous run left in the directory that this run
    // did not write again are removed, so the folder always describes one run. An interrupt
    // (SIGINT, SIGTERM, SIGHUP) during commit() waits until it is done, then exits with 130, so
    // it never leaves a mix of two runs.
    void commit();

    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
    std::string staging_;
    std::vector<std::string> files_;                               // relative paths in staging
    std::vector<std::pair<std::string, std::string>> externals_;  // temp -> final
    std::vector<std::string> inputs_;
    bool committed_ = false;
    void discard() noexcept;
};

// Refuses to write an output at `path` when it is also one of `inputs` (same file on disk).
void refuse_overwriting_inputs(const std::string& path, const std::vector<std::string>& inputs);

// Installs SIGINT/SIGTERM/SIGHUP handlers that remove every live OutputDir's staging files and
// exit with status 130, and ignores SIGXFSZ so that exceeding a file size limit (ulimit -f) makes
// write() fail with EFBIG and the run end through its normal I/O error path (exit 4) instead of
// being killed with its staging files left behind. Called once by main().
void install_interrupt_cleanup();

}  // namespace attn_viz
