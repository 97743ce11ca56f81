// Render suite, part 3: report.html. The embedded maps are decoded here (base64, zlib through
// stb_image's own inflater, codes by their documented meaning) and compared with the weights; the
// page is opened and driven in headless Chromium when it is installed.
#include <cstdlib>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "html_page_driver.hpp"
#include "html_report.hpp"
#include "render_test_support.hpp"
#include "text_codecs.hpp"
#include "token_display.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

// Standard base64 with padding, decoded independently of the library's encoder.
std::vector<uint8_t> base64_decode(const std::string& text) {
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::vector<uint8_t> out;
    uint32_t bits = 0;
    int count = 0;
    for (char c : text) {
        if (c == '=') break;
        const size_t value = alphabet.find(c);
        REQUIRE(value != std::string::npos);
        bits = (bits << 6) | static_cast<uint32_t>(value);
        if ((count += 6) >= 8) out.push_back(static_cast<uint8_t>(bits >> (count -= 8)));
    }
    return out;
}

// Every map's codes, layer-major: the base64 zlib stream "codes" inflated.
std::vector<uint8_t> map_codes(const nlohmann::json& data) {
    const std::vector<uint8_t> stream = base64_decode(data.at("codes").get<std::string>());
    int size = 0;
    char* bytes =
        stbi_zlib_decode_malloc(reinterpret_cast<const char*>(stream.data()), static_cast<int>(stream.size()), &size);
    REQUIRE(bytes != nullptr);
    std::vector<uint8_t> codes(bytes, bytes + size);
    std::free(bytes);
    return codes;
}

// Where a weight sits on a map's color scale, as documented: linear, or log10 from
// max(vmin, vmax * 1e-4) to vmax.
double scale_position(double weight, double vmin, double vmax, bool log_scale) {
    if (log_scale) {
        vmin = std::log10(std::max(vmin, vmax * 1e-4));
        vmax = std::log10(vmax);
        weight = std::log10(std::max(weight, std::pow(10.0, vmin)));
    }
    return vmax > vmin ? std::clamp((weight - vmin) / (vmax - vmin), 0.0, 1.0) : (weight >= vmax ? 1.0 : 0.0);
}

// Smallest and largest visible weight of one map. w: [T, S]
std::pair<double, double> visible_extremes(const float* w, const Visibility& v) {
    double low = 1, high = 0;
    for (int64_t i = 0; i < v.queries; ++i)
        for (int64_t j = 0; j < v.keys; ++j)
            if (v.visible(i, j))
                low = std::min<double>(low, w[i * v.keys + j]), high = std::max<double>(high, w[i * v.keys + j]);
    return high >= low ? std::pair{low, high} : std::pair{0.0, 1.0};
}

std::vector<std::string> numbered_tokens(const char* stem, int64_t n) {
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < n; ++i)
        tokens.push_back(std::string(stem).append(std::to_string(i)));  // not stem + ...: GCC 12 -Wrestrict
    return tokens;
}

