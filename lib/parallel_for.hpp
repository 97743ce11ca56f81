// A tiny work splitter over std::threads for the statistics (never used around oneDNN calls:
// the Debian oneDNN build must be called from one thread only).
#pragma once

#include <cstdint>
#include <functional>

namespace attn_viz {

// Runs body(index) for every index in [0, count) on up to `threads` threads (the caller's
// included); indices are handed out one at a time, so uneven work balances. The first exception
// thrown by any body is rethrown on the caller after all threads have stopped.
void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& body);

}  // namespace attn_viz
