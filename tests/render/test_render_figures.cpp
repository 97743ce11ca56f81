// Render suite, part 2: overview sheet, head-by-head matrix, bar chart, SVG (the HTML report:
// test_render_html.cpp).
#include <fstream>
#include <regex>

#include <doctest/doctest.h>

#include "error.hpp"
#include "figure_bar_chart.hpp"
#include "figure_matrix.hpp"
#include "figure_overview.hpp"
#include "render_test_support.hpp"
#include "svg_heatmap.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

// Minimal XML check: tags nest and close properly, outside of text content.
bool tags_balanced(const std::string& xml) {
    std::vector<std::string> open;
    std::regex tag(R"(<(/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*?(/?)>)");
    for (auto it = std::sregex_iterator(xml.begin(), xml.end(), tag); it != std::sregex_iterator(); ++it) {
        const std::string name = (*it)[2];
        if ((*it)[3] == "/") continue;
        if ((*it)[1] == "/") {
            if (open.empty() || open.back() != name) return false;
            open.pop_back();
        } else {
            open.push_back(name);
        }
    }
    return open.empty();
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("overview sheet: one labelled tile per layer x head, per-head and global colors") {
    ScratchDir dir;
    const int64_t t = 7;
    const Visibility v = square_visibility(t, true);
    const std::vector<Tensor> layers = random_layers(3, 5, v);
    for (ScaleMode scale : {ScaleMode::head, ScaleMode::global}) {
        HeatmapStyle style;
        style.title = "overview";
        style.vmin = 0.0f;
        style.vmax = 1.0f;
        const OverviewLayout layout = write_overview_png(dir / "o.png", pointers(layers), {4, 5, 6}, v, style, scale);
        const DecodedPng png = decode_png(dir / "o.png");
        REQUIRE(png.width == layout.width);
        CHECK(png.height == layout.height);
        REQUIRE(layout.tile_x.size() == 15);
        int captions = 0;
        for (const TextPlacement& text : layout.texts) captions += text.text == "L5 H3";
        CHECK(captions == 1);
        const Colormap viridis = Colormap::named("viridis");
        for (int l = 0; l < 3; ++l)
            for (int h = 0; h < 5; ++h) {
                const float* w = layers[static_cast<size_t>(l)].ptr() + h * t * t;
                const ValueRange range = visible_value_range(w, v);
                const ValueScale value_scale =
                    scale == ScaleMode::head ? ValueScale{range.vmin, range.vmax, false} : ValueScale{0, 1, false};
                const int x0 = layout.tile_x[static_cast<size_t>(l * 5 + h)],
                          y0 = layout.tile_y[static_cast<size_t>(l * 5 + h)];
                for (int64_t i = 0; i < t; ++i)
                    for (int64_t j = 0; j < t; ++j) {
                        const Rgb pixel = png.at(x0 + static_cast<int>(j) * layout.cell_px + layout.cell_px / 2,
                                                 y0 + static_cast<int>(i) * layout.cell_px + layout.cell_px / 2);
                        CHECK(pixel == (j <= i ? viridis.raster_at(value_scale.position(w[i * t + j])) : mask_color));
                    }
            }
    }
}

TEST_CASE("overview of a long model stays bounded") {
    ScratchDir dir;
    const Visibility v = square_visibility(300, true);
    const std::vector<Tensor> layers = random_layers(6, 8, v);
    HeatmapStyle style;
    const OverviewLayout layout = write_overview_png(dir / "o.png", pointers(layers), {}, v, style, ScaleMode::head);
    CHECK(layout.width <= style.max_px);
    CHECK(layout.height <= style.max_px);
    CHECK(layout.tile_px <= 160);
}

TEST_CASE("matrix picture: correlation colors span -1..1 with head labels as given") {
    ScratchDir dir;
    for (int64_t n : {1, 6, 13}) {
        Tensor m = random_tensor({n, n});
        std::vector<std::string> labels;
        for (int64_t k = 0; k < n; ++k) {
            std::string name = "L0 H";
            name += std::to_string(k);
            labels.push_back(name);
        }
        const HeatmapLayout layout =
            write_matrix_png(dir / "m.png", m, labels, "correlation", "viridis", -1.0f, 1.0f, "correlation");
        const DecodedPng png = decode_png(dir / "m.png");
        REQUIRE(png.width == layout.width);
        CHECK(layout.row_labels.front().text == "L0 H0");  // spaces kept: not shown as tokens
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                CHECK(cell_pixel(png, layout, i, j) ==
                      Colormap::named("viridis").raster_at((m.data[static_cast<size_t>(i * n + j)] + 1.0) / 2.0));
            }
    }
}

