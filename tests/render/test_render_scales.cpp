// Render suite, part 3: honest color scales. A uniform head is drawn in the color of its weight,
// never the top color; the overview shares one numbered scale from 0; --vmin/--vmax fix the ends;
// pooled pictures say so in the title and keep sharp diagonals (max-pooling); matrices separate
// layers; dark maps are recognised. Checked on decoded PNG pixels.
#include <doctest/doctest.h>

#include "color_range.hpp"
#include "figure_matrix.hpp"
#include "figure_overview.hpp"
#include "heatmap.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

// [T, T] every weight 1/T: the uniform head.
std::vector<float> uniform_map(int64_t t) {
    return std::vector<float>(static_cast<size_t>(t * t), 1.0f / static_cast<float>(t));
}

// [T, T] one-hot rows: query i attends to key max(i - 1, 0) (a previous-token head, causal).
std::vector<float> previous_token_map(int64_t t) {
    std::vector<float> w(static_cast<size_t>(t * t), 0.0f);
    for (int64_t i = 0; i < t; ++i) w[static_cast<size_t>(i * t + std::max<int64_t>(i - 1, 0))] = 1.0f;
    return w;
}

// [T, T] causal uniform: row i spreads 1/(i+1) over keys 0..i.
std::vector<float> causal_uniform_map(int64_t t) {
    std::vector<float> w(static_cast<size_t>(t * t), 0.0f);
    for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j <= i; ++j) w[static_cast<size_t>(i * t + j)] = 1.0f / static_cast<float>(i + 1);
    return w;
}

int dark_pixels_in(const DecodedPng& png, int x0, int x1, int y0, int y1) {
    return dark_pixels(png, x0, y0, x1 - x0, y1 - y0);
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("map_color_range: head, global from 0, fixed ends, and a constant map widened to 0..1") {
    const ValueRange own{0.2f, 0.6f}, all{0.01f, 0.9f};
    ValueRange r = map_color_range(ColorRangeRule(ScaleMode::head), own, all);
    CHECK(r.vmin == 0.2f);
    CHECK(r.vmax == 0.6f);
    r = map_color_range(ColorRangeRule(ScaleMode::global), own, all);
    CHECK(r.vmin == 0.0f);  // starts at 0, not at the smallest weight
    CHECK(r.vmax == 0.9f);
    ColorRangeRule fixed(ScaleMode::head);
    fixed.vmax = 0.5f;
    r = map_color_range(fixed, own, all);
    CHECK(r.vmin == 0.2f);
    CHECK(r.vmax == 0.5f);
    fixed.vmin = 0.1f;
    r = map_color_range(fixed, own, all);
    CHECK(r.vmin == 0.1f);
    // Constant (and constant up to float rounding) maps: their value on 0..1, never the top.
    for (const float v : {1.0f / 12.0f, 0.25f}) {
        for (const float wobble : {0.0f, v * 1e-7f}) {
            r = map_color_range(ColorRangeRule(ScaleMode::head), {v, v + wobble}, all);
            CHECK(r.vmin == 0.0f);
            CHECK(r.vmax == 1.0f);
            CHECK(ValueScale{r.vmin, r.vmax, false}.position(v) == doctest::Approx(v));
        }
    }
    r = map_color_range(ColorRangeRule(ScaleMode::global), {0, 0}, {0, 0});  // all-zero maps: bottom color
    CHECK(r.vmax == 1.0f);
}

TEST_CASE("a uniform head of weight 1/12 is drawn in the color of 1/12, not the top color, under either scale") {
    ScratchDir dir;
    const int64_t t = 12;
    const Visibility v = square_visibility(t, false);
    const std::vector<float> w = uniform_map(t);
    const Colormap viridis = Colormap::named("viridis");
    const Rgb expected = viridis.raster_at(1.0 / 12.0);
    REQUIRE_FALSE(expected == viridis.raster_at(1.0));
    // Under head its own range is empty; under global another head of the run reaches 1.
    for (const ScaleMode mode : {ScaleMode::head, ScaleMode::global}) {
        const ValueRange own = visible_value_range(w.data(), v);
        const ValueRange range = map_color_range(ColorRangeRule(mode), own, ValueRange{own.vmin, 1.0f});
        HeatmapStyle style;
        style.vmin = range.vmin, style.vmax = range.vmax;
        style.title = "uniform";
        const HeatmapLayout layout = write_head_png(dir / "u.png", w.data(), v, {}, {}, style);
        const DecodedPng png = decode_png(dir / "u.png");
        REQUIRE(png.width == layout.width);
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) CHECK(cell_pixel(png, layout, i, j) == expected);
    }
}

