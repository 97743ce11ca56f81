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
#include "zlib_compress.hpp"

namespace attn_viz {

namespace {

constexpr int64_t max_report_cells = int64_t{1} << 22;  // all maps together, before pooling kicks in
constexpr int zlib_level = 6;        // libdeflate's default level
constexpr int top_code = 254;         // codes 0..254 span the color range
constexpr uint8_t masked_code = 255;

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

// Appends one map's cells to `codes`: round(position * 254) on the map's color scale (linear or
// log, its own range), masked cells 255.
void append_codes(std::vector<uint8_t>& codes, const CellGrid& cells, const ValueScale& scale) {
    for (size_t i = 0; i < cells.values.size(); ++i)
        codes.push_back(cells.masked[i] ? masked_code : static_cast<uint8_t>(nearest_step(scale.position(cells.values[i]), top_code)));
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

// Adds the maps to data: each pooled to at most side x side cells, their cell edges (the same for
// every map), each map's color range layer by layer ("layers"), and every map's codes (see
// append_codes), layer-major, as one zlib stream in base64 ("codes").
void add_maps(nlohmann::json& data, const HtmlReportInput& input, int64_t side) {
    const Visibility& visibility = input.visibility;
    const int64_t n_heads = input.layers[0]->dim(0), per_head = visibility.queries * visibility.keys;
    nlohmann::json layers = nlohmann::json::array();
    std::vector<uint8_t> codes;
    for (size_t l = 0; l < input.layers.size(); ++l) {
        nlohmann::json heads = nlohmann::json::array();
        for (int64_t h = 0; h < n_heads; ++h) {
            const float* weights = input.layers[l]->ptr() + h * per_head;
            const CellGrid cells = build_cell_grid(weights, visibility, std::nullopt, side, side, input.style.pool);
            if (l == 0 && h == 0) {
                data["row_edges"] = cells.row_edges;
                data["col_edges"] = cells.col_edges;
                data["pooled"] = cells.pooled();
                codes.reserve(cells.values.size() * static_cast<size_t>(n_heads) * input.layers.size());
            }
            const ValueRange range = input.scale == ScaleMode::head ? visible_value_range(weights, visibility)
                                                                     : ValueRange{input.style.vmin, input.style.vmax};
            append_codes(codes, cells, ValueScale{range.vmin, range.vmax, input.style.log_scale});
            heads.push_back({{"vmin", range.vmin}, {"vmax", range.vmax}});
        }
        layers.push_back({{"number", input.layer_numbers.empty() ? static_cast<int64_t>(l) : input.layer_numbers[l]},
                          {"heads", heads}});
    }
    data["layers"] = std::move(layers);
    data["top_code"] = top_code;
    const std::vector<uint8_t> stream = zlib_compress(codes.data(), codes.size(), zlib_level);
    data["codes"] = base64_encode(stream.data(), stream.size());
}

// What of stats.json the page shows: top-level scalars, arrays of objects (tables), arrays of
// arrays of objects (redundant groups), `findings`; matrices and token lists stay out.
nlohmann::json shown_stats(const nlohmann::json& stats) {
    nlohmann::json shown = nlohmann::json::object();
    for (const auto& [key, value] : stats.items()) {
        const bool table = value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) { return v.is_object(); });
        const bool groups = value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) {
                                return v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& m) { return m.is_object(); });
                            });
        if (value.is_primitive() || key == "findings" || (table && !value.empty()) || (groups && !value.empty())) shown[key] = value;
    }
    return shown;
}

// The data the script draws, as JSON text safe inside a <script> element ("</" escaped).
std::string report_data(const HtmlReportInput& input, const Colormap& colormap) {
    nlohmann::json data = {{"title", input.title},
                           {"query_tokens", display_tokens(input.query_tokens)},
                           {"key_tokens", display_tokens(input.key_tokens)},
                           {"log_scale", input.style.log_scale},
                           {"pool", input.style.pool == PoolMode::mean ? "mean" : "max"},
                           {"mask_color", {mask_color.r, mask_color.g, mask_color.b}},
                           {"masked_code", masked_code},
                           {"stats", shown_stats(input.stats)},
                           {"column_order", input.column_order},
                           {"table_notes", input.table_notes}};
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
           (input.style.log_scale ? ", log scale" : "") + "). Gray cells are masked. Hover a cell for its tokens and weight; click it to "
           "see that query in the attention view.</p>\n";
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
    html += "<section id=\"findings-section\" hidden><h2>Findings</h2><ul id=\"findings\"></ul></section>\n";
    html += input.analysis_sections;
    html += "<h2>Attention view</h2>\n<div id=\"view\"></div>\n";
    html += "<h2>Overview</h2>\n<img class=\"overview\" alt=\"all heads\" src=\"data:image/png;base64," + overview + "\">\n";
    html += "<h2>Heads</h2>\n<div id=\"maps\"></div>\n<h2>Statistics</h2>\n<div id=\"tables\"></div>\n<div id=\"tooltip\"></div>\n";
    html += "<script type=\"application/json\" id=\"report-data\">" + json + "</script>\n<script>\n(function () {\n'use strict';" +
            attention_view_script + report_script + "})();\n</script>\n</body>\n</html>\n";
    return html;
}

void write_html_report(const std::string& path, const HtmlReportInput& input) {
    write_file_bytes(path, html_report(input));
}

}  // namespace attn_viz
