// Core helpers: parallel_for and write_file_atomically.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "file_write.hpp"
#include "parallel_for.hpp"
#include "support.hpp"

using namespace attn_viz;

TEST_SUITE("core") {

TEST_CASE("parallel_for visits every index once and rethrows a worker's exception") {
    for (int64_t count : {0, 1, 7, 100})
        for (int threads : {1, 2, 5}) {
            std::vector<std::atomic<int>> visits(static_cast<size_t>(count));
            parallel_for(count, threads, [&](int64_t i) { ++visits[static_cast<size_t>(i)]; });
            for (const auto& v : visits) CHECK(v == 1);
        }
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH_AS(parallel_for(50, 3,
                                      [&](int64_t i) {
                                          ++ran;
                                          if (i == 13) throw std::runtime_error("index 13 failed");
                                      }),
                         "index 13 failed", std::runtime_error);
    CHECK(ran >= 1);
    // Every index failing: the first exception comes back, not a crash or one per thread.
    CHECK_THROWS_AS(parallel_for(40, 4, [](int64_t i) { throw std::out_of_range(std::to_string(i)); }),
                    std::out_of_range);
}

TEST_CASE("parallel_for keeps small work on the calling thread and hands large work to the others") {
    const auto threads_used = [](int64_t count, int64_t values_per_item) {
        std::vector<int> thread_of(static_cast<size_t>(count), -1);
        parallel_for(
            count, 2,
            [&](int64_t i) {
                thread_of[static_cast<size_t>(i)] = omp_get_thread_num();
                // Long enough that the second thread, when there is one, takes some indices.
                if (values_per_item >= parallel_min_values) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            },
            values_per_item);
        std::sort(thread_of.begin(), thread_of.end());
        return static_cast<int64_t>(std::unique(thread_of.begin(), thread_of.end()) - thread_of.begin());
    };
    // 12 heads of 7 x 7 maps: far below the threshold, one thread (the caller's: OpenMP number 0).
    CHECK(threads_used(12, 49) == 1);
    CHECK(threads_used(3, parallel_min_values / 4) == 1);
    // 12 items of the threshold's size each on two threads: both take part.
    if (omp_get_num_procs() > 1) CHECK(threads_used(12, parallel_min_values) == 2);
}

TEST_CASE("write_file_atomically replaces a file whole and reports an unwritable place by name") {
    test_support::ScratchDir dir;
    const std::string path = dir / "stats.json";
    write_file_atomically(path, "first");
    write_file_atomically(path, "second, longer");
    CHECK(test_support::read_text(path) == "second, longer");
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        CHECK(entry.path().filename() == "stats.json");  // no temporary left behind
    const std::string missing = dir / "no/such/dir/stats.json";
    test_support::expect_error(ErrorKind::io, [&] { write_file_atomically(missing, "x"); }, {missing});
}

}  // TEST_SUITE("core")
