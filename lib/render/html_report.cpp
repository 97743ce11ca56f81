// Builds report.html (see html_report.hpp): data as JSON in the page, drawn by the inline script.
#include "html_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "figure_overview.hpp"
#include "file_write.hpp"
#include "html_report_assets.hpp"
#include "json_text.hpp"
#include "png_writer.hpp"
#include "svg_heatmap.hpp"
#include "text_codecs.hpp"
#include "token_display.hpp"
#include "zlib_compress.hpp"

namespace attn_viz {

namespace {

constexpr int64_t max_report_cells = int64_t{1} << 22;  // all maps together, before pooling kicks in
constexpr int zlib_level = 6;                           // libdeflate's default level
constexpr int top_code = 254;                           // codes 0..254 span the color range
constexpr uint8_t masked_code = 255;

// The page's sets of maps in order: the input's own, then more_maps.
std::vector<const HtmlMaps*> map_sets(const HtmlReportInput& input) {
    std::vector<const HtmlMaps*> sets = {&input};
    for (const HtmlMaps& more : input.more_maps) sets.push_back(&more);
    return sets;
}

void check_maps(const HtmlMaps& input) {
    const Visibility& v = input.visibility;
    if (input.layers.empty())
        throw Error(ErrorKind::internal, fmt::format("html report: no layers in set '{}'", input.name));
    for (const Tensor* layer : input.layers)
        if (layer->rank() != 3 || layer->dim(0) != input.layers[0]->dim(0) || layer->dim(1) != v.queries ||
            layer->dim(2) != v.keys)
            throw Error(ErrorKind::internal, fmt::format("html report: attention {} does not match [H, {}, {}]",
                                                         shape_string(layer->shape), v.queries, v.keys));
    if (!input.head_numbers.empty() && input.head_numbers.size() != input.layers.size())
        throw Error(ErrorKind::internal, fmt::format("html report: head lists for {} of {} layers",
                                                     input.head_numbers.size(), input.layers.size()));
    for (const std::vector<int64_t>& heads : input.head_numbers)
        for (int64_t h : heads)
            if (h < 0 || h >= input.layers[0]->dim(0))
                throw Error(ErrorKind::internal, fmt::format("html report: head {} out of range", h));
    if (input.query_tokens.size() != static_cast<size_t>(v.queries) ||
        input.key_tokens.size() != static_cast<size_t>(v.keys))
        fail_input("html report", fmt::format("{} query / {} key tokens for a {}x{} map", input.query_tokens.size(),
                                              input.key_tokens.size(), v.queries, v.keys));
}

void check_input(const HtmlReportInput& input) {
    const std::vector<const HtmlMaps*> sets = map_sets(input);
    for (size_t k = 0; k < sets.size(); ++k) {
        check_maps(*sets[k]);
        if (sets.size() > 1 &&
            (sets[k]->name.empty() ||
             std::count_if(sets.begin(), sets.end(), [&](const HtmlMaps* m) { return m->name == sets[k]->name; }) > 1))
            throw Error(ErrorKind::internal, fmt::format("html report: set {} needs a name of its own", k));
    }
}

// Appends one map's cells to `codes`: round(position * 254) on the map's color scale (linear or
// log, its own range), masked cells 255.
void append_codes(std::vector<uint8_t>& codes, const CellGrid& cells, const ValueScale& scale) {
    for (size_t i = 0; i < cells.values.size(); ++i)
        codes.push_back(cells.masked[i]
                            ? masked_code
                            : static_cast<uint8_t>(nearest_step(scale.position(cells.values[i]), top_code)));
}

// The heads of layer l the page shows: input.head_numbers[l], or every head.
std::vector<int64_t> shown_heads(const HtmlMaps& input, size_t l) {
    if (!input.head_numbers.empty()) return input.head_numbers[l];
    std::vector<int64_t> heads(static_cast<size_t>(input.layers[0]->dim(0)));
    for (size_t h = 0; h < heads.size(); ++h) heads[h] = static_cast<int64_t>(h);
    return heads;
}

nlohmann::json display_tokens(const std::vector<std::string>& tokens) {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& t : tokens) out.push_back(display_token(t));
    return out;
}

// How finely to embed the maps: the side of each pooled map, full resolution within the cell
// budget of all maps together.
int64_t embedded_side(const HtmlReportInput& input) {
    int64_t n_maps = 0, cells = 0, side = 0;
    for (const HtmlMaps* set : map_sets(input)) {
        const Visibility& visibility = set->visibility;
        for (size_t l = 0; l < set->layers.size(); ++l) {
            const auto heads = static_cast<int64_t>(shown_heads(*set, l).size());
            n_maps += heads;
            cells += heads * visibility.queries * visibility.keys;
        }
        side = std::max({side, visibility.queries, visibility.keys});
    }
    if (cells > max_report_cells)
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

// Adds one set's maps to data: its name and tokens, each map pooled to at most side x side
// cells, their cell edges (the same for every map of the set), each map's color range layer by
// layer ("layers"), and every map's codes (see append_codes), layer-major, as one zlib stream in
// base64 ("codes").
void add_maps(nlohmann::json& data, const HtmlMaps& input, const HtmlReportInput& page, int64_t side) {
    const Visibility& visibility = input.visibility;
    data["name"] = input.name;
    data["query_tokens"] = display_tokens(input.query_tokens);
    data["key_tokens"] = display_tokens(input.key_tokens);
    const int64_t per_head = visibility.queries * visibility.keys;
    nlohmann::json layers = nlohmann::json::array();
    std::vector<uint8_t> codes;
    for (size_t l = 0; l < input.layers.size(); ++l) {
        nlohmann::json heads = nlohmann::json::array();
        for (int64_t h : shown_heads(input, l)) {
            const float* weights = input.layers[l]->ptr() + h * per_head;
            const CellGrid cells = build_cell_grid(weights, visibility, std::nullopt, side, side, page.style.pool);
            if (!data.contains("row_edges")) {
                data["row_edges"] = cells.row_edges;
                data["col_edges"] = cells.col_edges;
                data["pooled"] = cells.pooled();
            }
            const ValueRange range = page.scale == ScaleMode::head ? visible_value_range(weights, visibility)
                                                                   : ValueRange{page.style.vmin, page.style.vmax};
            append_codes(codes, cells, ValueScale{range.vmin, range.vmax, page.style.log_scale});
            heads.push_back({{"number", h}, {"vmin", range.vmin}, {"vmax", range.vmax}});
        }
        layers.push_back({{"number", input.layer_numbers.empty() ? static_cast<int64_t>(l) : input.layer_numbers[l]},
                          {"heads", heads}});
    }
    data["layers"] = std::move(layers);
    const std::vector<uint8_t> stream = zlib_compress(codes.data(), codes.size(), zlib_level);
    data["codes"] = base64_encode(stream.data(), stream.size());
}

// What of stats.json the page shows: top-level scalars, arrays of objects (tables), arrays of
// arrays of objects (redundant groups), `findings`; matrices and token lists stay out.
nlohmann::json shown_stats(const nlohmann::json& stats) {
    nlohmann::json shown = nlohmann::json::object();
    for (const auto& [key, value] : stats.items()) {
        const bool table = value.is_array() && std::all_of(value.begin(), value.end(),
                                                           [](const nlohmann::json& v) { return v.is_object(); });
        const bool groups = value.is_array() && std::all_of(value.begin(), value.end(), [](const nlohmann::json& v) {
                                return v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& m) {
                                           return m.is_object();
                                       });
                            });
        if (value.is_primitive() || key == "findings" || (table && !value.empty()) || (groups && !value.empty()))
            shown[key] = value;
    }
    return shown;
}

