// compare's A | B | A - B picture: A and B on one scale from 0, the signed difference on a
// diverging scale [-m, m] of its own, masked cells zero and hatched, checked by decoding the PNG
// cell by cell.
#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "figure_map_comparison.hpp"
#include "heatmap_grid.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

HeatmapStyle titled(HeatmapStyle style, std::string title) {
    style.title = std::move(title);
    return style;
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("signed_difference is a - b on visible cells and 0 under the mask") {
    for (const bool causal : {false, true}) {
        Visibility v = square_visibility(5, causal);
        v.key_excluded = {0, 0, 1, 0, 0};
        const std::vector<float> a = random_attention(v), b = random_attention(v);
        const std::vector<float> d = signed_difference(a.data(), b.data(), v);
        for (int64_t i = 0; i < 5; ++i)
            for (int64_t j = 0; j < 5; ++j) {
                const size_t at = static_cast<size_t>(i * 5 + j);
                CHECK(d[at] == doctest::Approx(v.visible(i, j) ? double(a[at]) - double(b[at]) : 0.0).epsilon(1e-6));
            }
    }
}

TEST_CASE(
    "the comparison picture puts A and B on one scale from 0 and A - B on a symmetric diverging one, left to right") {
    ScratchDir dir;
    for (const int64_t t : {int64_t{1}, int64_t{4}, int64_t{9}}) {
        CAPTURE(t);
        const Visibility v = square_visibility(t, true);
        const std::vector<float> a = random_attention(v), b = random_attention(v, 8.0f);
        std::vector<std::string> tokens;
        for (int64_t i = 0; i < t; ++i) tokens.push_back(std::string("w").append(std::to_string(i)));
        HeatmapStyle style;
        style.max_px = 400;
        write_map_comparison_png(dir / "c.png", a.data(), b.data(), v, tokens, tokens, style, {"A", "B", "D"});
        const DecodedPng png = decode_png(dir / "c.png");
        REQUIRE(png.width > 0);

        // Each panel as the figure draws it: same layout function, same range.
        HeatmapStyle shared = style, change = style;
        shared.vmin = 0.0f,
        shared.vmax = std::max(visible_value_range(a.data(), v).vmax, visible_value_range(b.data(), v).vmax);
        const std::vector<float> d = signed_difference(a.data(), b.data(), v);
        float largest = 0.0f;
        for (const float x : d) largest = std::max(largest, std::fabs(x));
        change.colormap = std::string("rdbu"), change.colorbar_label = std::string("A - B");
        change.vmin = -largest, change.vmax = largest;
        if (largest <= 0.0f) change.vmin = -1.0f, change.vmax = 1.0f;
        // The range is symmetric and reached: the largest change sits at one end of the scale.
        if (t > 1) CHECK(largest > 0.0f);
        const HeatmapLayout la = layout_heatmap(a.data(), v, tokens, tokens, titled(shared, "A"));
        const HeatmapLayout lb = layout_heatmap(b.data(), v, tokens, tokens, titled(shared, "B"));
        const HeatmapLayout ld = layout_heatmap(d.data(), v, tokens, tokens, titled(change, "D"));
        CHECK(png.width == la.width + lb.width + ld.width);
        CHECK(png.height == std::max({la.height, lb.height, ld.height}));
        const auto at = [&](const HeatmapLayout& l, int x0, int64_t i, int64_t j) {
            return png.at(x0 + l.grid_x + static_cast<int>(j) * l.cell_w + l.cell_w / 2,
                          l.grid_y + static_cast<int>(i) * l.cell_h + l.cell_h / 2);
        };
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j <= i; ++j) {
                const size_t n = static_cast<size_t>(i * t + j);
                CHECK(at(la, 0, i, j) == expected_color(shared, a[n]));
                CHECK(at(lb, la.width, i, j) == expected_color(shared, b[n]));
                CHECK(at(ld, la.width + lb.width, i, j) == expected_color(change, d[n]));
            }
    }
}

TEST_CASE("identical maps give an all-zero difference drawn at the middle of the diverging scale, not at an end") {
    ScratchDir dir;
    const Visibility v = square_visibility(6, false);
    const std::vector<float> a = random_attention(v);
    HeatmapStyle style;
    write_map_comparison_png(dir / "same.png", a.data(), a.data(), v, {}, {}, style, {"A", "B", "D"});
    const DecodedPng png = decode_png(dir / "same.png");
    REQUIRE(png.width > 0);
    HeatmapStyle change = style;
    change.colormap = std::string("rdbu"), change.colorbar_label = std::string("A - B");
    change.vmin = -1.0f, change.vmax = 1.0f;
    const std::vector<float> zero(36, 0.0f);
    HeatmapStyle shared = style;
    shared.vmin = 0.0f, shared.vmax = visible_value_range(a.data(), v).vmax;
    const HeatmapLayout la = layout_heatmap(a.data(), v, {}, {}, titled(shared, "A"));
    const HeatmapLayout ld = layout_heatmap(zero.data(), v, {}, {}, titled(change, "D"));
    for (int64_t i = 0; i < 6; ++i)
        CHECK(png.at(2 * la.width + ld.grid_x + static_cast<int>(i) * ld.cell_w + ld.cell_w / 2,
                     ld.grid_y + ld.cell_h / 2) == Colormap::named("rdbu").raster_at(0.5));
}

}  // TEST_SUITE("render")