TEST_CASE("bar chart: bar heights follow the values") {
    ScratchDir dir;
    std::uniform_real_distribution<double> uniform(0.1, 3.0);
    for (int n : {1, 12, 150}) {
        std::vector<double> values;
        std::vector<std::string> labels;
        for (int k = 0; k < n; ++k) {
            values.push_back(uniform(rng()));
            std::string name = "head ";
            name += std::to_string(k);
            labels.push_back(name);
        }
        const BarChartLayout layout = write_bar_chart_png(dir / "b.png", values, labels, "entropy", "nats");
        const DecodedPng png = decode_png(dir / "b.png");
        REQUIRE(png.width == layout.width);
        CHECK(png.width <= 1600);
        const Rgb bar_color = Colormap::named("viridis").at(0.3);
        std::vector<int> heights;
        for (int k = 0; k < n; ++k) {
            const int x = layout.bar_x[static_cast<size_t>(k)] + layout.bar_w[static_cast<size_t>(k)] / 2;
            int height = 0;
            for (int y = layout.axis_y - 1; y > 0 && png.at(x, y) == bar_color; --y) ++height;
            heights.push_back(height);
        }
        const size_t tallest = static_cast<size_t>(std::max_element(values.begin(), values.end()) - values.begin());
        for (int k = 0; k < n; ++k)
            CHECK(heights[static_cast<size_t>(k)] ==
                  doctest::Approx(heights[tallest] * values[static_cast<size_t>(k)] / values[tallest])
                      .epsilon(0.02)
                      .scale(100));
        CHECK(!layout.labels.empty());
        for (const TextPlacement& p : layout.labels) CHECK(dark_pixels(png, p.x, p.y, p.width, p.height) > 0);
    }
}

TEST_CASE("SVG of one head: well formed, one rect per visible cell, labels as text") {
    ScratchDir dir;
    for (bool causal : {false, true}) {
        const int64_t t = 9;
        const Visibility v = square_visibility(t, causal);
        const std::vector<float> w = random_attention(v);
        std::vector<std::string> tokens = {"Ġa", "<b>", "&c", "\"d\"", "e", "f", "g", "h", "日本"};
        HeatmapStyle style;
        style.title = "layer 1 head 2 <test>";
        write_head_svg(dir / "h.svg", w.data(), v, tokens, tokens, style);
        const std::string svg = read_text(dir / "h.svg");
        CHECK(svg.rfind("<svg", 0) == 0);
        CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
        CHECK(tags_balanced(svg));
        const int visible = causal ? static_cast<int>(t * (t + 1) / 2) : static_cast<int>(t * t);
        CHECK(count_of(svg, "<rect ") == 4 + visible);  // hatch pattern, background, grid underlay, colorbar + cells
        CHECK(count_of(svg, "&lt;b&gt;") == 2);
        CHECK(count_of(svg, "&amp;c") == 2);
        CHECK(svg.find("layer 1 head 2 &lt;test&gt;") != std::string::npos);
        const Rgb first = Colormap::named("viridis").at(ValueScale{style.vmin, style.vmax, false}.position(w[0]));
        char fill[32];
        std::snprintf(fill, sizeof fill, "fill=\"#%02x%02x%02x\"", first.r, first.g, first.b);
        CHECK(svg.find(fill) != std::string::npos);
    }
}

}  // TEST_SUITE("render")