// The data the script draws, as JSON text safe inside a <script> element ("</" escaped): the
// first set's maps at the top level, the others' in "more_maps".
std::string report_data(const HtmlReportInput& input, const Colormap& colormap) {
    nlohmann::json data = {{"title", input.title},
                           {"log_scale", input.style.log_scale},
                           {"scale", input.scale == ScaleMode::head ? "head" : "global"},
                           {"value_name", input.value_name},
                           {"pool", input.style.pool == PoolMode::mean ? "mean" : "max"},
                           {"mask_color", {mask_color.r, mask_color.g, mask_color.b}},
                           {"masked_code", masked_code},
                           {"top_code", top_code},
                           {"stats", shown_stats(input.stats)},
                           {"column_order", input.column_order},
                           {"table_notes", input.table_notes}};
    data["colormap"] = colormap_lut(colormap);
    const int64_t side = embedded_side(input);
    add_maps(data, input, input, side);
    data["more_maps"] = nlohmann::json::array();
    for (const HtmlMaps& more : input.more_maps) {
        nlohmann::json set = nlohmann::json::object();
        add_maps(set, more, input, side);
        data["more_maps"].push_back(std::move(set));
    }
    std::string json = dump_json(data);
    for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3))
        json.replace(at, 2, "<\\/");
    return json;
}

