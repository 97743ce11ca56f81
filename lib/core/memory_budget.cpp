// The machine's memory, the default budget and the checks loaders and run estimates go through.
#include "memory_budget.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>
#include <sys/resource.h>

#include "error.hpp"

namespace attn_viz {
namespace {

// cgroup v2 (memory.max) or v1 (memory.limit_in_bytes) limit of this process, or 0 when unlimited.
uint64_t cgroup_limit() {
    for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(file);
        uint64_t value = 0;
        if (in >> value && value > 0) return value;
    }
    return 0;
}

}  // namespace

uint64_t peak_resident_bytes() {
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
}

uint64_t machine_memory() {
    static const uint64_t bytes = [] {
        const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
        uint64_t physical = pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : uint64_t{8} << 30;
        if (const uint64_t limit = cgroup_limit(); limit > 0) physical = std::min(physical, limit);
        return physical;
    }();
    return bytes;
}

uint64_t default_memory_budget() { return machine_memory() / 4 * 3; }

uint64_t parse_memory_size(const std::string& text) {
    const auto bad = [&] {
        return Error(ErrorKind::usage, fmt::format("\"{}\" is not a size (e.g. 8G, 512M, 1000000)", text));
    };
    // Step 1: the number.
    size_t i = 0;
    uint64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (value > (UINT64_MAX - 9) / 10) throw bad();
        value = value * 10 + uint64_t(text[i] - '0');
        ++i;
    }
    if (i == 0) throw bad();
    // Step 2: an optional binary suffix, K M G T, then an optional "B" or "iB".
    std::string suffix;
    for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    int shift = 0;
    if (!suffix.empty() && std::string("KMGT").find(suffix[0]) != std::string::npos) {
        shift = 10 * (1 + int(std::string("KMGT").find(suffix[0])));
        suffix.erase(0, 1);
        if (suffix == "IB") suffix = "B";
    }
    if (!suffix.empty() && suffix != "B") throw bad();
    if (value == 0 || value > (UINT64_MAX >> shift)) throw bad();
    return value << shift;
}

void check_memory(uint64_t bytes, uint64_t budget, const std::string& what) {
    if (bytes > budget)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{} needs {} bytes, more than the memory budget of {} bytes", what, bytes, budget),
                    Remedy::raise_memory_budget);
}

uint64_t saturating_product(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
    return a * b;
}

void check_memory_elements(uint64_t count, uint64_t element_bytes, uint64_t budget, const std::string& what) {
    check_memory(saturating_product(count, element_bytes), budget, what);
}

}  // namespace attn_viz
