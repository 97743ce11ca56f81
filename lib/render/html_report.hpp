// report.html: one self-contained page (no network: inline CSS/JS, data: images, a
// Content-Security-Policy that forbids fetching anything) with a BertViz-style attention view,
// the overview, every head as a labelled <canvas> heatmap with hover details, and the statistics
// as sortable tables. The maps travel as 8-bit codes in one zlib stream (docs/rendering.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heatmap_layout.hpp"
#include "tensor.hpp"

namespace attn_viz {

// One set of maps the page shows, each with its own attention view, overview and heads: a
// model's self-attention, or one of an encoder-decoder's encoder, decoder and cross attention.
struct HtmlMaps {
    std::string name;  // "" for a page's only set; else a word naming it ("encoder"), unique within the page
    std::string
        heading;  // the set's section titles (e.g. "Cross attention: target tokens down, source tokens across"), or ""
    std::vector<std::string> query_tokens;           // T entries (raw tokenizer strings; shown via display_token)
    std::vector<std::string> key_tokens;             // S entries
    std::vector<const Tensor*> layers;               // one [H, T, S] attention tensor per layer
    std::vector<int64_t> layer_numbers;              // names of the layers ("L<n>"); empty = 0, 1, ...
    std::vector<std::vector<int64_t>> head_numbers;  // per layer: the heads to show, ascending; empty = every head
    Visibility visibility;
};

// The page: its first (usually only) set of maps, then more_maps in order.
struct HtmlReportInput : HtmlMaps {
    std::vector<HtmlMaps> more_maps;  // an encoder-decoder's decoder and cross attention after its encoder
    std::string title = "attn-viz report";
    // What the page shows, in its "About" table at the top ("" = left out): the model
    // ("path (llama, 5 layers x 8 heads)"), the input text (or its first tokens), the kind of map.
    std::string model;
    std::string input_text;
    std::string map_kind = "attention weights";
    std::string value_name = "weight";  // what a cell holds, in the legend and tooltips ("norm" for norm-based maps)
    // stats.json: every top-level array of objects (e.g. "heads") becomes a sortable table whose
    // columns are the objects' scalar fields; other top-level scalars are a table above them;
    // "provenance" (version, command line, input files and their SHA-256) goes into a folded
    // "Provenance" section below the (first) attention view.
    // Matrices and other nested values are left out of the page.
    nlohmann::json stats = nlohmann::json::object();
    // Per table (a stats key such as "heads"): the columns to show first, in this order; the
    // table's other scalar fields follow.
    std::map<std::string, std::vector<std::string>> column_order;
    std::map<std::string, std::string> table_notes;  // per table: a sentence shown under its title
    std::string analysis_sections;  // HTML <section>s shown after the findings (model --ablate, --rollout, --flow)
    HeatmapStyle style;             // colormap, log_scale, pool, max_px (overview), vmin/vmax for global scale
    ScaleMode scale = ScaleMode::head;
};

// Maps are embedded at full resolution while all of them together (every set) hold at most 4M
// cells (e.g. 12 heads at T = 512); beyond that each is pooled (style.pool) to a common smaller side.
// A cell's code is round(254 * its color position) on its map's scale (linear or log between the
// map's vmin and vmax), 255 when masked.
std::string html_report(const HtmlReportInput& input);

// Writes html_report() to path; throws Error(io, "<path>: ...") when it cannot.
void write_html_report(const std::string& path, const HtmlReportInput& input);

}  // namespace attn_viz
