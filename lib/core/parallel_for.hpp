// A tiny work splitter for the statistics and the pictures, on OpenMP's thread pool: the one
// oneDNN runs on, so the two never compete for cores (a second pool of std::threads did, while
// OpenMP's idle workers spin-waited for the next product). Bodies never call oneDNN.
#pragma once

#include <cstdint>
#include <functional>

namespace attn_viz {

// Work of fewer values than this (tens of microseconds on one core) stays on the calling thread:
// waking OpenMP's other threads costs more than it saves, and far more when other processes hold
// the cores (a corpus of tiny models ran 60x slower on two threads than on one under load).
inline constexpr int64_t parallel_min_values = 16384;

// Runs body(index) for every index in [0, count) on up to `threads` threads (the caller's
// included), on the calling thread alone when count x values_per_item (about how many values a
// body reads) is below parallel_min_values; indices are handed out one at a time, so uneven work
// balances. After a body throws, the remaining indices are skipped and the first exception is
// rethrown on the caller.
void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& body,
                  int64_t values_per_item = parallel_min_values);

// Threads to use for `requested` (0 = all cores).
int resolve_threads(int requested);

// Sets the size of OpenMP's pool, on which oneDNN and parallel_for run, for the whole process to
// `requested` (0 leaves OpenMP's default: OMP_NUM_THREADS, else every core) and returns
// resolve_threads(requested). A program calls it once, before its first oneDNN call: the CLI
// from --threads, the Python package when a model or layer is opened.
int use_threads(int requested);

}  // namespace attn_viz
