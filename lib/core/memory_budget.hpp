// Memory budgets: a file that declares a huge shape, or a run that would need more memory than
// the caller allows, is refused with a clear message instead of ending in bad_alloc or the
// kernel's OOM killer. Loaders check against LoadLimits::memory_budget (load_limits.hpp); the
// default budget is 75% of this machine's memory.
#pragma once

#include <cstdint>
#include <string>

namespace attn_viz {

// min(physical memory, cgroup memory.max) in bytes, read once.
uint64_t machine_memory();

// The most resident memory this process has held so far (getrusage's ru_maxrss), in bytes.
uint64_t peak_resident_bytes();

// 75% of machine_memory().
uint64_t default_memory_budget();

// "8G", "512M", "64k", "1000000" (bytes; suffixes K, M, G, T are powers of 1024, case-insensitive,
// an optional trailing "B" or "iB"). Throws Error(usage) on anything else or zero.
uint64_t parse_memory_size(const std::string& text);

// Throws Error(bad_input, "<what> needs N bytes, more than the memory budget of M bytes",
// Remedy::raise_memory_budget) when bytes > budget.
void check_memory(uint64_t bytes, uint64_t budget, const std::string& what);

// a * b, saturated at UINT64_MAX (sizes computed from untrusted dimensions).
uint64_t saturating_product(uint64_t a, uint64_t b);

// check_memory for `count` elements of `element_bytes` each, without overflow.
void check_memory_elements(uint64_t count, uint64_t element_bytes, uint64_t budget, const std::string& what);

// Upper bound of the memory a parsed JSON document takes per byte of its text (a number such as
// "1," becomes a 16-byte value in a vector; nested arrays add their own bookkeeping).
constexpr uint64_t json_bytes_per_text_byte = 16;

}  // namespace attn_viz