// The report input of `layers` ([H, T, T] each), `tokens` on both axes.
HtmlReportInput self_attention_report(const std::vector<Tensor>& layers, const Visibility& v,
                                      const std::vector<std::string>& tokens) {
    HtmlReportInput input;
    input.layers = pointers(layers);
    input.visibility = v;
    input.query_tokens = input.key_tokens = tokens;
    return input;
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE(
    "HTML report: each map travels as 8-bit codes of its weights' color positions, within half a step, masked cells "
    "marked") {
    struct Case {
        const char* name;
        int64_t layers, heads, queries, keys;
        bool causal, log_scale, global;
        int64_t padding_key;  // -1 = none
    };
    const Case cases[] = {{"one token", 1, 1, 1, 1, true, false, false, -1},
                          {"causal, odd T", 2, 3, 7, 7, true, false, false, -1},
                          {"cross-attention", 1, 2, 5, 9, false, false, false, -1},
                          {"padding key", 1, 2, 6, 6, false, false, false, 2},
                          {"log scale", 2, 2, 13, 13, true, true, false, -1},
                          {"one range for all heads", 1, 4, 11, 11, true, false, true, -1}};
    for (const Case& c : cases) {
        CAPTURE(c.name);
        Visibility v;
        v.queries = c.queries, v.keys = c.keys, v.causal = c.causal;
        if (c.padding_key >= 0)
            v.key_excluded.assign(static_cast<size_t>(c.keys), 0),
                v.key_excluded[static_cast<size_t>(c.padding_key)] = 1;
        const std::vector<Tensor> layers = random_layers(c.layers, c.heads, v);
        HtmlReportInput input;
        input.layers = pointers(layers);
        input.visibility = v;
        input.query_tokens = numbered_tokens("q", c.queries);
        input.key_tokens = numbered_tokens("k", c.keys);
        input.style.log_scale = c.log_scale;
        if (c.global) input.scale = ScaleMode::global, input.style.vmin = 0.0f, input.style.vmax = 1.0f;
        const nlohmann::json data = report_data(html_report(input));
        const std::vector<uint8_t> codes = map_codes(data);
        REQUIRE(codes.size() == static_cast<size_t>(c.layers * c.heads * c.queries * c.keys));
        CHECK(data["row_edges"].size() == static_cast<size_t>(c.queries + 1));
        CHECK(data["col_edges"].size() == static_cast<size_t>(c.keys + 1));
        const int top = data["top_code"], masked = data["masked_code"];
        size_t at = 0;
        for (int64_t l = 0; l < c.layers; ++l)
            for (int64_t h = 0; h < c.heads; ++h) {
                const float* w = layers[static_cast<size_t>(l)].ptr() + h * c.queries * c.keys;
                const nlohmann::json& range = data["layers"][static_cast<size_t>(l)]["heads"][static_cast<size_t>(h)];
                const auto [low, high] = c.global ? std::pair{0.0, 1.0} : visible_extremes(w, v);
                CHECK(range["vmin"].get<double>() == doctest::Approx(low).epsilon(1e-6));
                CHECK(range["vmax"].get<double>() == doctest::Approx(high).epsilon(1e-6));
                for (int64_t i = 0; i < c.queries; ++i)
                    for (int64_t j = 0; j < c.keys; ++j, ++at) {
                        if (!v.visible(i, j)) {
                            CHECK(codes[at] == masked);
                            continue;
                        }
                        REQUIRE(codes[at] <= top);
                        const double position = scale_position(w[i * c.keys + j], low, high, c.log_scale);
                        CHECK(std::abs(codes[at] - position * top) <= 0.5 + 1e-4);
                    }
            }
    }
}

TEST_CASE("HTML report: self-contained, opens in headless Chromium with labelled maps, tables and no script errors") {
    ScratchDir dir;
    const int64_t t = 12, n_heads = 3, n_layers = 2;
    const Visibility v = square_visibility(t, true);
    const std::vector<Tensor> layers = random_layers(n_layers, n_heads, v);
    std::vector<std::string> tokens;
    for (int64_t i = 0; i < t; ++i) tokens.push_back(i % 3 ? "Ġword" : "</script><b>");
    HtmlReportInput input = self_attention_report(layers, v, tokens);
    input.title = "report </script> test";
    nlohmann::json heads = nlohmann::json::array();
    for (int l = 0; l < n_layers; ++l)
        for (int h = 0; h < n_heads; ++h)
            heads.push_back({{"layer", l},
                             {"head", h},
                             {"entropy", std::uniform_real_distribution<double>(0, 2)(rng())},
                             {"label", h == 0 ? "previous-token" : "mixed"},
                             {"top_keys", {1, 2}}});
    const nlohmann::json pair = {{"a", {{"index", 1}, {"layer", 0}, {"head", 1}}},
                                 {"b", {{"index", 4}, {"layer", 1}, {"head", 1}}},
                                 {"js_distance", 0.125},
                                 {"redundant", true}};
    input.stats = {{"model", "test"},
                   {"heads", heads},
                   {"pairs", {pair}},
                   {"correlation", {{1.0, 0.25}, {0.25, 1.0}}},
                   {"findings",
                    {{{"kind", "previous-token"}, {"found", true}, {"sentence", "L0H0 is a previous-token head"}},
                     {{"kind", "induction"}, {"found", false}, {"sentence", "no induction head"}}}}};
    input.column_order["heads"] = {"label", "head", "layer"};
    input.table_notes["pairs"] = "the closest pairs";
    write_html_report(dir / "report.html", input);
    const std::string html = read_text(dir / "report.html");
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("data:image/png;base64,") != std::string::npos);
    CHECK(count_of(html, "</script>") == 2);                          // token text cannot end the data block
    CHECK_FALSE(report_data(html)["stats"].contains("correlation"));  // matrices are not shown: not embedded

    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    // A page with a deliberate error proves the error capture works before trusting "no errors".
    std::string broken = html;
    broken.insert(broken.rfind("</body>"), "<script>undefined_function_for_test();</script>");
    write_text(dir / "broken.html", broken);
    const CommandResult dom = run_chromium(chromium, dir / "report.html", "--dump-dom", dir / "chromium.log");
    REQUIRE(dom.exit_code == 0);
    CHECK(dom.output.find("data-ready=\"1\"") != std::string::npos);
    CHECK(dom.output.find("<ul id=\"report-errors\"></ul>") != std::string::npos);
    // heads: header + a row per head; pairs: 2; the summary of scalars: header + "model"; About:
    // input, tokens, map, shown, colours
    CHECK(count_of(dom.output, "<tr>") == n_layers * n_heads + 1 + 2 + 2 + 5);
    CHECK(count_of(dom.output, "<canvas class=\"map\"") == n_layers * n_heads);
    CHECK(count_of(dom.output, "<canvas class=\"view-lines\"") == 1);
    CHECK(count_of(dom.output, "previous-token") >= n_layers * 2);  // captions and table cells
    CHECK(dom.output.find("<th>label</th><th>head</th><th>layer</th><th>entropy</th>") != std::string::npos);
    CHECK(dom.output.find(
              "<td class=\"text\">L0 H1</td><td class=\"text\">L1 H1</td><td title=\"0.125\">0.125</td><td>yes</td>") !=
          std::string::npos);
    CHECK(dom.output.find("<p class=\"note\">the closest pairs</p>") != std::string::npos);
    CHECK(dom.output.find("<li>L0H0 is a previous-token head</li><li class=\"not-found\">no induction head</li>") !=
          std::string::npos);
    CHECK(dom.output.find("<section id=\"findings-section\">") != std::string::npos);  // no longer hidden
    const std::string log = read_text(dir / "chromium.log");
    CHECK(log.find("Uncaught") == std::string::npos);
    CHECK(log.find("Refused") == std::string::npos);  // nothing blocked by the no-network policy

    const CommandResult broken_dom = run_chromium(chromium, dir / "broken.html", "--dump-dom", dir / "chromium.log");
    CHECK(broken_dom.output.find("Uncaught") != std::string::npos);

    // Click the "entropy" header (sort ascending) and move the mouse over the last cell of the
    // first map (bottom right: query 11, key 11, visible in a causal map).
    const nlohmann::json results = drive_report(chromium, dir, html, R"(
document.querySelectorAll('th').forEach(function (th) { if (th.textContent === 'entropy') th.click(); });
var canvas = document.querySelector('canvas.map'), box = canvas.getBoundingClientRect();
canvas.dispatchEvent(new MouseEvent('mousemove', {clientX: box.right - 2, clientY: box.bottom - 2}));
var entropies = [];
document.querySelectorAll('#tables table.stats:not(.scalars)')[0].querySelectorAll('tbody tr').forEach(function (tr) { entropies.push(tr.cells[3].title); });
var pixel = canvas.getContext('2d').getImageData(canvas.width - 2, canvas.height - 2, 1, 1).data;
return {tooltip: document.getElementById('tooltip').textContent, entropies: entropies, pixel: [pixel[0], pixel[1], pixel[2]]};
)");
    std::vector<double> entropies;
    for (const auto& e : results["entropies"]) entropies.push_back(std::stod(e.get<std::string>()));
    CHECK(entropies.size() == static_cast<size_t>(n_layers * n_heads));
    CHECK(std::is_sorted(entropies.begin(), entropies.end()));
    const std::string tooltip = results["tooltip"];
    const std::string last_token = display_token(input.query_tokens[11]);
    CHECK(tooltip.find("L0 H0 \u00b7 previous-token\nquery #11 \u201c" + last_token + "\u201d\nkey #11 \u201c" +
                       last_token + "\u201d\nweight ") == 0);
    const float* w = layers[0].ptr();
    const auto [low, high] = visible_extremes(w, v);
    const double shown = std::stod(tooltip.substr(tooltip.rfind(' ') + 1));  // 3 significant digits of the decoded code
    CHECK(std::abs(shown - w[11 * t + 11]) <= (high - low) / 508 + 0.005 * shown + 1e-6);
    // The cell is drawn in the colormap entry of its code.
    const long code = std::lround(scale_position(w[11 * t + 11], low, high, false) * 254);
    const Rgb expected = Colormap::named("viridis").entry(static_cast<int>(std::lround(code * 255.0 / 254)));
    CHECK(results["pixel"] == nlohmann::json::array({expected.r, expected.g, expected.b}));

    const CommandResult shot =
        run_chromium(chromium, dir / "report.html", "--screenshot=" + (dir / "shot.png"), dir / "chromium.log");
    CHECK(shot.exit_code == 0);
    const DecodedPng png = decode_png(dir / "shot.png");
    CHECK(png.width == 1200);
    CHECK(png.height == 1600);
}

