// Render suite, part 1: colormaps, value scales, token display, UTF-8, window/pool parsing,
// pooling, and the per-head PNG (colors, masks, labels, log/global scale, window, sizes).
#define STB_IMAGE_IMPLEMENTATION
#include <chrono>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "font.hpp"
#include "heatmap.hpp"
#include "render_test_support.hpp"
#include "token_display.hpp"
#include "utf8.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

bool overlap(const TextPlacement& a, const TextPlacement& b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

std::vector<std::string> words(int64_t n) {
    static const char* pool[] = {"ĠThe", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat", ".", "Ċ", "ĠIt", "Ġpurred"};
    std::vector<std::string> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(pool[i % 10]);
    return out;
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("colormap tables match the BIDS/matplotlib numbers and reject unknown names") {
    const Colormap viridis = Colormap::named("viridis");
    const auto byte = [](double v) { return static_cast<uint8_t>(std::lround(v * 255)); };
    CHECK(viridis.entry(0) == Rgb{byte(0.267004), byte(0.004874), byte(0.329415)});
    CHECK(viridis.entry(255) == Rgb{byte(0.993248), byte(0.906157), byte(0.143936)});
    CHECK(Colormap::named("magma").entry(0) == Rgb{byte(0.001462), byte(0.000466), byte(0.013866)});
    CHECK(Colormap::named("plasma").entry(255) == Rgb{byte(0.940015), byte(0.975158), byte(0.131326)});
    CHECK(Colormap::named("inferno").entry(255) == Rgb{byte(0.988362), byte(0.998364), byte(0.644924)});
    CHECK(Colormap::named("gray").entry(200) == Rgb{200, 200, 200});
    for (const std::string& name : Colormap::names()) {
        const Colormap map = Colormap::named(name);
        // Perceptual maps are monotone in lightness: the ends differ strongly.
        const Rgb low = map.entry(0), high = map.entry(255);
        CHECK(low.r + low.g + low.b + 200 < high.r + high.g + high.b);
        CHECK(map.at(-1.0) == low);
        CHECK(map.at(2.0) == high);
        if (name != "gray") CHECK_FALSE(map.at(0.5) == mask_color);
    }
    expect_error(ErrorKind::usage, [] { Colormap::named("jet"); }, {"viridis"});
}

TEST_CASE("value scale positions: linear and log against a double reference") {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int trial = 0; trial < 200; ++trial) {
        const double vmin = uniform(rng()) * 0.2, vmax = 0.3 + uniform(rng()) * 0.7, v = uniform(rng());
        const ValueScale linear{static_cast<float>(vmin), static_cast<float>(vmax), false};
        CHECK(linear.position(static_cast<float>(v)) ==
              doctest::Approx(std::clamp((v - float(vmin)) / (float(vmax) - float(vmin)), 0.0, 1.0)).epsilon(1e-5));
        const ValueScale log{static_cast<float>(vmin), static_cast<float>(vmax), true};
        const double floor = std::max<double>(float(vmin), float(vmax) * 1e-4);
        const double expected =
            (std::log10(std::max(v, floor)) - std::log10(floor)) / (std::log10(float(vmax)) - std::log10(floor));
        CHECK(log.position(static_cast<float>(v)) == doctest::Approx(std::clamp(expected, 0.0, 1.0)).epsilon(1e-4));
        CHECK(log.value_at(log.position(static_cast<float>(vmax))) == doctest::Approx(float(vmax)).epsilon(1e-5));
    }
    // vmin = 0 on a log scale uses vmax * 1e-4 as its floor; zero takes the bottom color.
    const ValueScale log{0.0f, 0.5f, true};
    CHECK(log.log_floor() == doctest::Approx(0.5e-4));
    CHECK(log.position(0.0f) == 0.0);
    CHECK(log.position(0.5e-2f) == doctest::Approx(0.5));
}

TEST_CASE("display_token makes tokenizer markers readable") {
    CHECK(display_token("Ġhello") == "\u2423hello");
    CHECK(display_token("\u2581world") == "\u2423world");
    CHECK(display_token("ĠĠ") == "\u2423\u2423");
    CHECK(display_token("Ċ") == "\u21B5");
    CHECK(display_token("<0x0A>") == "\u21B5");
    CHECK(display_token("ĉ") == "\u21E5");
    CHECK(display_token("<0x41>") == "A");
    CHECK(display_token("<0x20>") == "\u2423");
    CHECK(display_token("<0xE2>") == "<0xE2>");
    CHECK(display_token("<0xZZ>") == "<0xZZ>");
    CHECK(display_token("a\nb") == "a\u21B5b");
    CHECK(display_token(std::string("x\x01y", 3)) == "x<0x01>y");
    CHECK(display_token("") == "\u2205");
    CHECK(display_token("naïve 日本 😀") == "naïve\u2423日本\u2423😀");
    CHECK(display_token("bad\xff") == "bad\uFFFD");
}

TEST_CASE("UTF-8 decoding replaces invalid bytes with U+FFFD") {
    CHECK(decode_utf8("aé日😀") == std::u32string{U'a', U'é', U'日', U'😀'});
    CHECK(decode_utf8("\xff") == std::u32string{0xFFFD});
    CHECK(decode_utf8("\xe6\x97") == std::u32string{0xFFFD, 0xFFFD});              // truncated
    CHECK(decode_utf8("\xc0\xaf") == std::u32string{0xFFFD, 0xFFFD});              // overlong '/'
    CHECK(decode_utf8("\xed\xa0\x80") == std::u32string{0xFFFD, 0xFFFD, 0xFFFD});  // surrogate
    for (char32_t c : {U'a', U'é', U'日', U'😀'}) CHECK(decode_utf8(encode_utf8(c)) == std::u32string{c});
}

TEST_CASE("window, pool and scale options parse or fail clearly") {
    const CellWindow w = parse_cell_window("2:10,0:7");
    CHECK((w.q0 == 2 && w.q1 == 10 && w.k0 == 0 && w.k1 == 7));
    for (const std::string bad : {"2:10", "a:b,0:1", "5:2,0:1", "0:1,3:3", "-1:2,0:1", "0:1,0:2x", ""})
        expect_error(ErrorKind::usage, [&] { parse_cell_window(bad); }, {"window '" + bad + "'"});
    CHECK_THROWS_AS(check_cell_window(parse_cell_window("0:5,0:3"), 4, 4), Error);
    CHECK(parse_pool_mode("max") == PoolMode::max);
    CHECK_THROWS_AS(parse_pool_mode("median"), Error);
    CHECK(parse_scale_mode("global") == ScaleMode::global);
    CHECK_THROWS_AS(parse_scale_mode("layer"), Error);
}

TEST_CASE("pooling a causal 4x4 map to 2x2: mean and max by hand, masked entries left out") {
    const Visibility v = square_visibility(4, true);
    const std::vector<float> w = random_attention(v);
    auto at = [&](int i, int j) { return static_cast<double>(w[static_cast<size_t>(i * 4 + j)]); };
    const CellGrid mean = build_cell_grid(w.data(), v, std::nullopt, 2, 2, PoolMode::mean);
    REQUIRE((mean.rows == 2 && mean.cols == 2));
    CHECK(mean.row_edges == std::vector<int64_t>{0, 2, 4});
    CHECK(mean.value(0, 0) == doctest::Approx((at(0, 0) + at(1, 0) + at(1, 1)) / 3));
    CHECK(mean.is_masked(0, 1));  // queries 0-1 see no key 2-3
    CHECK(mean.value(1, 0) == doctest::Approx((at(2, 0) + at(2, 1) + at(3, 0) + at(3, 1)) / 4));
    CHECK(mean.value(1, 1) == doctest::Approx((at(2, 2) + at(3, 2) + at(3, 3)) / 3));
    CHECK(mean.pooled());
    const CellGrid max = build_cell_grid(w.data(), v, std::nullopt, 2, 2, PoolMode::max);
    CHECK(max.value(0, 0) == doctest::Approx(std::max({at(0, 0), at(1, 0), at(1, 1)})));
    CHECK(max.value(1, 0) == doctest::Approx(std::max({at(2, 0), at(2, 1), at(3, 0), at(3, 1)})));
    CHECK(max.value(1, 1) == doctest::Approx(std::max({at(2, 2), at(3, 2), at(3, 3)})));
}

TEST_CASE("pooling odd sizes with padding matches a double reference") {
    for (const auto& [t, s, cells] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{7, 5, 3}, {9, 9, 4}, {5, 11, 2}}) {
        Visibility v;
        v.queries = t;
        v.keys = s;
        v.key_excluded.assign(static_cast<size_t>(s), 0);
        v.key_excluded[static_cast<size_t>(s - 1)] = 1;
        const std::vector<float> w = random_attention(v);
        const CellGrid grid = build_cell_grid(w.data(), v, std::nullopt, cells, cells, PoolMode::mean);
        const int64_t block_r = (t + cells - 1) / cells, block_c = (s + cells - 1) / cells;
        CHECK(grid.rows == (t + block_r - 1) / block_r);
        for (int64_t r = 0; r < grid.rows; ++r)
            for (int64_t c = 0; c < grid.cols; ++c) {
                double sum = 0;
                int n = 0;
                for (int64_t i = r * block_r; i < std::min(t, (r + 1) * block_r); ++i)
                    for (int64_t j = c * block_c; j < std::min(s, (c + 1) * block_c); ++j)
                        if (j != s - 1) {
                            sum += w[static_cast<size_t>(i * s + j)];
                            ++n;
                        }
                CHECK(grid.is_masked(r, c) == (n == 0));
                if (n) CHECK(grid.value(r, c) == doctest::Approx(sum / n));
            }
    }
}

TEST_CASE("per-head PNG: cell colors follow the colormap, masked cells use the mask color") {
    ScratchDir dir;
    for (int64_t t : {1, 3, 10, 17}) {
        for (const std::string cmap : {"viridis", "magma", "gray"}) {
            const Visibility v = square_visibility(t, true);
            const std::vector<float> w = random_attention(v);
            HeatmapStyle style;
            style.colormap = cmap;
            const ValueRange range = visible_value_range(w.data(), v);
            style.vmin = range.vmin;
            style.vmax = range.vmax;
            const HeatmapLayout layout = write_head_png(dir / "h.png", w.data(), v, words(t), words(t), style);
            const DecodedPng png = decode_png(dir / "h.png");
            REQUIRE(png.width == layout.width);
            REQUIRE(png.height == layout.height);
            CHECK(layout.cells.rows == t);
            CHECK(layout.cell_w == std::min(48, layout.cell_w));
            CHECK(layout.cell_w * t >= std::min<int64_t>(48 * t, 400));  // small maps get big cells
            for (int64_t i = 0; i < t; ++i)
                for (int64_t j = 0; j < t; ++j) {
                    const Rgb pixel = cell_pixel(png, layout, i, j);
                    if (j <= i)
                        CHECK(pixel == expected_color(style, w[static_cast<size_t>(i * t + j)]));
                    else {
                        CHECK(pixel == mask_color);
                        CHECK_FALSE(pixel == Colormap::named(cmap).entry(0));
                    }
                }
            if (t >= 3) {  // the largest and smallest visible weights get different colors
                CHECK_FALSE(expected_color(style, range.vmin) == expected_color(style, range.vmax));
            }
        }
    }
}

TEST_CASE(
    "a sliding-window map: keys before the window are masked cells, pooled blocks and the color range leave them out") {
    ScratchDir dir;
    for (const auto& [t, window] : std::vector<std::pair<int64_t, int64_t>>{{9, 3}, {12, 1}, {7, 6}}) {
        CAPTURE(t);
        CAPTURE(window);
        Visibility v = square_visibility(t, true);
        v.window = window;
        std::vector<float> w = random_attention(v);
        // A large value hidden outside the window must not reach a cell or the range.
        w[static_cast<size_t>((t - 1) * t)] = 0.0f;
        const ValueRange range = visible_value_range(w.data(), v);
        float largest = 0;
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j)
                if (v.visible(i, j)) largest = std::max(largest, w[static_cast<size_t>(i * t + j)]);
        CHECK(range.vmax == largest);
        HeatmapStyle style;
        style.vmin = range.vmin;
        style.vmax = range.vmax;
        const HeatmapLayout layout = write_head_png(dir / "h.png", w.data(), v, words(t), words(t), style);
        const DecodedPng png = decode_png(dir / "h.png");
        for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) {
                const Rgb pixel = cell_pixel(png, layout, i, j);
                if (v.visible(i, j))
                    CHECK(pixel == expected_color(style, w[static_cast<size_t>(i * t + j)]));
                else
                    CHECK(pixel == mask_color);
            }
        // Pooled 2 x 2 blocks: the mean over the block's visible entries only.
        const CellGrid grid = build_cell_grid(w.data(), v, std::nullopt, (t + 1) / 2, (t + 1) / 2, PoolMode::mean);
        for (int64_t r = 0; r < grid.rows; ++r)
            for (int64_t c = 0; c < grid.cols; ++c) {
                double sum = 0;
                int n = 0;
                for (int64_t i = grid.row_edges[static_cast<size_t>(r)]; i < grid.row_edges[static_cast<size_t>(r + 1)];
                     ++i)
                    for (int64_t j = grid.col_edges[static_cast<size_t>(c)];
                         j < grid.col_edges[static_cast<size_t>(c + 1)]; ++j)
                        if (v.visible(i, j)) sum += w[static_cast<size_t>(i * t + j)], ++n;
                CHECK(grid.is_masked(r, c) == (n == 0));
                if (n) CHECK(grid.value(r, c) == doctest::Approx(sum / n));
            }
    }
}