// One set's overview sheet (without its title: the page has one) as a PNG, base64.
std::string overview_png_base64(const HtmlMaps& set, const HtmlReportInput& input) {
    HeatmapStyle overview_style = input.style;
    overview_style.title.clear();
    const std::vector<uint8_t> overview_png =
        encode_png(render_overview(set.layers, set.layer_numbers, set.visibility, overview_style, input.scale));
    return base64_encode(overview_png.data(), overview_png.size());
}

// The colormap as a CSS gradient (17 stops).
std::string legend_gradient(const Colormap& colormap) {
    std::string stops;
    for (int k = 0; k <= 16; ++k) {
        const Rgb c = colormap.entry(std::min(255, k * 16));
        stops += fmt::format("{}rgb({},{},{})", k ? "," : "", c.r, c.g, c.b);
    }
    return fmt::format("linear-gradient(to right,{})", stops);
}

// The colour legend: the colormap as a bar with numbers under it (one range for all maps), or
// "smallest" and "largest" ends when each map has its own range (each head's caption gives it).
std::string colour_legend(const HtmlReportInput& input, const Colormap& colormap) {
    std::string ticks;
    auto tick = [&](double position, const std::string& text) {
        ticks += fmt::format("<span class=\"legend-tick\" style=\"left:{:.2f}%\">{}</span>", 100.0 * position,
                             xml_escape(text));
    };
    std::string note;
    if (input.scale == ScaleMode::global) {
        const ValueScale scale{input.style.vmin, input.style.vmax, input.style.log_scale};
        for (double v : axis_ticks(scale)) tick(scale.position(static_cast<float>(v)), format_tick(v));
        note = "one range for all maps";
    } else {
        tick(0.0, "smallest");
        tick(1.0, "largest");
        note = "each map its own range, given in its caption";
    }
    return fmt::format(
        "<span class=\"legend-box\"><span id=\"legend\" class=\"legend\" style=\"background:{}\"></span>"
        "<span class=\"legend-ticks\">{}</span></span> {} ({}, {}{}; gray: masked)",
        legend_gradient(colormap), ticks, xml_escape(input.value_name), xml_escape(colormap.name()), note,
        input.style.log_scale ? ", log scale" : "");
}

