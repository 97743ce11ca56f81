// Render suite: layers x heads pictures of one number per head (issue 44 item 3): a signed measure
// (an ablation's change of loss, a patching effect, a logit attribution) on the diverging map over a
// range symmetric about 0, so 0 takes its centre and the signs its two halves; an unsigned one from
// 0; heads without a value hatched, never drawn as a value.
#include <cmath>

#include <doctest/doctest.h>

#include "error.hpp"
#include "figure_head_grid.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

TEST_SUITE("render") {

TEST_CASE("head grid: a signed measure draws 0 at the diverging map's centre, the signs in opposite halves") {
    ScratchDir dir;
    // 2 layers x 3 heads: -0.02 (a head whose removal lowers the loss), 0, +0.01, +0.03, a head not
    // measured, -0.005.
    const std::vector<float> values = {-0.02f, 0.0f, 0.01f, 0.03f, NAN, -0.005f};
    HeadGridStyle style;
    style.title = "Change of next-token loss when a head is zero-ablated", style.value_label = "delta loss (nats)";
    style.signed_values = true;
    style.colormap = "magma";  // the run's colormap colours weights, never a signed measure
    const HeatmapLayout layout = write_head_grid_png(dir / "g.png", values, 2, 3, style);
    const DecodedPng png = decode_png(dir / "g.png");
    REQUIRE(png.width == layout.width);
    const ValueRange range = head_grid_range(values, style);
    CHECK(range.vmin == -0.03f);
    CHECK(range.vmax == 0.03f);
    const Colormap map = Colormap::named(diverging_colormap);
    CHECK(cell_pixel(png, layout, 0, 1) == map.raster_at(0.5));  // 0: the centre colour, near white
    const Rgb zero = cell_pixel(png, layout, 0, 1);
    CHECK(std::min({zero.r, zero.g, zero.b}) >= 240);
    for (const auto& [r, c] : {std::pair{0, 0}, std::pair{1, 2}}) {  // negative: the blue half
        const Rgb p = cell_pixel(png, layout, r, c);
        CHECK_MESSAGE(p.b > p.r + 20, r << "," << c);
    }
    for (const auto& [r, c] : {std::pair{0, 2}, std::pair{1, 0}}) {  // positive: the red half
        const Rgb p = cell_pixel(png, layout, r, c);
        CHECK_MESSAGE(p.r > p.b + 20, r << "," << c);
    }
    // Equal magnitudes of either sign sit equally far from the centre: the most negative (-0.02)
    // is lighter than the most positive (+0.03), which takes the map's end.
    CHECK(cell_pixel(png, layout, 1, 0) == map.raster_at(1.0));
    CHECK(cell_pixel(png, layout, 0, 0) == map.raster_at(ValueScale{-0.03f, 0.03f}.position(-0.02f)));
    check_hatched(png, layout, 1, 1);  // not measured: hatched, not white
    // The colorbar has a tick at 0, where 0's colour is.
    bool tick_at_zero = false;
    for (const ColorbarTick& tick : layout.ticks) tick_at_zero |= tick.value == 0.0;
    CHECK(tick_at_zero);
}

TEST_CASE("head grid: an unsigned measure starts at 0, so its smallest value does not read as none") {
    ScratchDir dir;
    const std::vector<float> values = {0.5f, 2.0f, 1.0f, 1.5f};
    HeadGridStyle style;
    style.value_label = "mean KL (nats)";
    const HeatmapLayout layout = write_head_grid_png(dir / "g.png", values, 2, 2, style);
    const DecodedPng png = decode_png(dir / "g.png");
    REQUIRE(png.width == layout.width);
    const ValueRange range = head_grid_range(values, style);
    CHECK(range.vmin == 0.0f);
    CHECK(range.vmax == 2.0f);
    const Colormap viridis = Colormap::named("viridis");
    CHECK(cell_pixel(png, layout, 0, 0) == viridis.raster_at(0.25));
    CHECK(cell_pixel(png, layout, 0, 1) == viridis.raster_at(1.0));
    // Fixed ends and a log scale (keys needed: 1 to S keys) are kept as given.
    style.log_scale = true, style.low = 1.0f, style.high = 100.0f;
    const ValueRange fixed = head_grid_range(values, style);
    CHECK(fixed.vmin == 1.0f);
    CHECK(fixed.vmax == 100.0f);
    CHECK_THROWS_AS(write_head_grid_png(dir / "bad.png", values, 3, 2, style), Error);
}

}  // TEST_SUITE("render")