TEST_CASE("a 10-token map has readable cells and non-overlapping labels with text in them") {
    ScratchDir dir;
    const Visibility v = square_visibility(10, false);
    const std::vector<float> w = random_attention(v);
    HeatmapStyle style;
    style.title = "layer 0 head 3 - previous-token - entropy 0.42 nats";
    const HeatmapLayout layout = write_head_png(dir / "h.png", w.data(), v, words(10), words(10), style);
    const DecodedPng png = decode_png(dir / "h.png");
    CHECK(layout.cell_w >= 24);
    REQUIRE(layout.row_labels.size() == 10);
    REQUIRE(layout.column_labels.size() == 10);
    CHECK(layout.row_labels[1].text == display_token("Ġcat"));
    for (const auto* group : {&layout.row_labels, &layout.column_labels}) {
        for (size_t a = 0; a < group->size(); ++a) {
            const TextPlacement& p = (*group)[a];
            CHECK(p.x >= 0);
            CHECK(p.y >= 0);
            CHECK(p.x + p.width <= layout.width);
            CHECK(dark_pixels(png, p.x, p.y, p.width, p.height) > 0);  // "." has one or two
            for (size_t b = a + 1; b < group->size(); ++b) CHECK_FALSE(overlap(p, (*group)[b]));
        }
    }
    for (const TextPlacement& row : layout.row_labels)
        for (const TextPlacement& col : layout.column_labels) CHECK_FALSE(overlap(row, col));
    CHECK(dark_pixels(png, layout.title.x, layout.title.y, layout.title.width, layout.title.height) > 20);
    // The colorbar shows the colormap's ends at its ends.
    CHECK(png.at(layout.colorbar_x + 4, layout.colorbar_y) == Colormap::named("viridis").entry(255));
    CHECK(png.at(layout.colorbar_x + 4, layout.colorbar_y + layout.colorbar_h - 1) ==
          Colormap::named("viridis").entry(0));
    CHECK(layout.ticks.size() >= 2);
    // Background outside everything is white.
    CHECK(png.at(1, 1) == background_color);
}

