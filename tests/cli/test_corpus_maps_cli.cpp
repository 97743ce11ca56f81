// Corpus mode's pictures (docs/outputs.md, "Corpus mode"): the planted heads of `attn-viz synth`
// over a corpus, their attention by offset in stats.json's mean_maps, offsets.png, the aligned
// mean maps as a single input's pictures, and report.html with each statistic's spread.
#include <stb_image.h>  // its implementation is in test_cli_picture_colours.cpp

#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "colormap.hpp"
#include "corpus_merge_fixture.hpp"
#include "html_page_driver.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

// The mass stats.json's mean_maps gives head `n` at offset `d`.
double offset_mass(const nlohmann::json& maps, size_t n, int64_t d) {
    const int64_t first = maps["offsets"][0].get<int64_t>();
    return maps["by_offset"][n][static_cast<size_t>(d - first)].get<double>();
}

// The synth layer's input cut to its first `T` tokens, as one line of a corpus.
std::string cut_input(const nlohmann::json& input, size_t T) {
    nlohmann::json cut = input;
    cut["tokens"] = nlohmann::json(std::vector<nlohmann::json>(input["tokens"].begin(), input["tokens"].begin() + T));
    cut["embeddings"] =
        nlohmann::json(std::vector<nlohmann::json>(input["embeddings"].begin(), input["embeddings"].begin() + T));
    return cut.dump();
}