TEST_CASE("overview: one shared scale from 0 with a numbered colorbar; head labels under the captions") {
    ScratchDir dir;
    const int64_t t = 12;
    const Visibility v = square_visibility(t, true);
    Tensor layer({3, t, t});
    const std::vector<float> sharp = previous_token_map(t), spread = causal_uniform_map(t);
    std::copy(sharp.begin(), sharp.end(), layer.data.begin());
    std::copy(spread.begin(), spread.end(), layer.data.begin() + t * t);
    const std::vector<float> random = random_attention(v);
    std::copy(random.begin(), random.end(), layer.data.begin() + 2 * t * t);
    HeatmapStyle style;
    style.vmin = 0.0f, style.vmax = 1.0f;
    const std::vector<std::string> labels = {"previous-token", "diffuse", "mixed"};
    const Colormap viridis = Colormap::named("viridis");
    int numbers_right_of_tiles[2] = {0, 0};
    for (const ScaleMode mode : {ScaleMode::global, ScaleMode::head}) {
        const OverviewLayout layout = write_overview_png(dir / "o.png", {&layer}, {}, v, style, mode, 1, labels);
        const DecodedPng png = decode_png(dir / "o.png");
        REQUIRE(png.width == layout.width);
        for (const std::string& label : labels) {
            int found = 0;
            for (const TextPlacement& text : layout.texts) found += text.text == label;
            CHECK(found == 1);
        }
        const auto tile_pixel = [&](int tile, int64_t i, int64_t j) {
            return png.at(
                layout.tile_x[static_cast<size_t>(tile)] + static_cast<int>(j) * layout.cell_px + layout.cell_px / 2,
                layout.tile_y[static_cast<size_t>(tile)] + static_cast<int>(i) * layout.cell_px + layout.cell_px / 2);
        };
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j <= i; ++j) {
                const size_t at = static_cast<size_t>(i * t + j);
                if (mode == ScaleMode::global) {
                    // The same weight is the same color in every tile: 1/(i+1) in the spread tile
                    // is the color of 1/(i+1) on 0..1, as in the sharp tile's scale.
                    CHECK(tile_pixel(0, i, j) == viridis.raster_at(sharp[at]));
                    CHECK(tile_pixel(1, i, j) == viridis.raster_at(spread[at]));
                    CHECK(tile_pixel(2, i, j) == viridis.raster_at(random[at]));
                } else {  // own ranges: the spread tile's smallest weight 1/12 takes the bottom color
                    const ValueRange own = visible_value_range(spread.data(), v);
                    CHECK(tile_pixel(1, i, j) ==
                          viridis.raster_at(ValueScale{own.vmin, own.vmax, false}.position(spread[at])));
                }
            }
        // Tick numbers right of the colorbar: 0, 0.2, ..., 1 on the shared scale, min/max per head.
        const int right = layout.tile_x.back() + layout.tile_px + 10 + 24 + 16;
        numbers_right_of_tiles[mode == ScaleMode::global ? 0 : 1] =
            dark_pixels_in(png, right, right + 40, 0, png.height);
    }
    CHECK(numbers_right_of_tiles[0] > numbers_right_of_tiles[1]);
}

TEST_CASE("overview in head mode draws a constant tile at its value, not at the top") {
    ScratchDir dir;
    const int64_t t = 12;
    const Visibility v = square_visibility(t, false);
    Tensor layer({1, t, t});
    const std::vector<float> w = uniform_map(t);
    std::copy(w.begin(), w.end(), layer.data.begin());
    const OverviewLayout layout = write_overview_png(dir / "o.png", {&layer}, {}, v, HeatmapStyle{}, ScaleMode::head);
    const DecodedPng png = decode_png(dir / "o.png");
    CHECK(png.at(layout.tile_x[0] + layout.cell_px / 2, layout.tile_y[0] + layout.cell_px / 2) ==
          Colormap::named("viridis").raster_at(1.0 / 12.0));
}

