// Colormaps (viridis, magma, inferno, plasma, gray) and the mapping from a weight to a color:
// linear or logarithmic between vmin and vmax.
#pragma once

#include <array>
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

class Colormap {
public:
    // "viridis" (default), "magma", "inferno", "plasma", "gray" (black at 0 to white at 1).
    // Throws Error(usage) naming the valid choices for any other name.
    static Colormap named(const std::string& name);
    static const std::vector<std::string>& names();

    // position in [0, 1] (clamped; NaN counts as 0) -> one of the 256 entries.
    Rgb at(double position) const;
    Rgb entry(int index) const { return entries_[static_cast<size_t>(index)]; }
    const std::string& name() const { return name_; }

private:
    std::string name_;
    std::array<Rgb, 256> entries_{};
};

// Where a weight falls between vmin and vmax. Log scale colors by log10(weight); its lower end is
// max(vmin, vmax * 1e-4) so zero weights (and vmin = 0) stay finite: they take the bottom color.
struct ValueScale {
    float vmin = 0.0f;
    float vmax = 1.0f;
    bool log_scale = false;

    double position(float value) const;   // in [0, 1]
    double log_floor() const;             // the lower end actually used by log scale
    double value_at(double position) const;  // inverse of position(), for colorbar ticks
};

}  // namespace attn_viz