TEST_CASE("HTML report: the attention view marks the strongest keys of a clicked query, per head and over all heads") {
    ScratchDir dir;
    const int64_t t = 13, n_heads = 3, n_layers = 2;
    const Visibility v = square_visibility(t, true);
    const std::vector<Tensor> layers = random_layers(n_layers, n_heads, v);
    HtmlReportInput input = self_attention_report(layers, v, numbered_tokens("tok", t));
    input.layer_numbers = {4, 7};
    const std::string html = html_report(input);
    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    // Each step's marked keys: [rank, key index, shown weight] in document order, and the view's state.
    const nlohmann::json results =
        drive_report(chromium, dir, html, R"(
function marked() {
  var view = document.getElementById('view'), keys = [];
  document.querySelectorAll('.view-key.strongest').forEach(function (e) {
    keys.push([Number(e.getAttribute('data-rank')), Number(e.getAttribute('data-index')), Number(e.getAttribute('data-weight'))]);
  });
  return {layer: view.getAttribute('data-layer'), head: view.getAttribute('data-head'), query: view.getAttribute('data-query'),
          keys: keys, selected: document.querySelectorAll('.view-query.selected').length};
}
function choose(id, value) { var s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event('change')); }
function query(i) { return document.querySelector('.view-query[data-index="' + i + '"]'); }
var steps = {};
choose('view-layer', '1'); choose('view-head', '2'); query(9).click(); steps.one_head = marked();
query(9).click(); steps.released = marked();
choose('view-layer', '0'); choose('view-head', 'all'); query(12).click(); steps.all_heads = marked();
query(12).click(); query(5).dispatchEvent(new MouseEvent('mouseenter')); steps.hover = marked();
query(5).dispatchEvent(new MouseEvent('mouseleave')); steps.left = marked();
var canvas = document.querySelectorAll('canvas.map')[n_map], box = canvas.getBoundingClientRect();
canvas.dispatchEvent(new MouseEvent('click', {clientX: box.right - 2, clientY: box.bottom - 2}));
steps.map_click = marked();
return steps;
)",
                     "var n_map = " + std::to_string(n_heads + 1) + ";");  // layer 1 (numbered 7), head 1
    CAPTURE(results.dump());

    // What the view should mark: the three largest (mean) weights of the row; the weights shown
    // are the decoded codes, so they may differ from the true ones by half a step of each head.
    auto check_marked = [&](const nlohmann::json& step, int64_t layer, std::vector<int64_t> heads, int64_t row) {
        std::vector<double> mean(static_cast<size_t>(t), 0.0);
        double half_step = 0;
        for (int64_t h : heads) {
            const float* w = layers[static_cast<size_t>(layer)].ptr() + h * t * t;
            const auto [low, high] = visible_extremes(w, v);
            half_step += (high - low) / 508 / static_cast<double>(heads.size());
            for (int64_t j = 0; j < t; ++j)
                mean[static_cast<size_t>(j)] += w[row * t + j] / static_cast<double>(heads.size());
        }
        std::vector<double> sorted = mean;
        std::sort(sorted.rbegin(), sorted.rend());
        REQUIRE(step["keys"].size() == 3);
        std::vector<double> by_rank(3);
        for (const auto& key : step["keys"]) {
            const int rank = key[0], index = key[1];
            const double shown = key[2];
            REQUIRE((rank >= 1 && rank <= 3));
            CHECK(index <= row);  // a visible key
            CHECK(std::abs(mean[static_cast<size_t>(index)] - sorted[static_cast<size_t>(rank - 1)]) <=
                  2 * half_step + 1e-6);
            CHECK(std::abs(shown - mean[static_cast<size_t>(index)]) <= half_step + 0.005 * shown + 1e-6);
            by_rank[static_cast<size_t>(rank - 1)] = shown;
        }
        CHECK(std::is_sorted(by_rank.rbegin(), by_rank.rend()));
        CHECK(step["query"] == std::to_string(row));
    };
    check_marked(results["one_head"], 1, {2}, 9);
    CHECK(results["one_head"]["layer"] == "7");
    CHECK(results["one_head"]["head"] == "2");
    CHECK(results["one_head"]["selected"] == 1);
    CHECK(results["released"]["keys"].empty());
    CHECK(results["released"]["query"] == "");
    check_marked(results["all_heads"], 0, {0, 1, 2}, 12);
    CHECK(results["all_heads"]["head"] == "all");
    check_marked(results["hover"], 0, {0, 1, 2}, 5);
    CHECK(results["left"]["keys"].empty());
    check_marked(results["map_click"], 1, {1}, 12);
    CHECK(results["map_click"]["layer"] == "7");
    CHECK(results["map_click"]["head"] == "1");
}