TEST_CASE("--no-labels leaves out token labels and axis names but keeps cells and colorbar") {
    ScratchDir dir;
    const Visibility v = square_visibility(6, true);
    const std::vector<float> w = random_attention(v);
    HeatmapStyle style;
    const HeatmapLayout labelled = layout_heatmap(w.data(), v, words(6), words(6), style);
    style.labels = false;
    const HeatmapLayout layout = write_head_png(dir / "n.png", w.data(), v, words(6), words(6), style);
    const DecodedPng png = decode_png(dir / "n.png");
    CHECK(layout.row_labels.empty());
    CHECK(layout.column_labels.empty());
    CHECK(layout.grid_x < labelled.grid_x);
    CHECK(layout.width < labelled.width);
    for (int64_t i = 0; i < 6; ++i)
        CHECK(cell_pixel(png, layout, i, 0) == expected_color(style, w[static_cast<size_t>(i * 6)]));
    CHECK(dark_pixels(png, 0, layout.grid_y, layout.grid_x - 2, layout.grid_height()) == 0);
}

TEST_CASE("log scale and global vs per-head scale change the colors as specified") {
    ScratchDir dir;
    const Visibility v = square_visibility(12, false);
    const std::vector<float> w = random_attention(v, 6.0f);
    const ValueRange range = visible_value_range(w.data(), v);
    HeatmapStyle head;
    head.vmin = range.vmin;
    head.vmax = range.vmax;
    HeatmapStyle global = head;
    global.vmin = 0.0f;
    global.vmax = 1.0f;
    HeatmapStyle log = head;
    log.log_scale = true;
    const size_t top = static_cast<size_t>(std::max_element(w.begin(), w.end()) - w.begin());
    int differ_log = 0;
    for (const HeatmapStyle* style : {&head, &global, &log}) {
        const HeatmapLayout layout = write_head_png(dir / "s.png", w.data(), v, {}, {}, *style);
        const DecodedPng png = decode_png(dir / "s.png");
        for (size_t k = 0; k < w.size(); ++k) {
            const Rgb pixel = cell_pixel(png, layout, static_cast<int64_t>(k / 12), static_cast<int64_t>(k % 12));
            CHECK(pixel == expected_color(*style, w[k]));
            if (style == &log) differ_log += !(pixel == expected_color(head, w[k]));
        }
        if (style != &global)
            CHECK(cell_pixel(png, layout, static_cast<int64_t>(top / 12), static_cast<int64_t>(top % 12)) ==
                  Colormap::named("viridis").entry(255));
    }
    CHECK(differ_log > 0);
}

