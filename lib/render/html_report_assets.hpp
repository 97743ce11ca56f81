// The report page's inline stylesheet and scripts: the files lib/render/assets/report.css,
// report.js and attention_view.js, compiled in byte for byte at build time (embed_asset.cmake
// writes each as a string literal into the build tree). Plain ES5-style script in strict mode, no
// libraries, nothing fetched.
#pragma once

namespace attn_viz {

// report.css, the page's <style>.
extern const char* const report_css;
// report.js: reads the JSON in <script id="report-data">, inflates the maps, builds each set's
// attention view in #view and draws every map with its token labels on a <canvas> in #maps
// (#view-NAME and #maps-NAME for a set named NAME; tooltip on hover, a click shows that query in
// the set's view), builds the sortable tables in #tables and the findings list; errors are listed
// in #report-errors; sets <body data-ready="1"> when done. Runs inside one function scope together
// with attention_view_script.
extern const char* const report_script;
// attention_view.js: attention_view(model, container), the BertViz-style view.
extern const char* const attention_view_script;

}  // namespace attn_viz
