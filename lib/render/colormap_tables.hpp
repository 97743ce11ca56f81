// The colormap tables' storage (colormap_tables.cpp); use colormap.hpp, not this, elsewhere.
#pragma once

namespace attn_viz {

// 256 (r, g, b) triples in [0, 1], from BIDS/colormap (CC0).
extern const float viridis_table[256 * 3];
extern const float magma_table[256 * 3];
extern const float inferno_table[256 * 3];
extern const float plasma_table[256 * 3];

}  // namespace attn_viz
