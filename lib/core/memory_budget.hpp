// The memory budget (--max-memory): every large allocation asks check_memory() first, so a file
// that declares a huge shape is refused with a clear message instead of ending in bad_alloc or
// the kernel's OOM killer. The default budget is 75% of physical memory (or of the cgroup limit,
// when that is lower).
#pragma once

#include <cstdint>
#include <string>

namespace attn_viz {

// Sets the budget in bytes for the whole process (0 restores the default).
void set_memory_budget(uint64_t bytes);

// The current budget in bytes.
uint64_t memory_budget();

// 75% of min(physical memory, cgroup memory.max).
uint64_t default_memory_budget();

// "8G", "512M", "64k", "1000000" (bytes; suffixes K, M, G, T are powers of 1024, case-insensitive,
// an optional trailing "B" or "iB"). Throws Error(usage) on anything else or zero.
uint64_t parse_memory_size(const std::string& text);

// Throws Error(bad_input, "<what> needs N bytes, more than the memory budget of M bytes
// (--max-memory)") when bytes > memory_budget().
void check_memory(uint64_t bytes, const std::string& what);

// a * b, saturated at UINT64_MAX (sizes computed from untrusted dimensions).
uint64_t saturating_product(uint64_t a, uint64_t b);

// check_memory for `count` elements of `element_bytes` each, without overflow.
void check_memory_elements(uint64_t count, uint64_t element_bytes, const std::string& what);

// Upper bound of the memory a parsed JSON document takes per byte of its text (a number such as
// "1," becomes a 16-byte value in a vector; nested arrays add their own bookkeeping).
constexpr uint64_t json_bytes_per_text_byte = 16;

}  // namespace attn_viz
