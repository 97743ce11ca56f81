// Render suite: head-by-head matrix pictures that cannot mislead (issue 21 item 5): pairs not
// computed (NaN) are hatched like masked cells, signed measures use a diverging colormap centred
// on 0, and a colorbar whose range holds 0 has a tick at 0.
#include <random>

#include <doctest/doctest.h>

#include "figure_matrix.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

std::vector<std::string> head_labels(int64_t n) {
    std::vector<std::string> labels;
    for (int64_t k = 0; k < n; ++k) labels.push_back(std::string("H").append(std::to_string(k)));
    return labels;
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("matrix picture: pairs not computed (NaN) are hatched like masked cells, computed ones keep their color") {
    ScratchDir dir;
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (int64_t per_layer : {1, 3, 5}) {
        const int64_t layers = 3, n = per_layer * layers;
        Tensor m({n, n});  // block-diagonal: pairs in different layers not computed
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
                m.data[static_cast<size_t>(i * n + j)] = i / per_layer == j / per_layer ? uniform(rng()) : NAN;
        const HeatmapLayout layout = write_matrix_png(dir / "m.png", m, head_labels(n), "CKA, within layers", "viridis",
                                                      0.0f, 1.0f, "CKA", 1600, per_layer);
        const DecodedPng png = decode_png(dir / "m.png");
        REQUIRE(png.width == layout.width);
        REQUIRE(layout.cell_w >= 6);
        HeatmapStyle style;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                const float v = m.data[static_cast<size_t>(i * n + j)];
                CHECK(layout.cells.is_masked(i, j) == std::isnan(v));
                if (std::isnan(v))
                    check_hatched(png, layout, i, j);
                else
                    CHECK(cell_pixel(png, layout, i, j) == expected_color(style, v));
            }
        CHECK(cell_pixel(png, layout, 0, n - 1) != Colormap::named("viridis").raster_at(0.0));  // never drawn as 0
    }
}

TEST_CASE("matrix picture: a pooled cell is hatched only when all its pairs are missing") {
    ScratchDir dir;
    const int64_t n = 600;  // more heads than pixels at --max-px 256: cells pool several heads
    Tensor m({n, n});
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
            m.data[static_cast<size_t>(i * n + j)] = i < n / 2 && j >= n / 2 ? NAN : uniform(rng());
    const HeatmapLayout layout =
        write_matrix_png(dir / "m.png", m, head_labels(n), "m", diverging_colormap, -1.0f, 1.0f, "r", 256);
    REQUIRE(layout.cells.pooled());
    for (int64_t r = 0; r < layout.cells.rows; ++r)
        for (int64_t c = 0; c < layout.cells.cols; ++c) {
            const bool all_missing = layout.cells.row_edges[static_cast<size_t>(r + 1)] <= n / 2 &&
                                     layout.cells.col_edges[static_cast<size_t>(c)] >= n / 2;
            CHECK(layout.cells.is_masked(r, c) == all_missing);
        }
}

TEST_CASE("diverging colormap: blue below 0, near white at 0, red above, symmetric in lightness") {
    const Colormap map = Colormap::named(diverging_colormap);
    const Rgb low = map.at(0.0), middle = map.raster_at(0.5), high = map.at(1.0);
    CHECK(low.b > low.r);
    CHECK(high.r > high.b);
    CHECK(middle.r >= 240);
    CHECK(middle.g >= 240);
    CHECK(middle.b >= 240);
    for (double d : {0.1, 0.25, 0.4}) {  // equally far from 0 on either side: about as light
        const Rgb a = map.at(0.5 - d), b = map.at(0.5 + d);
        CHECK(std::abs((a.r + a.g + a.b) - (b.r + b.g + b.b)) < 3 * 40);
        CHECK(a.b > a.r);
        CHECK(b.r > b.b);
    }
    // not one of --colormap's choices for attention weights
    const std::vector<std::string>& names = Colormap::names();
    CHECK(std::find(names.begin(), names.end(), diverging_colormap) == names.end());
}

TEST_CASE("matrix picture: a signed matrix on the diverging map draws 0 white, -1 blue, +1 red") {
    ScratchDir dir;
    Tensor m({3, 3});
    const float values[9] = {1.0f, 0.0f, -1.0f, 0.0f, 1.0f, 0.5f, -1.0f, 0.5f, 1.0f};
    std::copy(values, values + 9, m.data.begin());
    const HeatmapLayout layout =
        write_matrix_png(dir / "m.png", m, head_labels(3), "correlation", diverging_colormap, -1.0f, 1.0f, "r");
    const DecodedPng png = decode_png(dir / "m.png");
    REQUIRE(png.width == layout.width);
    const Rgb zero = cell_pixel(png, layout, 0, 1), minus = cell_pixel(png, layout, 0, 2),
              plus = cell_pixel(png, layout, 0, 0);
    CHECK(zero.r >= 240);
    CHECK(zero.b >= 240);
    CHECK(minus.b > minus.r + 60);
    CHECK(plus.r > plus.b + 60);
}

