// Helpers for the render tests: decode written PNGs with stb_image (its implementation is
// compiled in test_render.cpp only), random attention maps, reference colors.
#pragma once

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "colormap.hpp"
#include "heatmap_layout.hpp"
#include "raster_image.hpp"
#include "support.hpp"
#include "tensor.hpp"
#include "visibility.hpp"

namespace render_test {

struct DecodedPng {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    attn_viz::Rgb at(int x, int y) const {
        const size_t i = (static_cast<size_t>(y) * width + x) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2]};
    }
};

// Empty width when the file does not decode.
inline DecodedPng decode_png(const std::string& path) {
    DecodedPng png;
    int channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &png.width, &png.height, &channels, 3);
    if (!pixels) return {};
    png.rgb.assign(pixels, pixels + static_cast<size_t>(png.width) * png.height * 3);
    stbi_image_free(pixels);
    return png;
}

// Pixels of the decoded picture that differ from the canvas it was written from (all of them when
// the sizes differ).
inline int64_t differing_pixels(const DecodedPng& png, const attn_viz::RasterImage& image) {
    if (png.width != image.width || png.height != image.height) return static_cast<int64_t>(image.width) * image.height;
    int64_t wrong = 0;
    for (int y = 0; y < image.height; ++y)
        for (int x = 0; x < image.width; ++x) wrong += !(png.at(x, y) == image.pixel(x, y));
    return wrong;
}

// A row-stochastic map over the visible keys (softmax of random scores); masked entries 0.
// Returns [T, S].
inline std::vector<float> random_attention(const attn_viz::Visibility& visibility, float sharpness = 3.0f) {
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> w(static_cast<size_t>(visibility.queries * visibility.keys), 0.0f);
    for (int64_t i = 0; i < visibility.queries; ++i) {
        double sum = 0;
        for (int64_t j = 0; j < visibility.keys; ++j)
            if (visibility.visible(i, j))
                sum += w[static_cast<size_t>(i * visibility.keys + j)] =
                    std::exp(sharpness * uniform(test_support::rng()));
        for (int64_t j = 0; j < visibility.keys; ++j)
            if (sum > 0)
                w[static_cast<size_t>(i * visibility.keys + j)] =
                    static_cast<float>(w[static_cast<size_t>(i * visibility.keys + j)] / sum);
    }
    return w;
}

inline attn_viz::Visibility square_visibility(int64_t t, bool causal) {
    attn_viz::Visibility v;
    v.queries = v.keys = t;
    v.causal = causal;
    return v;
}

// layers of [H, T, S] random attention (random_attention per head)
inline std::vector<attn_viz::Tensor> random_layers(int64_t n_layers, int64_t n_heads, const attn_viz::Visibility& v) {
    std::vector<attn_viz::Tensor> layers;
    for (int64_t l = 0; l < n_layers; ++l) {
        attn_viz::Tensor layer({n_heads, v.queries, v.keys});
        for (int64_t h = 0; h < n_heads; ++h) {
            const std::vector<float> w = random_attention(v);
            std::copy(w.begin(), w.end(), layer.data.begin() + h * v.queries * v.keys);
        }
        layers.push_back(std::move(layer));
    }
    return layers;
}

inline std::vector<const attn_viz::Tensor*> pointers(const std::vector<attn_viz::Tensor>& layers) {
    std::vector<const attn_viz::Tensor*> out;
    for (const attn_viz::Tensor& t : layers) out.push_back(&t);
    return out;
}

inline int count_of(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Dark (text) pixels inside a box of the decoded picture.
inline int dark_pixels(const DecodedPng& png, int x, int y, int w, int h) {
    int count = 0;
    for (int yy = std::max(0, y); yy < std::min(png.height, y + h); ++yy)
        for (int xx = std::max(0, x); xx < std::min(png.width, x + w); ++xx) {
            const attn_viz::Rgb c = png.at(xx, yy);
            count += (c.r + c.g + c.b) < 3 * 128;
        }
    return count;
}

// The color write_head_png gives a cell of this value: the colormap at raster_levels steps.
inline attn_viz::Rgb expected_color(const attn_viz::HeatmapStyle& style, float value) {
    return attn_viz::Colormap::named(style.colormap)
        .raster_at(attn_viz::ValueScale{style.vmin, style.vmax, style.log_scale}.position(value));
}

// Centre pixel of cell (r, c).
inline attn_viz::Rgb cell_pixel(const DecodedPng& png, const attn_viz::HeatmapLayout& layout, int64_t r, int64_t c) {
    return png.at(layout.grid_x + static_cast<int>(c) * layout.cell_w + layout.cell_w / 2,
                  layout.grid_y + static_cast<int>(r) * layout.cell_h + layout.cell_h / 2);
}

// Every pixel of cell (r, c) (inside its 1-px border) is a mask gray, and both grays appear.
inline void check_hatched(const DecodedPng& png, const attn_viz::HeatmapLayout& layout, int64_t r, int64_t c) {
    bool plain = false, hatch = false, other = false;
    for (int y = 1; y < layout.cell_h - 1; ++y)
        for (int x = 1; x < layout.cell_w - 1; ++x) {
            const attn_viz::Rgb p = png.at(layout.grid_x + static_cast<int>(c) * layout.cell_w + x,
                                           layout.grid_y + static_cast<int>(r) * layout.cell_h + y);
            plain |= p == attn_viz::mask_color, hatch |= p == attn_viz::mask_hatch_color;
            other |= !(p == attn_viz::mask_color) && !(p == attn_viz::mask_hatch_color);
        }
    CHECK_MESSAGE((plain && hatch && !other), "cell " << r << "," << c);
}

}  // namespace render_test
