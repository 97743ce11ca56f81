#include "parallel_for.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

namespace attn_viz {

void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& body, int64_t values_per_item) {
    const bool small = count * std::max<int64_t>(values_per_item, 1) < parallel_min_values;
    const int workers = small ? 1 : static_cast<int>(std::clamp<int64_t>(threads, 1, std::max<int64_t>(count, 1)));
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1) num_threads(workers)
    for (int64_t index = 0; index < count; ++index) {
        if (failed.load(std::memory_order_relaxed)) continue;  // an OpenMP loop cannot break
        try {
            body(index);
        } catch (...) {
#pragma omp critical(attn_viz_parallel_for_failure)
            if (!failure) failure = std::current_exception();
            failed = true;
        }
    }
    if (failure) std::rethrow_exception(failure);
}

int resolve_threads(int requested) {
    return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int use_threads(int requested) {
    if (requested > 0) omp_set_num_threads(requested);
    return resolve_threads(requested);
}

}  // namespace attn_viz