// The input as the page names it: the text, or the first tokens when there is none.
std::string input_description(const HtmlReportInput& input) {
    constexpr size_t longest_text = 600, first_tokens = 24;
    if (input.input_text.size() > longest_text) {
        size_t cut = longest_text;
        while (cut > 0 && (static_cast<unsigned char>(input.input_text[cut]) & 0xC0) == 0x80)
            --cut;  // not inside a character
        return fmt::format("{}\u2026", input.input_text.substr(0, cut));
    }
    if (!input.input_text.empty()) return input.input_text;
    std::string text;
    for (size_t i = 0; i < std::min(first_tokens, input.query_tokens.size()); ++i)
        text += fmt::format("{}{}", i ? " " : "", display_token(input.query_tokens[i]));
    return fmt::format("{}{}", text, input.query_tokens.size() > first_tokens ? " \u2026" : "");
}

// "attn-viz 0.1.0", the command line and every input file with its SHA-256, from stats.json's
// "provenance" (rows of the provenance table; none without it).
std::string provenance_rows(const nlohmann::json& stats) {
    const auto found = stats.find("provenance");
    if (found == stats.end() || !found->is_object()) return "";
    const nlohmann::json& p = *found;
    auto text = [](const nlohmann::json& v) {
        return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump();
    };
    std::string rows;
    if (p.contains("version"))
        rows += fmt::format(
            "<tr><th>Version</th><td>{}</td></tr>\n",
            xml_escape(fmt::format("{} {}", text(p.value("tool", nlohmann::json("attn-viz"))), text(p["version"]))));
    if (p.contains("command_line") && p["command_line"].is_array()) {
        std::string command;
        for (const nlohmann::json& arg :
             p["command_line"]) {  // an argument with a space or quote in single quotes, as a shell takes it
            std::string shown = text(arg);
            if (shown.find_first_of(" '\"") != std::string::npos) {
                for (size_t at = shown.find('\''); at != std::string::npos; at = shown.find('\'', at + 4))
                    shown.replace(at, 1, "'\\''");
                shown = fmt::format("'{}'", shown);
            }
            command.append(command.empty() ? "" : " ").append(shown);
        }
        rows += fmt::format("<tr><th>Command</th><td><code>{}</code></td></tr>\n", xml_escape(command));
    }
    if (p.contains("seed")) rows += fmt::format("<tr><th>Seed</th><td>{}</td></tr>\n", xml_escape(text(p["seed"])));
    if (p.contains("inputs") && p["inputs"].is_array() && !p["inputs"].empty()) {
        std::string files;
        for (const nlohmann::json& f : p["inputs"]) {
            if (!f.is_object()) continue;
            files += fmt::format("<li>{} ({}, {} bytes), SHA-256 <code>{}</code></li>",
                                 xml_escape(text(f.value("path", nlohmann::json()))),
                                 xml_escape(text(f.value("role", nlohmann::json()))),
                                 xml_escape(text(f.value("bytes", nlohmann::json()))),
                                 xml_escape(text(f.value("sha256", nlohmann::json()))));
        }
        rows += fmt::format("<tr><th>Inputs</th><td><ul class=\"inputs\">{}</ul></td></tr>\n", files);
    }
    return rows;
}

// The "About" table under the title: model, input and T, the map kind, the colour legend, the
// shown layers and heads.
std::string about_table(const HtmlReportInput& input, const Colormap& colormap) {
    std::string maps, tokens;
    for (const HtmlMaps* set : map_sets(input)) {
        const Visibility& visibility = set->visibility;
        int64_t shown = 0;
        for (size_t l = 0; l < set->layers.size(); ++l) shown += static_cast<int64_t>(shown_heads(*set, l).size());
        const std::string named = set->name.empty() ? "" : fmt::format("{}: ", xml_escape(set->name));
        const std::string separator = maps.empty() ? "" : "; ";
        maps += fmt::format("{}{}{} maps: {} layer(s) of {} heads{}", separator, named, shown, set->layers.size(),
                            set->layers[0]->dim(0), set->head_numbers.empty() ? "" : " (a selection of the heads)");
        tokens += fmt::format("{}{}T = {} queries &times; {} keys{}", separator, named, visibility.queries,
                              visibility.keys, visibility.causal ? ", causal" : "");
    }
    std::string rows;
    auto row = [&](const std::string& name, const std::string& id, const std::string& html) {
        rows += fmt::format("<tr><th>{}</th><td id=\"{}\">{}</td></tr>\n", name, id, html);
    };
    if (!input.model.empty()) row("Model", "about-model", xml_escape(input.model));
    row("Input", "about-input", xml_escape(input_description(input)));
    row("Tokens", "about-tokens", tokens);
    row("Map", "about-map", xml_escape(input.map_kind));
    row("Shown", "about-shown", maps);
    row("Colours", "about-colours", colour_legend(input, colormap));
    return fmt::format(
        "<table class=\"about\" id=\"about\">\n{}</table>\n"
        "<p class=\"note\">Hover a cell for its tokens and {}; click it to see that query in the attention view.</p>\n",
        rows, xml_escape(input.value_name));
}

