// Render suite, part 4: the report page's stylesheet and scripts (lib/render/assets/), linted. They
// are compiled in byte for byte; in headless Chromium (when installed) each script parses alone in
// strict mode, the stylesheet keeps every rule, and the report loads without an uncaught error, a
// console error or a console warning. Every Chromium check first sees a broken copy fail, so none
// can pass by seeing nothing.
#include <algorithm>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "html_page_driver.hpp"
#include "html_report.hpp"
#include "html_report_assets.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

// Placed first on a page: keeps every uncaught error (a script's syntax error included), unhandled
// rejection, console.error and console.warn in lint_messages.
const char* const console_hook = R"(<script>
var lint_messages = [];
window.addEventListener('error', function (e) { lint_messages.push('uncaught: ' + e.message); });
window.addEventListener('unhandledrejection', function (e) { lint_messages.push('unhandled rejection: ' + e.reason); });
['error', 'warn'].forEach(function (level) {
  var original = console[level];
  console[level] = function () {
    lint_messages.push(level + ': ' + Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
});
</script>
)";

// Placed last: once <body data-ready="1"> (or after 3 s of the page's virtual time without it)
// writes {messages, css_rules: the first stylesheet's rules as parsed, ready} as JSON into
// <script type="application/json" id="lint">, which Chromium's DOM dump leaves unescaped.
const char* const lint_writer = R"(<script>
(function write_lint(tries) {
  if (document.body.getAttribute('data-ready') !== '1' && tries > 0)
    return setTimeout(function () { write_lint(tries - 1); }, 10);
  var out = document.createElement('script');
  out.type = 'application/json';
  out.id = 'lint';
  out.textContent = JSON.stringify({messages: lint_messages, css_rules: document.styleSheets[0].cssRules.length,
                                    ready: document.body.getAttribute('data-ready') === '1'}).replace(/</g, '\\u003c');
  document.body.appendChild(out);
})(300);
</script>
)";

// Opens page (the hook and writer in place) in headless Chromium and returns what the writer wrote.
nlohmann::json lint_page(const std::string& chromium, const ScratchDir& dir, const std::string& page) {
    write_text(dir / "lint.html", page);
    const CommandResult dom = run_chromium(chromium, dir / "lint.html", "--dump-dom", dir / "lint.log");
    const std::string open = "<script type=\"application/json\" id=\"lint\">";
    const size_t begin = dom.output.find(open);
    REQUIRE_MESSAGE(begin != std::string::npos, dom.output.substr(0, 2000));
    const size_t end = dom.output.find("</script>", begin);
    return nlohmann::json::parse(dom.output.substr(begin + open.size(), end - begin - open.size()));
}

// A page with the stylesheet and each script alone in a strict function as report.html wraps them,
// declared but not run (the report script needs the report's elements).
std::string parse_page(const std::string& css, const std::vector<std::string>& scripts) {
    std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
                       std::string(console_hook) + "<style>" + css + "</style>\n</head>\n<body data-ready=\"1\">\n";
    for (const std::string& script : scripts)
        page += "<script>(function () {\n'use strict';\n" + script + "\n});</script>\n";
    return page + lint_writer + "</body>\n</html>\n";
}

// The rules a stylesheet without nested blocks has: one per "{".
int64_t css_rule_count(const std::string& css) { return std::count(css.begin(), css.end(), '{'); }

// report.html of a random causal layer with a findings list and a table, hook and writer in place.
std::string linted_report() {
    const Visibility v = square_visibility(9, true);
    const std::vector<Tensor> layers = random_layers(2, 3, v);
    HtmlReportInput input;
    input.layers = pointers(layers);
    input.visibility = v;
    for (int i = 0; i < 9; ++i)
        input.query_tokens.push_back(std::string("t").append(std::to_string(i)));  // not "t" + ...: GCC 12 -Wrestrict
    input.key_tokens = input.query_tokens;
    input.stats = {{"model", "lint"},
                   {"heads", {{{"layer", 0}, {"head", 1}, {"entropy", 0.5}, {"label", "mixed"}}}},
                   {"findings", {{{"kind", "induction"}, {"found", false}, {"sentence", "no induction head"}}}}};
    std::string html = html_report(input);
    html.insert(html.find("</head>"), console_hook);
    html.insert(html.rfind("</body>"), lint_writer);
    return html;
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("HTML report assets: the compiled-in stylesheet and scripts are lib/render/assets' files byte for byte") {
    const std::string assets = source_dir() + "/lib/render/assets/";
    CHECK(read_text(assets + "report.css") == report_css);
    CHECK(read_text(assets + "report.js") == report_script);
    CHECK(read_text(assets + "attention_view.js") == attention_view_script);
    CHECK(std::string(report_script).size() > 1000);  // not empty files compared with empty strings
}

TEST_CASE("HTML report assets: each script parses in strict mode and the stylesheet keeps every rule in Chromium") {
    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    ScratchDir dir;
    const std::string css = report_css, view = attention_view_script, script = report_script;
    CHECK(css_rule_count(css) > 20);

    // Broken copies first: a lost closing brace, an error only strict mode sees, a rule run into the next.
    const nlohmann::json unclosed = lint_page(chromium, dir, parse_page(css, {script.substr(0, script.rfind('}'))}));
    REQUIRE(unclosed["messages"].size() == 1);
    CHECK(unclosed["messages"][0].get<std::string>().find("SyntaxError") != std::string::npos);
    const nlohmann::json sloppy = lint_page(chromium, dir, parse_page(css, {view + "function lint_probe(a, a) {}\n"}));
    CHECK(sloppy["messages"].size() == 1);
    const std::string run_on = css.substr(0, css.find('}')) + css.substr(css.find('}') + 1);
    CHECK(lint_page(chromium, dir, parse_page(run_on, {}))["css_rules"] < css_rule_count(run_on));

    const nlohmann::json lint = lint_page(chromium, dir, parse_page(css, {view, script}));
    CHECK(lint["messages"] == nlohmann::json::array());
    CHECK(lint["css_rules"] == css_rule_count(css));
}

TEST_CASE("HTML report assets: the report loads in Chromium without an uncaught error, console error or warning") {
    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    ScratchDir dir;
    const std::string html = linted_report();

    // A broken copy first: the report's script logs an error before it runs.
    std::string broken = html;
    broken.insert(broken.find("'use strict';") + 13, "console.error('lint probe');");
    const nlohmann::json broken_lint = lint_page(chromium, dir, broken);
    CHECK(broken_lint["messages"] == nlohmann::json::array({"error: lint probe"}));
    CHECK(broken_lint["ready"] == true);

    const nlohmann::json lint = lint_page(chromium, dir, html);
    CHECK(lint["messages"] == nlohmann::json::array());
    CHECK(lint["ready"] == true);
    CHECK(lint["css_rules"] == css_rule_count(report_css));
}

}  // TEST_SUITE("render")
