// Core helpers: parallel_for and write_file_atomically.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "file_write.hpp"
#include "error.hpp"
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
    CHECK_THROWS_AS(parallel_for(40, 4, [](int64_t i) { throw std::out_of_range(std::to_string(i)); }), std::out_of_range);
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
    try {
        write_file_atomically(missing, "x");
        FAIL("wrote into a missing directory");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::io);
        CHECK(std::string(e.what()).find(missing) != std::string::npos);
    }
}

}