TEST_CASE("a window shows its sub-rectangle at full resolution with the right labels") {
    ScratchDir dir;
    const int64_t t = 40;
    const Visibility v = square_visibility(t, true);
    const std::vector<float> w = random_attention(v);
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < t; ++i) tokens.push_back(std::string("tok") + std::to_string(i));
    HeatmapStyle style;
    style.window = parse_cell_window("20:30,5:25");
    const HeatmapLayout layout = write_head_png(dir / "w.png", w.data(), v, tokens, tokens, style);
    const DecodedPng png = decode_png(dir / "w.png");
    CHECK(layout.cells.rows == 10);
    CHECK(layout.cells.cols == 20);
    CHECK_FALSE(layout.cells.pooled());
    CHECK(layout.row_labels.front().text == "tok20");
    CHECK(layout.column_labels.front().text == "tok5");
    for (int64_t r = 0; r < 10; ++r)
        for (int64_t c = 0; c < 20; ++c) {
            const int64_t i = 20 + r, j = 5 + c;
            CHECK(cell_pixel(png, layout, r, c) ==
                  (j <= i ? expected_color(style, w[static_cast<size_t>(i * t + j)]) : mask_color));
        }
    style.window = parse_cell_window("0:41,0:5");
    CHECK_THROWS_AS(write_head_png(dir / "w.png", w.data(), v, tokens, tokens, style), Error);
}