// The provenance (version, command line, inputs with their SHA-256), folded: what a reader rarely
// needs stays below the attention view, closed until asked for. "" without one.
std::string provenance_section(const nlohmann::json& stats) {
    const std::string rows = provenance_rows(stats);
    if (rows.empty()) return "";
    return fmt::format(
        "<details id=\"provenance\"><summary>Provenance</summary>\n<table class=\"about\">\n{}</table>\n"
        "</details>\n",
        rows);
}

}  // namespace

std::string html_report(const HtmlReportInput& input) {
    check_input(input);
    const Colormap colormap = Colormap::named(input.style.colormap);

    // Step 1: the data the script draws, every map embedded as finely as the cell budget allows.
    const std::string json = report_data(input, colormap);

    // Step 2: the page; each set with its attention view, overview picture (inline) and heads.
    const std::string title = xml_escape(input.title);
    std::string html = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>{0}</title>\n<style>\n{1}</style>\n"
        "</head>\n<body>\n<h1>{0}</h1>\n",
        title, report_css);
    html += about_table(input, colormap);
    html += "<section id=\"errors-section\" hidden><h2>Script errors</h2><ul id=\"report-errors\"></ul></section>\n";
    html += "<section id=\"findings-section\" hidden><h2>Findings</h2><ul id=\"findings\"></ul></section>\n";
    html += input.analysis_sections;
    const std::vector<const HtmlMaps*> sets = map_sets(input);
    for (const HtmlMaps* set : sets) {
        const std::string id = set->name.empty() ? "" : fmt::format("-{}", xml_escape(set->name));
        const std::string of = set->heading.empty() ? "" : fmt::format(": {}", xml_escape(set->heading));
        html += fmt::format("<h2>Attention view{}</h2>\n<div id=\"view{}\"></div>\n", of, id);
        if (set == sets.front()) html += provenance_section(input.stats);
        html += fmt::format(
            "<h2>Overview{}</h2>\n<img class=\"overview\" id=\"overview{}\" alt=\"all heads\" "
            "src=\"data:image/png;base64,{}\">\n",
            of, id, overview_png_base64(*set, input));
        html += fmt::format("<h2>Heads{}</h2>\n<div id=\"maps{}\"></div>\n", of, id);
    }
    html += "<h2>Statistics</h2>\n<div id=\"tables\"></div>\n<div id=\"tooltip\"></div>\n";
    // The data and the scripts are appended piece by piece: the data holds every map (megabytes for
    // a whole model), which a format call would copy once more.
    html += "<script type=\"application/json\" id=\"report-data\">";
    html += json;
    html += "</script>\n<script>\n(function () {\n'use strict';\n";
    html += attention_view_script;
    html += '\n';
    html += report_script;
    html += "})();\n</script>\n</body>\n</html>\n";
    return html;
}

void write_html_report(const std::string& path, const HtmlReportInput& input) {
    write_file_bytes(path, html_report(input));
}

}  // namespace attn_viz