TEST_CASE("HTML report says what it shows: model, input text and T, map kind, provenance, a numbered colour legend") {
    ScratchDir dir;
    const int64_t t = 9, n_heads = 2;
    const Visibility v = square_visibility(t, true);
    const std::vector<Tensor> layers = random_layers(1, n_heads, v);
    HtmlReportInput input = self_attention_report(layers, v, numbered_tokens("tok", t));
    input.model = "models/tiny.bin (llama, 1 layers x 2 heads)";
    input.input_text = "Once upon a <time>";
    input.scale = ScaleMode::global;
    input.style.vmin = 0.0f, input.style.vmax = 0.5f;
    input.stats = {
        {"num_heads", n_heads},
        {"provenance",
         {{"tool", "attn-viz"},
          {"version", "9.8.7"},
          {"command_line", {"attn-viz", "model", "--html", "--text", "it's a test"}},
          {"inputs", {{{"path", "models/tiny.bin"}, {"role", "model"}, {"bytes", 1234}, {"sha256", "ab12cd"}}}}}}};
    const std::string html = html_report(input);
    // Written into the page itself, so any reader (and a page whose script failed) shows it.
    CHECK(html.find("<td id=\"about-model\">models/tiny.bin (llama, 1 layers x 2 heads)</td>") != std::string::npos);
    CHECK(html.find("<td id=\"about-input\">Once upon a &lt;time&gt;</td>") != std::string::npos);
    CHECK(html.find("T = 9 queries &times; 9 keys, causal") != std::string::npos);
    CHECK(html.find("<td id=\"about-map\">attention weights</td>") != std::string::npos);
    CHECK(html.find("attn-viz 9.8.7") != std::string::npos);
    CHECK(html.find("<code>attn-viz model --html --text &#39;it&#39;\\&#39;&#39;s a test&#39;</code>") !=
          std::string::npos);  // as a shell takes it
    CHECK(html.find("models/tiny.bin (model, 1234 bytes), SHA-256 <code>ab12cd</code>") != std::string::npos);
    // The provenance folds, closed, right below the attention view; the About table holds none of it.
    const size_t folded =
        html.find("<div id=\"view\"></div>\n<details id=\"provenance\"><summary>Provenance</summary>");
    CHECK(folded != std::string::npos);
    CHECK(html.find("attn-viz 9.8.7") > folded);
    CHECK(html.find("<h2>Overview</h2>") > html.find("</details>", folded));
    CHECK(html.substr(0, html.find("</table>")).find("Version") == std::string::npos);
    CHECK(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
                    "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">") != std::string::npos);
    const size_t legend = html.find("<td id=\"about-colours\">");
    REQUIRE(legend != std::string::npos);
    const std::string colours = html.substr(legend, html.find("</td>", legend) - legend);
    for (const char* tick :
         {"0", "0.1", "0.2", "0.3", "0.4", "0.5"})  // the legend's numbers, where they are on the bar
        CHECK(colours.find(std::string("%\">") + tick + "</span>") != std::string::npos);
    CHECK(colours.find("left:0.00%\">0</span>") != std::string::npos);
    CHECK(colours.find("left:100.00%\">0.5</span>") != std::string::npos);
    // Without a text, the first tokens stand for the input; norm maps are called norms.
    input.input_text.clear();
    input.map_kind = "norm-based", input.value_name = "norm";
    const std::string norm_html = html_report(input);
    CHECK(norm_html.find("<td id=\"about-input\">tok0 tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8</td>") !=
          std::string::npos);
    const size_t body = norm_html.find("<body>");
    CHECK(norm_html.substr(body, norm_html.find("<script", body) - body).find("weight") == std::string::npos);

    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    write_text(dir / "norm.html", norm_html);
    const nlohmann::json shown = drive_report(chromium, dir, html, R"(
function text(id) { var e = document.getElementById(id); var box = e.getBoundingClientRect(); return {text: e.innerText, visible: box.width > 0 && box.height > 0}; }
function command_shown() { return document.querySelector('#provenance code').checkVisibility(); }
var summary = document.getElementById('summary-table'), provenance = document.getElementById('provenance');
var view = document.getElementById('view').getBoundingClientRect();
var folded = {open: provenance.open, command: command_shown(), below_view: provenance.getBoundingClientRect().top >= view.bottom};
provenance.querySelector('summary').click();
var unfolded = {open: provenance.open, command: command_shown(), text: provenance.innerText};
return {model: text('about-model'), input: text('about-input'), map: text('about-map'), colours: text('about-colours'),
        summary: summary ? summary.innerText : '', folded: folded, unfolded: unfolded};
)");
    CAPTURE(shown.dump());
    CHECK(shown["model"]["text"] == "models/tiny.bin (llama, 1 layers x 2 heads)");
    CHECK(shown["input"]["text"] == "Once upon a <time>");
    CHECK(shown["map"]["text"] == "attention weights");
    for (const char* part : {"model", "input", "map", "colours"}) CHECK(shown[part]["visible"] == true);
    CHECK(shown["colours"]["text"].get<std::string>().find("0.5") != std::string::npos);
    CHECK(shown["summary"].get<std::string>().find("num heads\t2") != std::string::npos);  // a table, readable names
    // Folded below the view until its summary is clicked.
    CHECK(shown["folded"] == nlohmann::json{{"open", false}, {"command", false}, {"below_view", true}});
    CHECK(shown["unfolded"]["open"] == true);
    CHECK(shown["unfolded"]["command"] == true);
    CHECK(shown["unfolded"]["text"].get<std::string>().find("attn-viz 9.8.7") != std::string::npos);
    // The norm page's tooltip names the value a norm.
    const nlohmann::json norm = drive_report(chromium, dir, norm_html, R"(
var canvas = document.querySelector('canvas.map'), box = canvas.getBoundingClientRect();
canvas.dispatchEvent(new MouseEvent('mousemove', {clientX: box.right - 2, clientY: box.bottom - 2}));
return {tooltip: document.getElementById('tooltip').textContent, map: document.getElementById('about-map').innerText};
)");
    CHECK(norm["tooltip"].get<std::string>().find("\nnorm ") != std::string::npos);
    CHECK(norm["tooltip"].get<std::string>().find("weight") == std::string::npos);
    CHECK(norm["map"] == "norm-based");
}

TEST_CASE("HTML report: at T = 256 and beyond the attention view keeps the clicked query in sight") {
    ScratchDir dir;
    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    for (int64_t t : {256, 400}) {
        const Visibility v = square_visibility(t, true);
        const std::vector<Tensor> layers = random_layers(1, 2, v);
        const std::string html = html_report(self_attention_report(layers, v, numbered_tokens("tok", t)));
        // Click rows near the end and in the middle of the second head's map under "Heads", and a
        // row of the view's own map: each time the chosen query's token is inside the view's box.
        const nlohmann::json results = drive_report(chromium, dir, html, R"(
function click_row(canvas, fraction) {
  var box = canvas.getBoundingClientRect();
  canvas.dispatchEvent(new MouseEvent('click', {clientX: box.right - 3, clientY: box.top + (box.height - 3) * fraction + 1}));
}
function in_sight() {
  var view = document.getElementById('view'), body = view.querySelector('.view-body'), q = view.getAttribute('data-query');
  var item = view.querySelector('.view-query[data-index="' + q + '"]');
  var outer = body.getBoundingClientRect(), inner = item.getBoundingClientRect();
  return {query: Number(q), selected: item.className.indexOf('selected') >= 0,
          inside: inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1 && inner.bottom > inner.top};
}
var maps = document.querySelectorAll('#maps canvas.map'), steps = [];
click_row(maps[1], 0.97); steps.push(in_sight());
click_row(maps[1], 0.5); steps.push(in_sight());
click_row(document.querySelector('.view-map canvas.map'), 0.9); steps.push(in_sight());
return steps;
)");
        CAPTURE(results.dump());
        REQUIRE(results.size() == 3);
        CHECK(results[0]["query"].get<int64_t>() > t * 9 / 10);
        CHECK(results[2]["query"].get<int64_t>() > t * 8 / 10);
        for (const auto& step : results) {
            CHECK(step["selected"] == true);
            CHECK(step["inside"] == true);
        }
    }
}

TEST_CASE("HTML report shows only the chosen heads of the chosen layers, named by their numbers") {
    ScratchDir dir;
    const int64_t t = 7, n_heads = 4;
    const Visibility v = square_visibility(t, false);
    const std::vector<Tensor> layers = random_layers(2, n_heads, v);
    HtmlReportInput input = self_attention_report(layers, v, numbered_tokens("w", t));
    input.layer_numbers = {3, 5};
    input.head_numbers = {{1}, {0, 2, 3}};
    const std::string html = html_report(input);
    const nlohmann::json data = report_data(html);
    REQUIRE(data["layers"].size() == 2);
    CHECK(data["layers"][0]["heads"].size() == 1);
    CHECK(data["layers"][0]["heads"][0]["number"] == 1);
    CHECK(data["layers"][1]["heads"][2]["number"] == 3);
    const std::vector<uint8_t> codes = map_codes(data);
    CHECK(codes.size() == static_cast<size_t>(4 * t * t));  // four maps
    // The second map is layer 5's head 0 (codes in order): its weights, within half a step.
    const float* w = layers[1].ptr();
    const auto [low, high] = visible_extremes(w, v);
    for (int64_t k = 0; k < t * t; ++k)
        CHECK(std::abs(codes[static_cast<size_t>(t * t + k)] - scale_position(w[k], low, high, false) * 254) <=
              0.5 + 1e-3);
    input.head_numbers = {{4}, {0}};
    CHECK_THROWS_AS(html_report(input), Error);
    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    const nlohmann::json captions = drive_report(chromium, dir, html, R"(
var out = [];
document.querySelectorAll('#maps figcaption').forEach(function (c) { out.push(c.textContent); });
return out;
)");
    REQUIRE(captions.size() == 4);
    const char* names[] = {"L3 H1 \u00b7 ", "L5 H0 \u00b7 ", "L5 H2 \u00b7 ",
                           "L5 H3 \u00b7 "};  // then the head's own range (--scale head)
    for (size_t k = 0; k < 4; ++k) CHECK(captions[k].get<std::string>().rfind(names[k], 0) == 0);
}

TEST_CASE(
    "HTML report with several sets of maps (an encoder-decoder's encoder, decoder and cross attention): each its own "
    "view, overview and heads") {
    ScratchDir dir;
    const int64_t s = 6, t = 4, n_heads = 2;
    const Visibility encoder_v = square_visibility(s, false), decoder_v = square_visibility(t, true);
    Visibility cross_v;
    cross_v.queries = t, cross_v.keys = s, cross_v.causal = false;
    const std::vector<Tensor> encoder = random_layers(2, n_heads, encoder_v),
                              decoder = random_layers(3, n_heads, decoder_v),
                              cross = random_layers(3, n_heads, cross_v);
    HtmlReportInput input = self_attention_report(encoder, encoder_v, numbered_tokens("src", s));
    input.name = "encoder", input.heading = "encoder self-attention";
    HtmlMaps& decoder_set = input.more_maps.emplace_back();
    decoder_set.name = "decoder", decoder_set.layers = pointers(decoder), decoder_set.visibility = decoder_v;
    decoder_set.query_tokens = decoder_set.key_tokens = numbered_tokens("tgt", t);
    HtmlMaps& cross_set = input.more_maps.emplace_back();
    cross_set.name = "cross", cross_set.heading = "cross attention", cross_set.layers = pointers(cross),
    cross_set.visibility = cross_v;
    cross_set.query_tokens = numbered_tokens("tgt", t), cross_set.key_tokens = numbered_tokens("src", s);
    input.stats = {{"heads",
                    {{{"stack", "encoder"}, {"layer", 1}, {"head", 0}, {"label", "enc-label"}},
                     {{"stack", "cross"}, {"layer", 1}, {"head", 0}, {"label", "cross-label"}}}}};
    const std::string html = html_report(input);

    // The data: the encoder's maps at the top level, then the decoder's and the cross maps, each
    // with its own tokens, edges and codes, each map within half a step of its weights.
    const nlohmann::json data = report_data(html);
    REQUIRE(data["more_maps"].size() == 2);
    const std::vector<std::pair<const nlohmann::json*, const std::vector<Tensor>*>> sets = {
        {&data, &encoder}, {&data["more_maps"][0], &decoder}, {&data["more_maps"][1], &cross}};
    const Visibility* visibilities[] = {&encoder_v, &decoder_v, &cross_v};
    const char* names[] = {"encoder", "decoder", "cross"};
    for (size_t k = 0; k < sets.size(); ++k) {
        CAPTURE(k);
        const nlohmann::json& set = *sets[k].first;
        const Visibility& v = *visibilities[k];
        CHECK(set["name"] == names[k]);
        CHECK(set["query_tokens"].size() == static_cast<size_t>(v.queries));
        CHECK(set["key_tokens"].size() == static_cast<size_t>(v.keys));
        CHECK(set["row_edges"].size() == static_cast<size_t>(v.queries + 1));
        CHECK(set["col_edges"].size() == static_cast<size_t>(v.keys + 1));
        const std::vector<uint8_t> codes = map_codes(set);
        REQUIRE(codes.size() == sets[k].second->size() * static_cast<size_t>(n_heads * v.queries * v.keys));
        size_t at = 0;
        for (const Tensor& layer : *sets[k].second)
            for (int64_t h = 0; h < n_heads; ++h) {
                const float* w = layer.ptr() + h * v.queries * v.keys;
                const auto [low, high] = visible_extremes(w, v);
                for (int64_t i = 0; i < v.queries; ++i)
                    for (int64_t j = 0; j < v.keys; ++j, ++at) {
                        if (!v.visible(i, j)) {
                            CHECK(codes[at] == 255);
                            continue;
                        }
                        CHECK(std::abs(codes[at] - scale_position(w[i * v.keys + j], low, high, false) * 254) <=
                              0.5 + 1e-3);
                    }
            }
    }
    CHECK(data["more_maps"][1]["query_tokens"][0] == "tgt0");
    CHECK(data["more_maps"][1]["key_tokens"][0] == "src0");
    CHECK(html.find("<h2>Attention view: cross attention</h2>") != std::string::npos);
    CHECK(html.find("id=\"overview-decoder\"") != std::string::npos);

    // Sets need names of their own.
    input.more_maps[1].name = "decoder";
    CHECK_THROWS_AS(html_report(input), Error);
    input.more_maps[1].name = "";
    CHECK_THROWS_AS(html_report(input), Error);

    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    // Each set's view and maps; a click on the cross set's second map (L0 H1; later layers start
    // folded) selects its last row in the cross view only.
    const nlohmann::json shown = drive_report(chromium, dir, html, R"(
var out = {};
['encoder', 'decoder', 'cross'].forEach(function (name) {
  out[name] = {queries: document.querySelectorAll('#view-' + name + ' .view-query').length,
               keys: document.querySelectorAll('#view-' + name + ' .view-key').length,
               layers: document.getElementById('view-' + name + '-layer').options.length,
               captions: Array.prototype.map.call(document.querySelectorAll('#maps-' + name + ' figcaption'), function (c) { return c.textContent; })};
});
var canvas = document.querySelectorAll('#maps-cross canvas.map')[1], box = canvas.getBoundingClientRect();
canvas.dispatchEvent(new MouseEvent('click', {clientX: box.right - 2, clientY: box.bottom - 2}));
out.cross_query = document.getElementById('view-cross').getAttribute('data-query');
out.cross_layer = document.getElementById('view-cross').getAttribute('data-layer');
out.encoder_query = document.getElementById('view-encoder').getAttribute('data-query');
return out;
)");
    CAPTURE(shown.dump());
    CHECK(shown["encoder"]["queries"] == s);
    CHECK(shown["encoder"]["keys"] == s);
    CHECK(shown["encoder"]["layers"] == 2);
    CHECK(shown["decoder"]["queries"] == t);
    CHECK(shown["decoder"]["layers"] == 3);
    CHECK(shown["cross"]["queries"] == t);
    CHECK(shown["cross"]["keys"] == s);
    REQUIRE(shown["cross"]["captions"].size() == 6);
    REQUIRE(shown["encoder"]["captions"].size() == 4);
    // Labels belong to their stack: L1 H0 is labelled differently in the encoder and the cross set, and not at all in
    // the decoder.
    CHECK(shown["encoder"]["captions"][2].get<std::string>().rfind("L1 H0 \u00b7 enc-label", 0) == 0);
    CHECK(shown["cross"]["captions"][2].get<std::string>().rfind("L1 H0 \u00b7 cross-label", 0) == 0);
    CHECK(shown["decoder"]["captions"][2].get<std::string>().find("label") == std::string::npos);
    CHECK(shown["cross_query"] == std::to_string(t - 1));
    CHECK(shown["cross_layer"] == "0");
    CHECK(shown["encoder_query"] == "");
}

TEST_CASE("HTML report pools maps when all of them together exceed the cell budget") {
    ScratchDir dir;
    const int64_t t = 300;
    const Visibility v = square_visibility(t, true);
    const std::vector<Tensor> layers = random_layers(4, 12, v);  // 4.3M cells > 4M
    HtmlReportInput input;
    input.layers = pointers(layers);
    input.visibility = v;
    input.query_tokens.assign(static_cast<size_t>(t), "x");
    input.key_tokens = input.query_tokens;
    const std::string html = html_report(input);
    CHECK(html.find("\"pooled\":true") != std::string::npos);
    CHECK(html.size() < size_t{12} << 20);
    const std::vector<Tensor> small = random_layers(1, 12, square_visibility(128, true));
    input.layers = pointers(small);
    input.visibility = square_visibility(128, true);
    input.query_tokens.assign(128, "x");
    input.key_tokens = input.query_tokens;
    CHECK(html_report(input).find("\"pooled\":false") != std::string::npos);
}

}  // TEST_SUITE("render")
