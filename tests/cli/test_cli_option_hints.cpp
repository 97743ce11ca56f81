// Options are the command line's business: the library's messages never name one, and the user
// still sees which option is wrong or which one gets past an error (app/ adds it).
#include <filesystem>
#include <regex>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "safetensors.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// The string literals of C++ source `text` (comments, character literals and code skipped; raw
// strings included).
std::vector<std::string> string_literals(const std::string& text) {
    std::vector<std::string> literals;
    size_t i = 0;
    while (i < text.size()) {
        if (text.compare(i, 2, "//") == 0) {
            i = text.find('\n', i);
        } else if (text.compare(i, 2, "/*") == 0) {
            i = text.find("*/", i + 2);
            if (i != std::string::npos) i += 2;
        } else if (text.compare(i, 2, "R\"") == 0 &&
                   (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
            const size_t open = text.find('(', i + 2);
            const std::string close = std::string(")").append(text, i + 2, open - i - 2).append("\"");
            const size_t end = text.find(close, open);
            literals.push_back(text.substr(open + 1, end - open - 1));
            i = end + close.size();
        } else if (text[i] == '"' || text[i] == '\'') {
            const char quote = text[i];
            std::string literal;
            for (++i; i < text.size() && text[i] != quote; ++i) {
                if (text[i] == '\\') literal += text[i++];
                literal += text[i];
            }
            if (quote == '"') literals.push_back(literal);
            ++i;
        } else {
            ++i;
        }
        if (i == std::string::npos) break;
    }
    return literals;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("string_literals finds strings past comments, characters and raw strings") {
    const std::vector<std::string> found = string_literals(
        "int a = b--; // \"--no\"\n/* \"--no\" */ f('\"', \"x --yes\", R\"js(y \"--raw\")js\", \"e\\\"q\");");
    CHECK(found == std::vector<std::string>{"x --yes", "y \"--raw\"", "e\\\"q"});
}

TEST_CASE("no string in lib/ names a command-line option") {
    const std::regex option(R"((^|[^-\w])--[a-z])");
    size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(source_dir()) / "lib")) {
        const std::string ext = entry.path().extension().string();
        if (ext != ".cpp" && ext != ".hpp") continue;
        ++files;
        for (const std::string& literal : string_literals(read_text(entry.path().string())))
            CHECK_MESSAGE(!std::regex_search(literal, option), entry.path().string() << ": \"" << literal << "\"");
    }
    CHECK(files > 50);
}

TEST_CASE("an error an option can get past ends with that option") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const LayerWeights w = random_layer(8, 2, 2, false, false);
    write_safetensors(dir / "m.safetensors", {{"encoder.layer.0.attention.self.query.weight", transposed(w.w_q)}});
    const std::string run = "run -q --input " + (dir / "x.json") + " --out " + (dir / "out") + " --weights ";
    CommandResult r = run_attn_viz(run + (dir / "m.safetensors"));
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("m.safetensors: a safetensors checkpoint needs a layout: torch-mha, bert, gpt2 or llama (pass "
                        "--layout)\n") != std::string::npos);
    r = run_attn_viz(run + (dir / "m.safetensors") + " --layout gpt2");
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("holds no gpt2 layer") != std::string::npos);
    CHECK(r.output.find(") (pick another --layout or a --prefix)\n") != std::string::npos);
    r = run_attn_viz(run + (dir / "m.safetensors") + " --layout bert");
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("number of heads unknown: no config.json with num_attention_heads beside the checkpoint (pass "
                        "--num-heads)\n") != std::string::npos);
}

TEST_CASE("a bad option value is reported with the option's name") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string run = layer_fixture_run(dir) + " -q";
    const std::pair<std::string, std::string> cases[] = {
        {" --window 2:1,0:1",
         "attn-viz: error: --window: window '2:1,0:1': the query range 2:1 is empty (need start < end)\n"},
        {" --window 0:9,0:1", "attn-viz: error: window '0:9,0:1': query range ends past the 3 queries\n"},
        {" --threshold sink=many",
         "attn-viz: error: --threshold: threshold 'sink=many': 'many' is not a finite number\n"},
        {" --max-memory 12Q", "attn-viz: error: --max-memory: \"12Q\" is not a size (e.g. 8G, 512M, 1000000)\n"},
        {" --svg 1-2", "attn-viz: error: --svg '1-2': expected a head as L1H3 or 1:3, or a head number alone\n"},
        {" --svg 2", "attn-viz: error: svg head L0H2 is out of range: the layer has 2 heads\n"},
        {" --svg L0H2", "attn-viz: error: svg head L0H2 is out of range: the layer has 2 heads\n"},
        {" --svg 1:0", "attn-viz: error: --svg '1:0': L1H0 is not drawn: run draws layer 0 only\n"},
    };
    for (const auto& [option, message] : cases) {
        INFO(option);
        const CommandResult r = run_attn_viz(run + option);
        CHECK(r.exit_code == 2);
        CHECK(r.output == message);
        CHECK(!fs::exists(dir / "out"));
    }
    const CommandResult r = run_attn_viz("compare -q " + (dir / "w.json") + " " + (dir / "w.json") + " --input " +
                                         (dir / "x.json") + " --fail-metric sharpness");
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--fail-metric: unknown metric 'sharpness'") != std::string::npos);
}

}  // TEST_SUITE("cli")
