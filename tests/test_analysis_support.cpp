// The analysis' small helpers: parallel_for, poisoned_heads and write_file_atomically.
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
#include "nonfinite.hpp"
#include "parallel_for.hpp"
#include "support.hpp"

using namespace attn_viz;

TEST_SUITE("analysis") {

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

TEST_CASE("poisoned_heads finds NaN and +-Inf anywhere in a head's map or output share, and only there") {
    auto& rng = test_support::rng();
    const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
    for (auto [H, T, S] : {std::tuple<int64_t, int64_t, int64_t>{4, 40, 53}, {1, 1, 1}, {3, 7, 5}})
        for (float bad : bad_values) {
            LayerResult r;
            r.attention = test_support::random_tensor({H, T, S});
            r.attention.data[0] = std::numeric_limits<float>::max();  // large but finite
            r.contribution_norms = test_support::random_tensor({H, T});
            const int64_t map_head = std::uniform_int_distribution<int64_t>(0, H - 1)(rng);
            // Anywhere in the head's map, including its last entry (past the first scan block).
            const int64_t at = std::uniform_int_distribution<int64_t>(0, T * S - 1)(rng);
            r.attention.data[static_cast<size_t>(map_head * T * S + (at % 2 ? at : T * S - 1))] = bad;
            std::vector<std::string> want = {"head " + std::to_string(map_head)};
            CHECK(poisoned_heads(r) == want);
            const int64_t share_head = H - 1 - map_head;
            r.contribution_norms.data[static_cast<size_t>(share_head * T + T - 1)] = bad;
            if (share_head != map_head) want.push_back("head " + std::to_string(share_head));
            std::sort(want.begin(), want.end());
            CHECK(poisoned_heads(r) == want);
        }
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
