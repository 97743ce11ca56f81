#include "parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attn_viz {

void parallel_for(int64_t count, int threads, const std::function<void(int64_t)>& body) {
    const int64_t workers = std::clamp<int64_t>(threads, 1, std::max<int64_t>(count, 1));
    std::atomic<int64_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&] {
        for (int64_t index = next++; index < count; index = next++) {
            try {
                body(index);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next = count;  // stop handing out work
            }
        }
    };
    std::vector<std::thread> pool;
    for (int64_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

}  // namespace attn_viz