TEST_CASE("long maps are pooled into a bounded picture quickly; T=1 still draws") {
    ScratchDir dir;
    {
        const Visibility v = square_visibility(4096, true);
        const std::vector<float> w = random_attention(v);
        HeatmapStyle style;
        style.vmax = 0.05f;
        const auto start = std::chrono::steady_clock::now();
        const HeatmapLayout layout = write_head_png(dir / "big.png", w.data(), v, words(4096), words(4096), style);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CHECK(seconds < 5.0);
        const DecodedPng png = decode_png(dir / "big.png");
        CHECK(png.width <= style.max_px);
        CHECK(png.height <= style.max_px);
        CHECK(layout.cells.pooled());
        CHECK(layout.row_labels.size() < 200);
        CHECK(layout.row_labels[1].text.rfind("#", 0) == 0);  // thinned labels carry their index
        // A pooled cell shows the largest weight of its block (max-pooling is the default).
        const int64_t r = layout.cells.rows / 2, c = layout.cells.cols / 3;
        float largest = -1.0f;
        for (int64_t i = layout.cells.row_edges[static_cast<size_t>(r)];
             i < layout.cells.row_edges[static_cast<size_t>(r + 1)]; ++i)
            for (int64_t j = layout.cells.col_edges[static_cast<size_t>(c)];
                 j < layout.cells.col_edges[static_cast<size_t>(c + 1)]; ++j)
                if (j <= i) largest = std::max(largest, w[static_cast<size_t>(i * 4096 + j)]);
        CHECK(layout.cells.value(r, c) == largest);
        CHECK(cell_pixel(png, layout, r, c) == expected_color(style, layout.cells.value(r, c)));
    }
    {
        const Visibility v = square_visibility(1, true);
        const std::vector<float> w = {1.0f};
        HeatmapStyle style;
        const HeatmapLayout layout = write_head_png(dir / "one.png", w.data(), v, {"Ġhi"}, {"Ġhi"}, style);
        const DecodedPng png = decode_png(dir / "one.png");
        CHECK(layout.cell_w == 48);
        CHECK(cell_pixel(png, layout, 0, 0) == Colormap::named("viridis").entry(255));
        CHECK(layout.row_labels.size() == 1);
        CHECK(dark_pixels(png, layout.row_labels[0].x, layout.row_labels[0].y, layout.row_labels[0].width,
                          layout.row_labels[0].height) > 3);
    }
}

