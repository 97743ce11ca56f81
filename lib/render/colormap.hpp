// Colormaps (viridis, magma, inferno, plasma, gray) and the mapping from a weight to a color:
// linear or logarithmic between vmin and vmax.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace attn_viz {

struct Rgb {
    uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

// Colors shared by every picture.
inline constexpr Rgb background_color{255, 255, 255};
inline constexpr Rgb text_color{34, 34, 34};
// Masked cells (not visible to the query: causal future or padding): a light hatch of these two
// neutral grays, never a colormap color of the perceptual maps.
inline constexpr Rgb mask_color{226, 226, 226};
inline constexpr Rgb mask_hatch_color{196, 196, 196};

// PNG pictures draw a colormap at this many evenly spaced entries instead of all 256, so that
// one picture's colors (map, white, 16 text grays, frame and mask grays) fit the 256-entry
// palette of the canvas (RasterImage draws palette indices; the PNG writer expands them).
// Neighbouring entries of the perceptual maps differ by about one unit per channel, so the step
// is invisible.
inline constexpr int raster_levels = 232;

// position in [0, 1] (clamped; NaN counts as 0) -> the nearest of the steps 0, 1, ..., top,
// halves rounded up (a cast instead of lround: this runs once per cell of a picture).
inline int nearest_step(double position, int top) {
    if (!(position > 0.0)) return 0;
    const int step = static_cast<int>(position * top + 0.5);
    return step < top ? step : top;
}

// position -> its raster level in [0, raster_levels).
inline int raster_level(double position) { return nearest_step(position, raster_levels - 1); }

// The diverging colormap of signed head-by-head matrices (correlation): ColorBrewer's RdBu, blue
// below the middle, near-white at it, red above; drawn over a range centred on 0. Not one of
// --colormap's choices (names()), which color attention weights.
inline constexpr const char* diverging_colormap = "rdbu";

class Colormap {
public:
    // "viridis" (default), "magma", "inferno", "plasma", "gray" (black at 0 to white at 1), or
    // diverging_colormap. Throws Error(usage) naming the valid choices for any other name.
    static Colormap named(const std::string& name);
    static const std::vector<std::string>& names();

    // position in [0, 1] (clamped; NaN counts as 0) -> one of the 256 entries (SVG, HTML).
    Rgb at(double position) const;
    // The same position -> one of raster_levels evenly spaced entries (PNG pictures): entry
    // round(level * 255 / (raster_levels - 1)) for level = round(position * (raster_levels - 1)).
    // Monotone; its ends are entry(0) and entry(255).
    Rgb raster_at(double position) const;
    Rgb entry(int index) const { return entries_[static_cast<size_t>(index)]; }
    const std::string& name() const { return name_; }

private:
    std::string name_;
    std::array<Rgb, 256> entries_{};
    std::array<Rgb, raster_levels> raster_entries_{};  // what raster_at() picks from
};

// Where a weight falls between vmin and vmax. Log scale colors by log10(weight); its lower end is
// max(vmin, vmax * 1e-4) so zero weights (and vmin = 0) stay finite: they take the bottom color.
struct ValueScale {
    float vmin = 0.0f;
    float vmax = 1.0f;
    bool log_scale = false;

    double position(float value) const;      // in [0, 1]; inline below: it runs once per cell
    double log_floor() const;                // the lower end actually used by log scale
    double value_at(double position) const;  // inverse of position(), for colorbar ticks
};

inline double ValueScale::position(float value) const {
    if (std::isnan(value)) return 0.0;
    double t = 0.0;
    if (log_scale) {
        const double low = std::log10(log_floor());
        const double high = std::log10(std::max<double>(vmax, 1e-30));
        if (high <= low) return value >= vmax ? 1.0 : 0.0;
        t = (std::log10(std::max<double>(value, log_floor())) - low) / (high - low);
    } else {
        if (vmax <= vmin) return value >= vmax ? 1.0 : 0.0;
        // times the reciprocal: in a cell loop the compiler hoists it, one division per picture
        t = (static_cast<double>(value) - vmin) * (1.0 / (static_cast<double>(vmax) - vmin));
    }
    return std::clamp(t, 0.0, 1.0);
}

}  // namespace attn_viz