TEST_CASE("a pooled heatmap says so in its title and max-pools by default, keeping a sharp diagonal bright") {
    ScratchDir dir;
    const int64_t t = 700;
    const Visibility v = square_visibility(t, true);
    const std::vector<float> w = previous_token_map(t);
    HeatmapStyle style;
    CHECK(style.pool == PoolMode::max);
    style.max_px = 300;
    style.title = "layer 3 head 5 - previous-token - entropy 0.00 nats, a title long enough to be shortened";
    const HeatmapLayout layout = write_head_png(dir / "p.png", w.data(), v, {}, {}, style);
    REQUIRE(layout.cells.pooled());
    const int64_t block = layout.cells.row_edges[1] - layout.cells.row_edges[0];
    CHECK(block > 1);
    const std::string note = std::string("(").append(std::to_string(block)).append(" tokens per cell, max-pooled)");
    CHECK(layout.title.text.size() >= note.size());
    CHECK(layout.title.text.compare(layout.title.text.size() - note.size(), note.size(), note) == 0);
    CHECK(layout.title.text.rfind("la", 0) == 0);  // the title shortened with "…", the note kept
    CHECK(layout.title.text.find("…") != std::string::npos);
    // Every diagonal block holds a weight 1: max-pooling draws it in the top color.
    const DecodedPng png = decode_png(dir / "p.png");
    const Rgb top = Colormap::named("viridis").raster_at(1.0);
    for (int64_t r = 1; r < layout.cells.rows; ++r) CHECK(cell_pixel(png, layout, r, r) == top);
    // Unpooled maps keep their title as given.
    style.max_px = 1600;
    const HeatmapLayout small = layout_heatmap(w.data(), square_visibility(20, true), {}, {}, style);
    CHECK(small.title.text.find("tokens per cell") == std::string::npos);
}

TEST_CASE("head-by-head matrices draw white lines between layers") {
    ScratchDir dir;
    const int64_t heads = 3, n = 2 * heads;
    Tensor m({n, n});
    for (float& x : m.data) x = 0.0f;  // bottom color everywhere: any white is a separator
    std::vector<std::string> labels;
    for (int64_t k = 0; k < n; ++k) labels.push_back(std::string(1, static_cast<char>('A' + k)));
    const HeatmapLayout layout =
        write_matrix_png(dir / "m.png", m, labels, "m", "viridis", -1.0f, 1.0f, "x", 1600, heads);
    const DecodedPng png = decode_png(dir / "m.png");
    const int boundary_x = layout.grid_x + static_cast<int>(heads) * layout.cell_w;
    const int boundary_y = layout.grid_y + static_cast<int>(heads) * layout.cell_h;
    const int inside_x = layout.grid_x + layout.cell_w / 2, inside_y = layout.grid_y + layout.cell_h / 2;
    CHECK(png.at(boundary_x, inside_y) == background_color);
    CHECK(png.at(inside_x, boundary_y) == background_color);
    CHECK(png.at(boundary_x - layout.cell_w / 2, inside_y) == Colormap::named("viridis").raster_at(0.5));
    // Between heads of one layer: no line.
    CHECK(png.at(layout.grid_x + layout.cell_w, inside_y) == Colormap::named("viridis").raster_at(0.5));
}

TEST_CASE(
    "mostly_dark: long causal spread-out maps are dark on 0..1; sharp heads, log scales, flat bidirectional maps are "
    "not") {
    const int64_t t = 200;
    const Visibility v = square_visibility(t, true);
    CHECK(mostly_dark(causal_uniform_map(t).data(), v, ValueScale{0, 1, false}));
    CHECK_FALSE(mostly_dark(causal_uniform_map(t).data(), v, ValueScale{0, 1, true}));
    CHECK_FALSE(mostly_dark(previous_token_map(t).data(), v, ValueScale{0, 1, false}));
    CHECK_FALSE(mostly_dark(causal_uniform_map(8).data(), square_visibility(8, true), ValueScale{0, 1, false}));
    CHECK_FALSE(
        mostly_dark(uniform_map(t).data(), square_visibility(t, false), ValueScale{0, 1, false}));  // flat on any scale
}

}  // TEST_SUITE("render")
