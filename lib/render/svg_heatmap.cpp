// SVG output of a heatmap layout (see svg_heatmap.hpp).
#include "svg_heatmap.hpp"

#include <fmt/format.h>

#include "file_write.hpp"
#include "text_codecs.hpp"

namespace attn_viz {

namespace {

std::string hex(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

std::string number(double v) { return fmt::format("{:.4g}", v); }

void append_text(std::string& svg, const TextPlacement& p, const Font& font) {
    const int ascent = font.baseline(p.pixel_height);
    const std::string size = number(font.em_size(p.pixel_height));
    if (p.direction == TextDirection::horizontal) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\">", p.x, p.y + ascent, size);
    } else {
        // Rotated about its start, which sits at the bottom of the box.
        svg += fmt::format("<text x=\"{0}\" y=\"{1}\" font-size=\"{2}\" transform=\"rotate(-90 {0} {1})\">",
                           p.x + ascent, p.y + p.height, size);
    }
    svg += fmt::format("{}</text>\n", xml_escape(p.text));
}

}  // namespace

std::string head_svg(const float* weights, const Visibility& visibility, const std::vector<std::string>& query_tokens,
                     const std::vector<std::string>& key_tokens, const HeatmapStyle& style) {
    const HeatmapLayout layout = layout_heatmap(weights, visibility, query_tokens, key_tokens, style);
    const Colormap colormap = Colormap::named(style.colormap);
    const ValueScale scale{style.vmin, style.vmax, style.log_scale};
    const Font& font = Font::default_font();

    // Step 1: header, the hatch pattern for masked cells, the colorbar gradient (top = vmax).
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"DejaVu Sans, Verdana, sans-serif\" fill=\"{2}\">\n",
        layout.width, layout.height, hex(text_color));
    svg += fmt::format(
        "<defs>\n<pattern id=\"mask-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"{}\"/><line x1=\"0\" y1=\"0\" "
        "x2=\"0\" y2=\"6\" stroke=\"{}\" stroke-width=\"1.5\"/></pattern>\n",
        hex(mask_color), hex(mask_hatch_color));
    svg += "<linearGradient id=\"colorbar\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
    for (int i = 0; i <= 16; ++i)
        svg += fmt::format("<stop offset=\"{}\" stop-color=\"{}\"/>\n", number(i / 16.0), hex(colormap.at(i / 16.0)));
    svg += "</linearGradient>\n</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

    // Step 2: the grid: hatch underneath, one rect per visible cell.
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#mask-hatch)\" stroke=\"#6e6e6e\"/>\n<g "
        "shape-rendering=\"crispEdges\">\n",
        layout.grid_x, layout.grid_y, layout.grid_width(), layout.grid_height());
    for (int64_t r = 0; r < layout.cells.rows; ++r)
        for (int64_t c = 0; c < layout.cells.cols; ++c) {
            if (layout.cells.is_masked(r, c)) continue;
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                               layout.grid_x + c * layout.cell_w, layout.grid_y + r * layout.cell_h, layout.cell_w,
                               layout.cell_h, hex(colormap.at(scale.position(layout.cells.value(r, c)))));
        }
    svg += "</g>\n";

    // Step 3: colorbar with tick marks, then all text.
    svg +=
        fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#colorbar)\" stroke=\"#6e6e6e\"/>\n",
                    layout.colorbar_x, layout.colorbar_y, layout.colorbar_w, layout.colorbar_h);
    for (const ColorbarTick& tick : layout.ticks)
        svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n",
                           layout.colorbar_x + layout.colorbar_w, tick.y, layout.colorbar_x + layout.colorbar_w + 4,
                           tick.y, hex(text_color));
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
