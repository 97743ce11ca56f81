// A tiny work splitter for the statistics and the pictures, on OpenMP's thread pool: the one
// oneDNN runs on, so the two never compete for cores (a second pool of std::threads did, while
// OpenMP's idle workers spin-waited for the next product). Bodies never call oneDNN.
#pragma once

#include <cstdint>
#include <functional>

namespace attn_viz {

// Runs body(index) for every index in [0, count) on up to `threads` threads (the caller's
// included); indices are handed out one at a time, so uneven work balances. After a body throws,
// the remaining indices are skipped and the first exception is rethrown on the caller.
void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& body);

}  // namespace attn_viz