TEST_CASE("UTF-8, emoji, CJK, invalid and byte tokens all draw as text") {
    ScratchDir dir;
    const std::vector<std::string> tokens = {"naïve", "日本", "😀", "bad\xff\xfe", "<0x0A>", "Ġ", "\u2581x", "<0xE2>"};
    const Visibility v = square_visibility(static_cast<int64_t>(tokens.size()), false);
    const std::vector<float> w = random_attention(v);
    const HeatmapLayout layout = write_head_png(dir / "u.png", w.data(), v, tokens, tokens, HeatmapStyle{});
    const DecodedPng png = decode_png(dir / "u.png");
    REQUIRE(layout.row_labels.size() == tokens.size());
    for (const TextPlacement& p : layout.row_labels) {
        CHECK(p.width > 0);
        CHECK(dark_pixels(png, p.x, p.y, p.width, p.height) > 3);
    }
    const Font& font = Font::default_font();
    CHECK(font.has_glyph(U'ï'));
    CHECK_FALSE(font.has_glyph(U'日'));  // drawn as a box: still ink, still width
    CHECK(font.text_width("日本", 12) > 10);
    const TextMask box = font.render("日", 12);
    CHECK(std::count_if(box.alpha.begin(), box.alpha.end(), [](uint8_t a) { return a > 128; }) > 10);
    CHECK(fit_text(font, std::string(200, 'w'), 12, 60).find("\u2026") != std::string::npos);
    CHECK(font.text_width(fit_text(font, std::string(200, 'w'), 12, 60), 12) <= 60);
}

}  // TEST_SUITE("render")
