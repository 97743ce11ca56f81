// attn-viz model --layers / --heads: pictures and report.html limited to the chosen heads,
// statistics over every head (issue 21 item 8), on the trained stories260K (5 layers x 8 heads).
#include <filesystem>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "html_page_driver.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

// "layer_LL/head_HH.png" of every head picture under dir.
std::set<std::string> head_pictures(const fs::path& dir) {
    std::set<std::string> found;
    for (const std::string& file : files_below(dir))
        if (fs::path(file).filename().string().rfind("head_", 0) == 0 && fs::path(file).extension() == ".png")
            found.insert(file);
    return found;
}

std::string picture(int layer, int head) {
    return "layer_0" + std::to_string(layer) + "/head_0" + std::to_string(head) + ".png";
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --layers/--heads draws only the chosen heads; statistics stay over all heads") {
    if (model.empty()) return;
    const std::string files =
        " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin --text \"Once upon a time\"";
    CommandResult chosen =
        run_attn_viz("model -q" + files + " --layers 3-4 --heads L1H2,l1h5-7,1:0 --html --out " + (dir / "chosen"));
    REQUIRE_MESSAGE(chosen.exit_code == 0, chosen.output);
    std::set<std::string> expected;
    for (int layer : {3, 4})
        for (int h = 0; h < 8; ++h) expected.insert(picture(layer, h));
    for (int h : {0, 2, 5, 6, 7}) expected.insert(picture(1, h));
    CHECK(head_pictures(dir / "chosen") == expected);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "chosen/stats.json"));
    CHECK(stats["heads"].size() == 40);
    CHECK(fs::exists(dir / "chosen/correlation.png"));
    // report.html: the chosen layers, in each the chosen heads by number; statistics of all 40.
    const nlohmann::json data = report_data(read_text(dir / "chosen/report.html"));
    REQUIRE(data["layers"].size() == 3);
    CHECK(data["layers"][0]["number"] == 1);
    CHECK(data["layers"][1]["number"] == 3);
    CHECK(data["layers"][2]["number"] == 4);
    nlohmann::json layer_1_heads = nlohmann::json::array();
    for (const auto& head : data["layers"][0]["heads"]) layer_1_heads.push_back(head["number"]);
    CHECK(layer_1_heads == nlohmann::json::array({0, 2, 5, 6, 7}));
    CHECK(data["layers"][1]["heads"].size() == 8);
    CHECK(data["stats"]["heads"].size() == 40);
    const std::string html = read_text(dir / "chosen/report.html");
    CHECK(html.find("stories260K.bin (llama, 5 layers x 8 heads)") != std::string::npos);
    CHECK(html.find("<td id=\"about-input\">Once upon a time</td>") != std::string::npos);

    // The overview has a row per chosen layer: shorter than the whole model's five.
    CommandResult all = run_attn_viz("model -q" + files + " --out " + (dir / "all"));
    REQUIRE_MESSAGE(all.exit_code == 0, all.output);
    CHECK(head_pictures(dir / "all").size() == 40);
    CHECK(read_text(dir / "all/stats.json").size() > 0);
    const auto png_height = [](const fs::path& path) {
        const std::string bytes = read_text(path);
        REQUIRE(bytes.size() > 24);
        return (static_cast<unsigned char>(bytes[20]) << 24) | (static_cast<unsigned char>(bytes[21]) << 16) |
               (static_cast<unsigned char>(bytes[22]) << 8) | static_cast<unsigned char>(bytes[23]);  // IHDR height
    };
    CHECK(png_height(dir / "chosen/overview.png") < png_height(dir / "all/overview.png"));
    // The statistics are those of the whole model whatever is drawn.
    nlohmann::json chosen_heads = stats["heads"],
                   all_heads = nlohmann::json::parse(read_text(dir / "all/stats.json"))["heads"];
    CHECK(chosen_heads == all_heads);

    // Layer by layer (--stream-layers) honours the selection too.
    CommandResult streamed =
        run_attn_viz("model -q" + files + " --stream-layers --heads L2H3 --out " + (dir / "streamed"));
    REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
    CHECK(head_pictures(dir / "streamed") == std::set<std::string>{picture(2, 3)});
    CHECK(fs::exists(dir / "streamed/overview.png"));
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --layers/--heads: a selection outside the model or not in the grammar is a usage error naming the shape") {
    if (model.empty()) return;
    const std::string files =
        " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin --text \"Once upon a time\"";
    const std::string shape = "the model has 5 layers (0-4) of 8 heads (0-7)";
    const std::pair<std::string, std::string> cases[] = {
        {"--heads L5H0", "--heads 'L5H0': layer 5 is out of range: " + shape},
        {"--heads 1:8", "--heads '1:8': head 8 is out of range: " + shape},
        {"--heads L0H2-9", "--heads 'L0H2-9': head 9 is out of range: " + shape},
        {"--layers 2-7", "--layers '2-7': layer 7 is out of range: " + shape},
        {"--layers 3-1", "--layers '3-1': expected a layer N or a range of layers A-B (e.g. 3,5-7)"},
        {"--layers 1,,2", "--layers '': expected a layer N or a range of layers A-B (e.g. 3,5-7)"},
        {"--heads L1X2", "--heads 'L1X2': expected LxHy, LxHa-b, x:y or x:a-b (e.g. L3H1,L4H0-7)"},
        {"--heads L1H", "--heads 'L1H': expected LxHy, LxHa-b, x:y or x:a-b (e.g. L3H1,L4H0-7)"},
        {"--heads 3", "--heads '3': expected LxHy, LxHa-b, x:y or x:a-b (e.g. L3H1,L4H0-7)"},
    };
    for (const auto& [option, message] : cases) {
        CAPTURE(option);
        CommandResult r = run_attn_viz("model -q" + files + " " + option + " --out " + (dir / "out"));
        CHECK(r.exit_code == 2);
        CHECK_MESSAGE(r.output.find(message) != std::string::npos, r.output);
        CHECK_FALSE(fs::exists(dir / "out"));
    }
    write_text(dir / "c.jsonl", "{\"text\": \"Once upon a time\"}\n");
    CommandResult corpus =
        run_attn_viz("model -q --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                     "/tok512.bin --inputs " + (dir / "c.jsonl") + " --layers 1 --out " + (dir / "out"));
    CHECK(corpus.exit_code == 2);
    CHECK(corpus.output.find("--layers") != std::string::npos);
}

}  // TEST_SUITE("model")
