// SVG output of a heatmap layout (see svg_heatmap.hpp).
#include "svg_heatmap.hpp"

#include <cstdio>

#include "file_write.hpp"
#include "text_codecs.hpp"

namespace attn_viz {

namespace {

std::string hex(Rgb c) {
    char text[8];
    std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
    return text;
}

std::string number(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return text;
}

void append_text(std::string& svg, const TextPlacement& p, const Font& font) {
    const int ascent = font.baseline(p.pixel_height);
    const std::string size = number(font.em_size(p.pixel_height));
    if (p.direction == TextDirection::horizontal) {
        svg += "<text x=\"" + std::to_string(p.x) + "\" y=\"" + std::to_string(p.y + ascent) + "\" font-size=\"" +
               size + "\">";
    } else {
        // Rotated about its start, which sits at the bottom of the box.
        const std::string ax = std::to_string(p.x + ascent), ay = std::to_string(p.y + p.height);
        svg += "<text x=\"" + ax + "\" y=\"" + ay + "\" font-size=\"" + size + "\" transform=\"rotate(-90 " + ax + " " +
               ay + ")\">";
    }
    svg += xml_escape(p.text) + "</text>\n";
}

}  // namespace

std::string head_svg(const float* weights, const Visibility& visibility, const std::vector<std::string>& query_tokens,
                     const std::vector<std::string>& key_tokens, const HeatmapStyle& style) {
    const HeatmapLayout layout = layout_heatmap(weights, visibility, query_tokens, key_tokens, style);
    const Colormap colormap = Colormap::named(style.colormap);
    const ValueScale scale{style.vmin, style.vmax, style.log_scale};
    const Font& font = Font::default_font();
    const std::string w = std::to_string(layout.width), h = std::to_string(layout.height);

    // Step 1: header, the hatch pattern for masked cells, the colorbar gradient (top = vmax).
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
                      "\" viewBox=\"0 0 " + w + " " + h +
                      "\" font-family=\"DejaVu Sans, Verdana, sans-serif\" fill=\"" + hex(text_color) + "\">\n";
    svg +=
        "<defs>\n<pattern id=\"mask-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" +
        hex(mask_color) + "\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"" + hex(mask_hatch_color) +
        "\" stroke-width=\"1.5\"/></pattern>\n";
    svg += "<linearGradient id=\"colorbar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
    for (int i = 0; i <= 16; ++i)
        svg += "<stop offset=\"" + number(i / 16.0) + "\" stop-color=\"" + hex(colormap.at(i / 16.0)) + "\"/>\n";
    svg += "</linearGradient>\n</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

    // Step 2: the grid: hatch underneath, one rect per visible cell.
    svg += "<rect x=\"" + std::to_string(layout.grid_x) + "\" y=\"" + std::to_string(layout.grid_y) + "\" width=\"" +
           std::to_string(layout.grid_width()) + "\" height=\"" + std::to_string(layout.grid_height()) +
           "\" fill=\"url(#mask-hatch)\" stroke=\"#6e6e6e\"/>\n<g shape-rendering=\"crispEdges\">\n";
    for (int64_t r = 0; r < layout.cells.rows; ++r)
        for (int64_t c = 0; c < layout.cells.cols; ++c) {
            if (layout.cells.is_masked(r, c)) continue;
            svg += "<rect x=\"" + std::to_string(layout.grid_x + c * layout.cell_w) + "\" y=\"" +
                   std::to_string(layout.grid_y + r * layout.cell_h) + "\" width=\"" + std::to_string(layout.cell_w) +
                   "\" height=\"" + std::to_string(layout.cell_h) + "\" fill=\"" +
                   hex(colormap.at(scale.position(layout.cells.value(r, c)))) + "\"/>\n";
        }
    svg += "</g>\n";

    // Step 3: colorbar with tick marks, then all text.
    svg += "<rect x=\"" + std::to_string(layout.colorbar_x) + "\" y=\"" + std::to_string(layout.colorbar_y) +
           "\" width=\"" + std::to_string(layout.colorbar_w) + "\" height=\"" + std::to_string(layout.colorbar_h) +
           "\" fill=\"url(#colorbar)\" stroke=\"#6e6e6e\"/>\n";
    for (const ColorbarTick& tick : layout.ticks)
        svg += "<line x1=\"" + std::to_string(layout.colorbar_x + layout.colorbar_w) + "\" y1=\"" +
               std::to_string(tick.y) + "\" x2=\"" + std::to_string(layout.colorbar_x + layout.colorbar_w + 4) +
               "\" y2=\"" + std::to_string(tick.y) + "\" stroke=\"" + hex(text_color) + "\"/>\n";
    if (!layout.title.text.empty()) append_text(svg, layout.title, font);
    for (const auto* group : {&layout.row_labels, &layout.column_labels, &layout.other_text})
        for (const TextPlacement& text : *group) append_text(svg, text, font);
    svg += "</svg>\n";
    return svg;
}

void write_head_svg(const std::string& path, const float* weights, const Visibility& visibility,
                    const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                    const HeatmapStyle& style) {
    write_file_bytes(path, head_svg(weights, visibility, query_tokens, key_tokens, style));
}

}  // namespace attn_viz
