// Token labels that are not UTF-8 (a Latin-1 tokens file, a multi-byte character cut short) go
// through a whole run: every output stays valid UTF-8 and shows the bytes as \xNN.
#include <filesystem>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "npy.hpp"
#include "utf8.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

bool valid_utf8(const std::string& text) { return escape_invalid_utf8(text) == text; }

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("run: a tokens file with bytes that are not UTF-8 gives valid outputs showing them as \\xNN") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 5);
    write_npy(dir / "x.npy", random_tensor({5, 8}));
    write_text(dir / "tokens.txt",
               "a\xff\xfe"
               "b\n\xe2\x82\nok\n\xc3\xa9t\xc3\xa9\nlast\xe2\x82\n");
    const CommandResult r =
        run_attn_viz("run --weights " + (dir / "w.json") + " --input " + (dir / "x.npy") + " --tokens " +
                     (dir / "tokens.txt") + " --out " + (dir / "out") + " --html --svg 1");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(valid_utf8(r.output));
    const std::string stats_text = read_text(dir / "out/stats.json");
    REQUIRE(valid_utf8(stats_text));
    const nlohmann::json stats = nlohmann::json::parse(stats_text);
    CHECK(stats["tokens"] ==
          nlohmann::json({"a\\xff\\xfeb", "\\xe2\\x82", "ok", "\xc3\xa9t\xc3\xa9", "last\\xe2\\x82"}));
    for (const char* file : {"heads.csv", "pairs.csv", "report.html", "head_01.svg"}) {
        const std::string text = read_text(dir / ("out/" + std::string(file)));
        CHECK_MESSAGE(valid_utf8(text), file);
    }
    // The HTML data and the SVG labels show the escapes (JSON doubles the backslash in the HTML).
    CHECK(read_text(dir / "out/report.html").find("a\\\\xff\\\\xfeb") != std::string::npos);
    CHECK(read_text(dir / "out/head_01.svg").find(">a\\xff\\xfeb<") != std::string::npos);
    CHECK(std::filesystem::file_size(dir / "out/head_00.png") > 0);
}

TEST_CASE("run: an input JSON with bytes that are not UTF-8 is bad input naming the file") {
    ScratchDir dir;
    write_layer_fixture(dir, 4, 2, 2);
    write_text(dir / "bad.json", "{\"tokens\": [\"a\xff\", \"b\"], \"embeddings\": [[1, 2, 3, 4], [5, 6, 7, 8]]}");
    const CommandResult r = run_attn_viz("run --weights " + (dir / "w.json") + " --input " + (dir / "bad.json") +
                                         " --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("attn-viz: error: " + (dir / "bad.json") + ": ") == 0);
    CHECK(!std::filesystem::exists(dir / "out"));
}

}  // TEST_SUITE("cli")