TEST_CASE("matrix picture: every colorbar whose range holds 0 has a tick at 0, drawn where 0's color is") {
    ScratchDir dir;
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    const std::pair<float, float> ranges[] = {{-1.0f, 1.0f},   {-0.3f, 0.8f}, {0.0f, 0.37f},
                                              {-0.013f, 2.9f}, {-5.0f, 0.0f}, {0.0f, 1e-9f}};
    for (const auto& [vmin, vmax] : ranges) {
        CAPTURE(vmin);
        CAPTURE(vmax);
        Tensor m({4, 4});
        for (float& v : m.data) v = vmin + (vmax - vmin) * uniform(rng());
        const HeatmapLayout layout =
            write_matrix_png(dir / "m.png", m, head_labels(4), "m", diverging_colormap, vmin, vmax, "x");
        const auto zero = std::find_if(layout.ticks.begin(), layout.ticks.end(),
                                       [](const ColorbarTick& t) { return t.value == 0.0; });
        REQUIRE(zero != layout.ticks.end());
        const DecodedPng png = decode_png(dir / "m.png");
        const int expected_y =
            layout.colorbar_y + static_cast<int>(std::lround((1.0 - ValueScale{vmin, vmax, false}.position(0.0f)) *
                                                             (layout.colorbar_h - 1)));
        CHECK(zero->y == expected_y);
        CHECK(png.at(layout.colorbar_x + layout.colorbar_w + 1, zero->y) == text_color);  // the tick mark
        // its number "0" beside it
        CHECK(dark_pixels(png, layout.colorbar_x + layout.colorbar_w + 6, zero->y - 6, 12, 12) > 0);
        bool labelled = false;
        for (const TextPlacement& t : layout.other_text)
            labelled |= t.text == "0" && std::abs(t.y + t.height / 2 - zero->y) <= 1;
        CHECK(labelled);
    }
}

TEST_CASE("matrix picture centred on a chance level: the level's cells white, a labelled tick where its colour is") {
    // Composition scores of 4 heads about the chance level 0.125 of D = 64, on [0.125 - m, 0.125 + m].
    ScratchDir dir;
    Tensor m({4, 4});
    for (size_t k = 0; k < m.data.size(); ++k) m.data[k] = 0.125f + 0.02f * (static_cast<float>(k % 5) - 2.0f);
    m.data[1] = 0.125f, m.data[2] = 0.245f, m.data[3] = 0.045f;
    const float low = 0.125f - 0.12f, high = 0.125f + 0.12f;
    const HeatmapLayout layout =
        write_matrix_png(dir / "m.png", m, head_labels(4), "K-composition", diverging_colormap, low, high,
                         "composition score", 1600, 0, ReferenceTick{0.125, "chance 0.125"});
    const DecodedPng png = decode_png(dir / "m.png");
    REQUIRE(png.width == layout.width);
    const Colormap map = Colormap::named(diverging_colormap);
    CHECK(cell_pixel(png, layout, 0, 1) == map.raster_at(ValueScale{low, high}.position(0.125f)));
    CHECK(std::min({cell_pixel(png, layout, 0, 1).r, cell_pixel(png, layout, 0, 1).b}) >= 240);
    CHECK(cell_pixel(png, layout, 0, 2).r > cell_pixel(png, layout, 0, 2).b + 60);  // above chance: red
    CHECK(cell_pixel(png, layout, 0, 3).b > cell_pixel(png, layout, 0, 3).r + 60);  // below: blue
    const auto chance =
        std::find_if(layout.ticks.begin(), layout.ticks.end(), [](const ColorbarTick& t) { return t.value == 0.125; });
    REQUIRE(chance != layout.ticks.end());
    CHECK(chance->y == layout.colorbar_y + static_cast<int>(std::lround((1.0 - ValueScale{low, high}.position(0.125f)) *
                                                                        (layout.colorbar_h - 1))));
    bool labelled = false;
    for (const TextPlacement& t : layout.other_text)
        labelled |= t.text == "chance 0.125" && std::abs(t.y + t.height / 2 - chance->y) <= 1;
    CHECK(labelled);
    for (const ColorbarTick& t : layout.ticks)  // the scale's own ticks keep clear of it
        if (t.value != 0.125) CHECK(std::abs(t.value - 0.125) >= (high - low) / 12 - 1e-6);
    // Outside the range no such tick is drawn, and the scale keeps its ticks.
    const HeatmapLayout outside = write_matrix_png(dir / "o.png", m, head_labels(4), "K", diverging_colormap, 0.2f,
                                                   0.3f, "score", 1600, 0, ReferenceTick{0.125, "chance 0.125"});
    std::vector<double> kept;
    for (const ColorbarTick& t : outside.ticks) kept.push_back(t.value);
    CHECK(kept == axis_ticks(ValueScale{0.2f, 0.3f}));
}

}  // TEST_SUITE("render")
