// Builds report.html (see html_report.hpp): data as JSON in the page, drawn by the inline script.
#include "html_report.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "figure_overview.hpp"
#include "html_report_assets.hpp"
#include "json_text.hpp"
#include "file_write.hpp"
#include "png_writer.hpp"
#include "svg_heatmap.hpp"
#include "text_codecs.hpp"
#include "token_display.hpp"

namespace attn_viz {

namespace {

constexpr int64_t max_report_cells = int64_t{1} << 22;  // all maps together, before pooling kicks in
constexpr uint16_t masked_code = 65535;

void check_input(const HtmlReportInput& input) {
    const Visibility& v = input.visibility;
    if (input.layers.empty()) throw Error(ErrorKind::internal, "html report: no layers");
    for (const Tensor* layer : input.layers)
        if (layer->rank() != 3 || layer->dim(0) != input.layers[0]->dim(0) || layer->dim(1) != v.queries || layer->dim(2) != v.keys)
            throw Error(ErrorKind::internal, "html report: attention " + shape_string(layer->shape) + " does not match [H, " +
                                                 std::to_string(v.queries) + ", " + std::to_string(v.keys) + "]");
    if (input.query_tokens.size() != static_cast<size_t>(v.queries) || input.key_tokens.size() != static_cast<size_t>(v.keys))
        fail_input("html report", std::to_string(input.query_tokens.size()) + " query / " + std::to_string(input.key_tokens.size()) +
                                      " key tokens for a " + std::to_string(v.queries) + "x" + std::to_string(v.keys) + " map");
}

// One map: cells quantised to uint16 of value / max (masked = 65535), base64 little-endian.
nlohmann::json encode_head(const CellGrid& cells, ValueRange range) {
    float largest = 0.0f;
    for (size_t i = 0; i < cells.values.size(); ++i)
        if (!cells.masked[i]) largest = std::max(largest, cells.values[i]);
    if (!(largest > 0.0f)) largest = 1.0f;
    std::vector<uint8_t> bytes(cells.values.size() * 2);
    for (size_t i = 0; i < cells.values.size(); ++i) {
        const uint16_t code = cells.masked[i] ? masked_code
                                              : static_cast<uint16_t>(std::lround(std::clamp(cells.values[i] / largest, 0.0f, 1.0f) * 65534.0f));
        bytes[2 * i] = static_cast<uint8_t>(code & 0xff);
        bytes[2 * i + 1] = static_cast<uint8_t>(code >> 8);
    }
    return {{"vmin", range.vmin}, {"vmax", range.vmax}, {"max", largest}, {"data", base64_encode(bytes.data(), bytes.size())}};
}

nlohmann::json display_tokens(const std::vector<std::string>& tokens) {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& t : tokens) out.push_back(display_token(t));
    return out;
}

// How finely to embed the maps: the side of each pooled map, full resolution within the cell
// budget of all maps together.
int64_t embedded_side(const HtmlReportInput& input) {
    const Visibility& visibility = input.visibility;
    const int64_t n_maps = input.layers[0]->dim(0) * static_cast<int64_t>(input.layers.size());
    int64_t side = std::max(visibility.queries, visibility.keys);
    if (n_maps * visibility.queries * visibility.keys > max_report_cells)
        side = std::max<int64_t>(16, static_cast<int64_t>(std::sqrt(static_cast<double>(max_report_cells) / n_maps)));
    return side;
}

// The colormap's 256 entries as flat r, g, b numbers.
nlohmann::json colormap_lut(const Colormap& colormap) {
    nlohmann::json lut = nlohmann::json::array();
    for (int i = 0; i < 256; ++i) {
        const Rgb c = colormap.entry(i);
        lut.push_back(c.r);
        lut.push_back(c.g);
        lut.push_back(c.b);
    }
    return lut;
}

// Adds the maps to data: each pooled to at most side x side cells and encoded with its color
// range, layer by layer ("layers"), and their cell edges, the same for every map.
void add_maps(nlohmann::json& data, const HtmlReportInput& input, int64_t side) {
    const Visibility& visibility = input.visibility;
    const int64_t n_heads = input.layers[0]->dim(0), per_head = visibility.queries * visibility.keys;
    nlohmann::json layers = nlohmann::json::array();
    for (size_t l = 0; l < input.layers.size(); ++l) {
        nlohmann::json heads = nlohmann::json::array();
        for (int64_t h = 0; h < n_heads; ++h) {
            const float* weights = input.layers[l]->ptr() + h * per_head;
            const CellGrid cells = build_cell_grid(weights, visibility, std::nullopt, side, side, input.style.pool);
            if (l == 0 && h == 0) {
                data["row_edges"] = cells.row_edges;
                data["col_edges"] = cells.col_edges;
                data["pooled"] = cells.pooled();
            }
            const ValueRange range = input.scale == ScaleMode::head ? visible_value_range(weights, visibility)
                                                                     : ValueRange{input.style.vmin, input.style.vmax};
            heads.push_back(encode_head(cells, range));
        }
        layers.push_back({{"number", input.layer_numbers.empty() ? static_cast<int64_t>(l) : input.layer_numbers[l]},
                          {"heads", heads}});
    }
    data["layers"] = std::move(layers);
}

// The data the script draws, as JSON text safe inside a <script> element ("</" escaped).
std::string report_data(const HtmlReportInput& input, const Colormap& colormap) {
    nlohmann::json data = {{"title", input.title},
                           {"query_tokens", display_tokens(input.query_tokens)},
                           {"key_tokens", display_tokens(input.key_tokens)},
                           {"log_scale", input.style.log_scale},
                           {"pool", input.style.pool == PoolMode::mean ? "mean" : "max"},
                           {"mask_color", {mask_color.r, mask_color.g, mask_color.b}},
                           {"stats", input.stats}};
    data["colormap"] = colormap_lut(colormap);
    add_maps(data, input, embedded_side(input));
    std::string json = dump_json(data);
    for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3)) json.replace(at, 2, "<\\/");
    return json;
}

