// Shared pieces of the libFuzzer targets: the loaders' limits with a modest memory budget (so a
// declared huge shape is refused by check_memory long before libFuzzer's 2 GB RSS limit), and
// per-process scratch files for loaders that take a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "error.hpp"
#include "load_limits.hpp"

namespace attn_viz_fuzz {

constexpr uint64_t fuzz_memory_budget = uint64_t{256} << 20;

// What every target passes to the loader it fuzzes.
inline attn_viz::LoadLimits limits() {
    attn_viz::LoadLimits limits;
    limits.memory_budget = fuzz_memory_budget;
    return limits;
}

// Writes `data` to <dir>/attn-viz-fuzz-<pid>-<name> (overwritten on every call; removed at exit)
// and returns its path. <dir> is /dev/shm when writable: a target writes a file per input, and on
// a disk that costs more than loading it.
inline std::string write_scratch_file(const uint8_t* data, size_t size, const char* name) {
    static const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    static std::set<std::string> written;
    if (written.empty())
        std::atexit([] {
            for (const std::string& p : written) std::remove(p.c_str());
        });
    const std::string path = dir + "/attn-viz-fuzz-" + std::to_string(getpid()) + "-" + name;
    written.insert(path);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) __builtin_trap();
    if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
    std::fclose(f);
    return path;
}

}  // namespace attn_viz_fuzz

// Every target's input must end in a clean attn_viz::Error or success: anything else (another
// exception type, a crash, a sanitizer report, a leak) is a finding.
#define ATTN_VIZ_FUZZ_EXPECT_CLEAN(body) \
    try {                                \
        body;                            \
    } catch (const attn_viz::Error&) {}
