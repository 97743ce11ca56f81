// Reading and driving report.html in tests: the embedded data, and the page opened and driven in
// headless Chromium when it is installed (render and CLI tests).
#pragma once

#include <filesystem>
#include <string>
#include <utility>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace test_support {

// /usr/bin/chromium (or chromium-browser), or "" after the message "skipped: chromium not installed"
// when neither is installed (the caller returns then).
inline std::string chromium_or_skip() {
    for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (std::filesystem::exists(path)) return path;
    MESSAGE("skipped: chromium not installed");
    return "";
}

// The JSON in <script id="report-data"> (its "<\/" is JSON's own escape of "/").
inline nlohmann::json report_data(const std::string& html) {
    const std::string open = "<script type=\"application/json\" id=\"report-data\">";
    const size_t begin = html.find(open);
    REQUIRE(begin != std::string::npos);
    const size_t end = html.find("</script>", begin);
    return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

// Opens page in headless Chromium (virtual time, so the page's asynchronous steps finish),
// Chromium's own log to log_path.
inline CommandResult run_chromium(const std::string& chromium, const std::string& page, const std::string& extra,
                                  const std::string& log_path) {
    ScratchDir profile;
    return run_command(chromium +
                       " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                       "--disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
                       profile.path().string() +
                       " --enable-logging=stderr --v=0 --window-size=1200,1600 --virtual-time-budget=10000 " + extra +
                       " file://" + page + " 2>" + log_path);
}

// Runs `steps` (a function body returning a JSON-able value; `prelude` declares what it needs) in
// a copy of the report once the page is ready, and returns that value. Fails the test when the
// page reports a script error or the steps do not finish.
inline nlohmann::json drive_report(const std::string& chromium, const ScratchDir& dir, const std::string& html,
                                   const std::string& steps, const std::string& prelude = "") {
    std::string driven = html;
    driven.insert(driven.rfind("</body>"),
                  "<script>" + prelude +
                      "\n(function wait() {\n"
                      "  if (!document.body.getAttribute('data-ready')) return setTimeout(wait, 10);\n"
                      "  var out = document.createElement('pre');\n  out.id = 'driven';\n"
                      "  out.textContent = JSON.stringify((function () {" +
                      steps +
                      "})());\n  document.body.appendChild(out);\n"
                      "})();\n</script>\n");
    write_text(dir / "driven.html", driven);
    const CommandResult dom = run_chromium(chromium, dir / "driven.html", "--dump-dom", dir / "driven.log");
    CHECK(dom.output.find("<ul id=\"report-errors\"></ul>") != std::string::npos);
    CHECK(read_text(dir / "driven.log").find("Uncaught") == std::string::npos);
    const size_t begin = dom.output.find("<pre id=\"driven\">");
    REQUIRE_MESSAGE(begin != std::string::npos, dom.output.substr(0, 2000));
    const size_t end = dom.output.find("</pre>", begin);
    std::string json = dom.output.substr(begin + 17, end - begin - 17);
    for (const auto& [entity, text] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
        for (size_t at = json.find(entity); at != std::string::npos; at = json.find(entity, at + 1))
            json.replace(at, std::string(entity).size(), text);
    return nlohmann::json::parse(json);
}

}  // namespace test_support
