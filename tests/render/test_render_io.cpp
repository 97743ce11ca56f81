// Render suite, part 3: concurrent PNG writes and I/O errors (unwritable path, missing font).
#include <thread>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "font.hpp"
#include "heatmap.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

TEST_SUITE("render") {

TEST_CASE("PNG writes from 8 threads at once all decode to exactly their canvas") {
    ScratchDir dir;
    constexpr int n_threads = 8;
    std::vector<std::vector<float>> maps;
    std::vector<Visibility> vis;
    std::vector<std::string> paths;
    for (int k = 0; k < n_threads; ++k) {
        std::string name = "thread";
        name += std::to_string(k);
        paths.push_back(dir / (name + ".png"));
        vis.push_back(square_visibility(5 + 3 * k, k % 2 == 0));
        maps.push_back(random_attention(vis.back()));
    }
    std::vector<HeatmapLayout> layouts(n_threads);
    std::vector<std::string> failures(n_threads);
    std::vector<std::thread> threads;
    for (int k = 0; k < n_threads; ++k)
        threads.emplace_back([&, k] {
            try {
                for (int round = 0; round < 3; ++round)
                    layouts[static_cast<size_t>(k)] =
                        write_head_png(paths[static_cast<size_t>(k)], maps[static_cast<size_t>(k)].data(),
                                       vis[static_cast<size_t>(k)], {}, {}, HeatmapStyle{});
            } catch (const std::exception& e) {
                failures[static_cast<size_t>(k)] = e.what();
            }
        });
    for (auto& t : threads) t.join();
    for (int k = 0; k < n_threads; ++k) {
        CHECK(failures[static_cast<size_t>(k)].empty());
        const DecodedPng png = decode_png(paths[static_cast<size_t>(k)]);
        const HeatmapLayout& layout = layouts[static_cast<size_t>(k)];
        REQUIRE(png.width == layout.width);
        CHECK(differing_pixels(png, render_heatmap(layout, HeatmapStyle{})) == 0);
        const int64_t t = vis[static_cast<size_t>(k)].queries;
        for (int64_t i = 0; i < t; ++i)
            CHECK(cell_pixel(png, layout, i, 0) ==
                  expected_color(HeatmapStyle{}, maps[static_cast<size_t>(k)][static_cast<size_t>(i * t)]));
    }
}

TEST_CASE("unwritable paths and a missing font are I/O errors naming the file") {
    const Visibility v = square_visibility(3, false);
    const std::vector<float> w = random_attention(v);
    expect_error(ErrorKind::io,
                 [&] { write_head_png("/nonexistent-dir/x/h.png", w.data(), v, {}, {}, HeatmapStyle{}); },
                 {"/nonexistent-dir/x/h.png"});
    expect_error(ErrorKind::io, [] { Font font("/nonexistent-dir/DejaVuSans.ttf"); }, {"fonts-dejavu-core"});
    HeatmapStyle tiny;
    tiny.max_px = 100;
    CHECK_THROWS_AS(write_head_png("/tmp/never.png", w.data(), v, {}, {}, tiny), Error);
    CHECK_THROWS_AS(write_head_png("/tmp/never.png", w.data(), v, {"a"}, {}, HeatmapStyle{}), Error);
}

}  // TEST_SUITE("render")
