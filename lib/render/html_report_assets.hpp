// The report page's inline stylesheet and script (html_report_assets.cpp).
#pragma once

namespace attn_viz {

extern const char* const report_css;
// Reads the JSON in <script id="report-data">, draws every map on its <canvas>, shows a tooltip
// on hover, builds the sortable tables; errors are listed in #report-errors; sets
// <body data-ready="1"> when done.
extern const char* const report_script;

}  // namespace attn_viz
