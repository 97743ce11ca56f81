// Colormap lookup and the weight -> color position mapping (see colormap.hpp).
#include "colormap.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "colormap_tables.hpp"
#include "error.hpp"

namespace attn_viz {

namespace {

uint8_t to_byte(double unit) { return static_cast<uint8_t>(std::lround(std::clamp(unit, 0.0, 1.0) * 255.0)); }

// ColorBrewer's 11-class RdBu (Cynthia A. Brewer, Pennsylvania State University; Apache-2.0
// style licence), reversed so that low values are blue: the anchors of diverging_colormap, whose
// 256 entries interpolate linearly between them (entries 127 and 128 straddle the white middle).
constexpr uint8_t rdbu_anchors[11][3] = {{5, 48, 97},     {33, 102, 172},  {67, 147, 195},  {146, 197, 222},
                                         {209, 229, 240}, {247, 247, 247}, {253, 219, 199}, {244, 165, 130},
                                         {214, 96, 77},   {178, 24, 43},   {103, 0, 31}};

Rgb rdbu_entry(int i) {
    const double at = i * 10.0 / 255.0;
    const int k = std::min(9, static_cast<int>(at));
    const double t = at - k;
    uint8_t c[3];
    for (int ch = 0; ch < 3; ++ch)
        c[ch] = static_cast<uint8_t>(
            std::lround(rdbu_anchors[k][ch] + t * (rdbu_anchors[k + 1][ch] - rdbu_anchors[k][ch])));
    return {c[0], c[1], c[2]};
}

}  // namespace

const std::vector<std::string>& Colormap::names() {
    static const std::vector<std::string> all = {"viridis", "magma", "inferno", "plasma", "gray"};
    return all;
}

Colormap Colormap::named(const std::string& name) {
    Colormap map;
    map.name_ = name;
    const float* table = nullptr;
    if (name == "viridis")
        table = viridis_table;
    else if (name == "magma")
        table = magma_table;
    else if (name == "inferno")
        table = inferno_table;
    else if (name == "plasma")
        table = plasma_table;
    else if (name != "gray" && name != diverging_colormap) {
        throw Error(ErrorKind::usage, fmt::format("unknown colormap '{}' (choose {})", name, fmt::join(names(), ", ")));
    }
    for (int i = 0; i < 256; ++i) {
        if (name == diverging_colormap) {
            map.entries_[static_cast<size_t>(i)] = rdbu_entry(i);
        } else if (table) {
            map.entries_[static_cast<size_t>(i)] = {to_byte(table[3 * i]), to_byte(table[3 * i + 1]),
                                                    to_byte(table[3 * i + 2])};
        } else {
            const auto level = static_cast<uint8_t>(i);
            map.entries_[static_cast<size_t>(i)] = {level, level, level};
        }
    }
    for (int level = 0; level < raster_levels; ++level)
        map.raster_entries_[static_cast<size_t>(level)] = map.at(static_cast<double>(level) / (raster_levels - 1));
    return map;
}

Rgb Colormap::at(double position) const { return entries_[static_cast<size_t>(nearest_step(position, 255))]; }

Rgb Colormap::raster_at(double position) const { return raster_entries_[static_cast<size_t>(raster_level(position))]; }

double ValueScale::log_floor() const {
    const double top = std::max<double>(vmax, 1e-30);
    return std::max<double>(vmin, top * 1e-4);
}

double ValueScale::value_at(double position) const {
    if (log_scale) {
        const double low = std::log10(log_floor());
        const double high = std::log10(std::max<double>(vmax, 1e-30));
        return std::pow(10.0, low + position * (high - low));
    }
    return vmin + position * (static_cast<double>(vmax) - vmin);
}

}  // namespace attn_viz