// How many pixels of the PNG at `path` have the colour viridis gives `position` in the pictures.
int64_t pixels_at(const std::string& path, double position) {
    const attn_viz::Rgb c = attn_viz::Colormap::named("viridis").raster_at(position);
    int width = 0, height = 0, channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 3);
    REQUIRE(pixels);
    int64_t count = 0;
    for (size_t i = 0; i < static_cast<size_t>(width) * height * 3; i += 3)
        count += pixels[i] == c.r && pixels[i + 1] == c.g && pixels[i + 2] == c.b;
    stbi_image_free(pixels);
    return count;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("run --inputs: the planted heads' mean maps, by offset and (one length) as maps; report.html with spreads") {
    ScratchDir dir;
    REQUIRE(run_attn_viz("synth -q --out " + (dir / "layer")).exit_code == 0);
    const nlohmann::json input = nlohmann::json::parse(read_text(dir / "layer/input.json"));
    const size_t T = input["tokens"].size();
    REQUIRE(T == 12);
    write_text(dir / "aligned.jsonl", input.dump() + "\n" + cut_input(input, T) + "\n");
    write_text(dir / "mixed.jsonl", input.dump() + "\n" + cut_input(input, 1) + "\n" + cut_input(input, 7) + "\n");
    const std::string run = "run -q --weights " + (dir / "layer/weights.json");

    // One length: the mean maps of every head, the overview, the offsets and the page.
    CommandResult r = run_attn_viz(run + " --inputs " + (dir / "aligned.jsonl") + " --html --out " + (dir / "a"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* file : {"head_00.png", "head_05.png", "overview.png", "offsets.png", "report.html"})
        CHECK_MESSAGE(fs::exists(dir / (std::string("a/") + file)), file);
    nlohmann::json maps = read_stats(dir / "a")["mean_maps"];
    CHECK(maps["aligned"] == true);
    CHECK(maps["aligned_length"] == 12);
    CHECK(maps["sequences"] == 2);
    CHECK(maps["offsets"].front() == -11);  // not causal: d = query - key from -(T-1) to T-1
    CHECK(maps["offsets"].back() == 11);
    REQUIRE(maps["by_offset"].size() == 6);
    // H0 previous-token (the first row, with no previous token, looks elsewhere), H3 self, H4
    // next-token (the last row likewise), H1 the first token (offset i from row i), H2 uniform.
    CHECK(offset_mass(maps, 0, 1) >= 10.99 / 12);
    CHECK(offset_mass(maps, 3, 0) >= 0.999);
    CHECK(offset_mass(maps, 4, -1) >= 10.99 / 12);
    for (int64_t d = 0; d < 12; ++d) CHECK(offset_mass(maps, 1, d) == doctest::Approx(1.0 / 12).epsilon(1e-3));
    CHECK(offset_mass(maps, 2, 0) == doctest::Approx(1.0 / 12).epsilon(1e-3));
    CHECK(offset_mass(maps, 2, 11) == doctest::Approx(1.0 / 144).epsilon(1e-3));
    // offsets.png on 0..1: one cell at the top (H3 at 0), three at 11/12 (H0 at +1, H4 and H5 at
    // -1), as many pixels each (give or take the colorbar's row of each colour).
    const int64_t top = pixels_at(dir / "a/offsets.png", 1.0), previous = pixels_at(dir / "a/offsets.png", 11.0 / 12);
    CHECK(top > 400);
    CHECK(static_cast<double>(previous) / static_cast<double>(top) == doctest::Approx(3.0).epsilon(0.1));
    // The self head's mean map: 12 cells of weight 1 on the diagonal, 132 of 0.
    const int64_t diagonal = pixels_at(dir / "a/head_03.png", 1.0), off = pixels_at(dir / "a/head_03.png", 0.0);
    CHECK(diagonal > 400);
    CHECK(static_cast<double>(off) / static_cast<double>(diagonal) == doctest::Approx(11.0).epsilon(0.1));
    // report.html: the mean maps by position, then the offsets, and each statistic's std beside its mean.
    const nlohmann::json data = report_data(read_text(dir / "a/report.html"));
    CHECK(data["name"] == "attention");
    REQUIRE(data["more_maps"].size() == 1);
    CHECK(data["more_maps"][0]["name"] == "offsets");
    REQUIRE(data["stats"]["heads"].size() == 6);
    CHECK(data["stats"]["heads"][0].contains("entropy_std"));
    CHECK(!data["stats"]["heads"][0].contains("std"));
    const std::string chromium = chromium_or_skip();
    if (!chromium.empty()) {
        const nlohmann::json seen = drive_report(chromium, dir, read_text(dir / "a/report.html"),
                                                 "return {headings: document.querySelectorAll('h2').length, "
                                                 "std: document.body.textContent.indexOf('entropy_std') >= 0};");
        CHECK(seen["std"] == true);
        CHECK(seen["headings"].get<int>() > 1);
    }

    // Lengths 12, 1 and 7: the offsets only (the longest sequence's range), no per-head maps.
    r = run_attn_viz(run + " --inputs " + (dir / "mixed.jsonl") + " --html --out " + (dir / "m"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(!fs::exists(dir / "m/head_00.png"));
    CHECK(!fs::exists(dir / "m/overview.png"));
    CHECK(fs::exists(dir / "m/offsets.png"));
    maps = read_stats(dir / "m")["mean_maps"];
    CHECK(maps["aligned"] == false);
    CHECK(maps["aligned_length"].is_null());
    CHECK(maps["max_length"] == 12);
    CHECK(offset_mass(maps, 3, 0) >= 0.999);  // self, at every length
    CHECK(report_data(read_text(dir / "m/report.html"))["name"] == "offsets");

    // --stats-only keeps no maps.
    r = run_attn_viz(run + " --inputs " + (dir / "mixed.jsonl") + " --stats-only --out " + (dir / "s"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(!read_stats(dir / "s").contains("mean_maps"));
    CHECK(!fs::exists(dir / "s/offsets.png"));
}

TEST_CASE(
    "model --inputs of one length: shards merge to the single run's mean maps, pictures byte for byte, and page") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    std::string corpus;
    for (int n = 0; n < 5; ++n) {
        std::string ids = "1";
        for (int k = 0; k < 5; ++k) ids += ", " + std::to_string(3 + rng()() % 260);
        corpus += "{\"tokens\": [" + ids + "]}\n";
    }
    write_text(dir / "c.jsonl", corpus);
    check_shards_merge_to_single_run(dir, model + " --inputs " + (dir / "c.jsonl"), 2, 5);
    CHECK(fs::exists(dir / "single/layer_01/head_01.png"));
    CHECK(read_stats(dir / "merged")["mean_maps"]["aligned_length"] == 6);
    // merge --html writes the single run's page (but for the provenance and the shards covered).
    CommandResult r = run_attn_viz(model + " -q --inputs " + (dir / "c.jsonl") + " --html --out " + (dir / "page"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q " + (dir / "p0.json") + " " + (dir / "p1.json") + " --html --out " +
                     (dir / "merged_page"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    nlohmann::json single = report_data(read_text(dir / "page/report.html")),
                   merged = report_data(read_text(dir / "merged_page/report.html"));
    for (nlohmann::json* page : {&single, &merged})
        (*page)["stats"].erase("provenance"), (*page)["stats"].erase("corpora");
    check_same_statistics(single, merged);
    // Partials that keep no maps give no page.
    r = run_attn_viz(model + " -q --inputs " + (dir / "c.jsonl") + " --stats-only --out " + (dir / "plain") +
                     " --save-partial " + (dir / "plain.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q " + (dir / "plain.json") + " --html --out " + (dir / "no_page"));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find("--html: the partials keep no mean maps") != std::string::npos, r.output);
    CHECK(!fs::exists(dir / "no_page"));
}

TEST_CASE("run and model --help say what --inputs draws") {
    for (const char* command : {"run --help", "model --help"}) {
        const CommandResult help = run_attn_viz(command);
        CHECK(help.exit_code == 0);
        for (const char* words : {"offsets.png", "each head's mean map and overview.png", "--html adds report.html"})
            CHECK_MESSAGE(help.output.find(words) != std::string::npos, command << ": " << words);
    }
}

TEST_CASE("model --inputs refuses, saying why, what corpus mode does not do") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    write_text(dir / "c.jsonl", "{\"tokens\": [1, 262, 259]}\n");
    const std::string run = model + " -q --inputs " + (dir / "c.jsonl") + " --out " + (dir / "bad");
    for (const auto& [extra, why] :
         {std::pair{" --rollout", "--generate, --rollout, --flow, --qk-attribution: not implemented over a corpus"},
          {" --dump-attention a.npy", "write one input's arrays"},
          {" --map norm", "--map norm are not implemented for a corpus's mean maps"}}) {
        CommandResult r = run_attn_viz(run + extra);
        CHECK_MESSAGE(r.exit_code == 2, extra);
        CHECK_MESSAGE(r.output.find(why) != std::string::npos, r.output);
        CHECK(r.output.find("keeps no maps") == std::string::npos);
    }
}

}  // TEST_SUITE("cli")