// The overview sheet (without its title: the page has one) as a PNG, base64.
std::string overview_png_base64(const HtmlReportInput& input) {
    HeatmapStyle overview_style = input.style;
    overview_style.title.clear();
    const std::vector<uint8_t> overview_png =
        encode_png(render_overview(input.layers, input.layer_numbers, input.visibility, overview_style, input.scale));
    return base64_encode(overview_png.data(), overview_png.size());
}

// The paragraph under the title: what the maps are and how they are colored.
std::string summary_paragraph(const HtmlReportInput& input, const Colormap& colormap) {
    const Visibility& visibility = input.visibility;
    const int64_t n_heads = input.layers[0]->dim(0);
    return "<p>" + std::to_string(input.layers.size()) + " layer(s) &times; " + std::to_string(n_heads) + " heads, " +
           std::to_string(visibility.queries) + " queries &times; " + std::to_string(visibility.keys) + " keys" +
           (visibility.causal ? ", causal" : "") + ". Colormap " + xml_escape(colormap.name()) + ": low" +
           "<span id=\"legend\" class=\"legend\"></span>high (" + (input.scale == ScaleMode::head ? "each head its own range" : "one range for all heads") +
           (input.style.log_scale ? ", log scale" : "") + "). Gray cells are masked. Hover a cell for its tokens and weight.</p>\n";
}

}  // namespace

std::string html_report(const HtmlReportInput& input) {
    check_input(input);
    const Colormap colormap = Colormap::named(input.style.colormap);

    // Step 1: the data the script draws, every map embedded as finely as the cell budget allows.
    const std::string json = report_data(input, colormap);

    // Step 2: the overview picture, inline.
    const std::string overview = overview_png_base64(input);

    // Step 3: the page.
    const std::string title = xml_escape(input.title);
    std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
                       "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>" + title + "</title>\n<style>" +
                       report_css + "</style>\n</head>\n<body>\n<h1>" + title + "</h1>\n";
    html += summary_paragraph(input, colormap);
    html += "<section id=\"errors-section\" hidden><h2>Script errors</h2><ul id=\"report-errors\"></ul></section>\n";
    html += "<h2>Overview</h2>\n<img class=\"overview\" alt=\"all heads\" src=\"data:image/png;base64," + overview + "\">\n";
    html += "<h2>Heads</h2>\n<div id=\"maps\"></div>\n<h2>Statistics</h2>\n<div id=\"tables\"></div>\n<div id=\"tooltip\"></div>\n";
    html += "<script type=\"application/json\" id=\"report-data\">" + json + "</script>\n<script>" + report_script +
            "</script>\n</body>\n</html>\n";
    return html;
}

void write_html_report(const std::string& path, const HtmlReportInput& input) {
    write_file_bytes(path, html_report(input));
}

}  // namespace attn_viz
