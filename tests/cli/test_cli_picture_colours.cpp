// Colours that cannot mislead, as the tool writes them (issue 44 item 3): the pictures of signed
// measures on the diverging map, heads without a value hatched, correlation.png without the causal
// triangle, composition against its chance level, compare's pictures naming both models on scales
// that say how small a change is (skipped with a message where ../shared is absent).
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <filesystem>
#include <map>
#include <tuple>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "colormap.hpp"
#include "figure_head_grid.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

using Colour = std::tuple<int, int, int>;

// How many pixels of each colour the PNG at `path` has (none when it does not decode).
std::map<Colour, int64_t> colours_of(const std::string& path) {
    int width = 0, height = 0, channels = 0;
    unsigned char* pixels = stbi_load(path.c_str(), &width, &height, &channels, 3);
    std::map<Colour, int64_t> colours;
    if (!pixels) return colours;
    for (size_t i = 0; i < static_cast<size_t>(width) * height * 3; i += 3)
        ++colours[{pixels[i], pixels[i + 1], pixels[i + 2]}];
    stbi_image_free(pixels);
    return colours;
}

// Pixels of the masked cells' plain gray (text antialiasing gives a few too).
int64_t mask_pixels(const std::map<Colour, int64_t>& colours) {
    const auto found = colours.find({mask_color.r, mask_color.g, mask_color.b});
    return found == colours.end() ? 0 : found->second;
}

// Which of the diverging map's raster levels the picture uses, below and above its centre.
struct DivergingUse {
    bool below = false, above = false;
};
DivergingUse diverging_use(const std::map<Colour, int64_t>& colours) {
    const Colormap map = Colormap::named(diverging_colormap);
    DivergingUse use;
    for (int level = 0; level < raster_levels; ++level) {
        const Rgb c = map.raster_at(static_cast<double>(level) / (raster_levels - 1));
        if (!colours.count({c.r, c.g, c.b}) || std::min({c.r, c.g, c.b}) >= 235) continue;  // near white: any text
        (2 * level < raster_levels - 1 ? use.below : use.above) = true;
    }
    return use;
}

std::string story_model(const std::string& model) {
    return "model -q --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
           "/tok512.bin --text \"Once upon a time, there was a little girl named Lily. She loved to play outside in "
           "the park. One day, she saw a big, red ball.\"";
}

// The mean of a stats.json matrix over its pairs of different heads.
double mean_off_diagonal(const nlohmann::json& matrix) {
    double sum = 0;
    int pairs = 0;
    for (size_t a = 0; a < matrix.size(); ++a)
        for (size_t b = 0; b < matrix.size(); ++b)
            if (a != b) sum += matrix[a][b].get<double>(), ++pairs;
    return sum / pairs;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("correlation.png of a causal layer: the maps minus uniform attention, which unrelated heads do not share") {
    ScratchDir dir;
    write_layer_fixture(dir, 32, 8, 64, true);
    const CommandResult r = run_attn_viz(layer_fixture_run(dir) + " -q");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    // The plain correlation (kept under its key) is carried by the causal triangle's rows of
    // 1/(i + 1); the picture's matrix, centred_correlation, is not.
    const double plain = mean_off_diagonal(stats["correlation"]),
                 centred = mean_off_diagonal(stats["centred_correlation"]);
    CHECK(plain > 0.15);
    CHECK(std::abs(centred) < plain / 3);
    for (size_t a = 0; a < 8; ++a) CHECK(stats["centred_correlation"][a][a] == 1.0);
    const std::string pairs = read_text(dir / "out/pairs.csv");
    CHECK(pairs.substr(0, pairs.find('\n')).ends_with(",choice_mi,centred_correlation"));
    CHECK(std::filesystem::is_regular_file(dir / "out/correlation.png"));
}

}  // TEST_SUITE("cli")

TEST_SUITE("model") {

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --ablate: the change of loss on the diverging map, blue where removing a head lowers the "
                  "loss; heads not ablated hatched") {
    if (model.empty()) return;
    const CommandResult all = run_attn_viz(story_model(model) + " --ablate all --out " + (dir / "all"));
    REQUIRE_MESSAGE(all.exit_code == 0, all.output);
    bool lowers = false, raises = false;
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "all/stats.json"));
    for (const auto& head : stats["ablation"]["heads"]) {
        const double delta_loss = head["delta_loss"].get<double>();
        lowers |= delta_loss<0, raises |= delta_loss> 0;
    }
    REQUIRE(lowers);  // on this text removing L4H0 lowers the loss
    REQUIRE(raises);
    const DivergingUse delta = diverging_use(colours_of(dir / "all/ablation_delta_loss.png"));
    CHECK(delta.below);
    CHECK(delta.above);
    // The KL cannot be negative: on the run's colormap, not the diverging one.
    const DivergingUse kl = diverging_use(colours_of(dir / "all/ablation_kl.png"));
    CHECK(!kl.below);

    const CommandResult some = run_attn_viz(story_model(model) + " --ablate L0H1,L3H0-1 --out " + (dir / "some"));
    REQUIRE_MESSAGE(some.exit_code == 0, some.output);
    const std::map<Colour, int64_t> partial = colours_of(dir / "some/ablation_delta_loss.png");
    // The 37 heads not ablated are hatched: at least a third of their cells' pixels in the plain gray.
    const int64_t measured_all = mask_pixels(colours_of(dir / "all/ablation_delta_loss.png"));
    CHECK(mask_pixels(partial) > measured_all + 37 * 20 * 20);
    CHECK(diverging_use(partial).above);
}

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --composition: each kind's picture centred on its chance level, pairs below it blue and "
                  "above it red") {
    if (model.empty()) return;
    const CommandResult r = run_attn_viz("model -q --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                                         "/tok512.bin --tokens 1,403,407 --composition --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "out/stats.json"))["composition"];
    for (const char* kind : {"q", "k", "v"}) {
        CAPTURE(kind);
        // This model's scores spread on both sides of what random weights score (0.125 at D = 64).
        REQUIRE(c[kind]["top"][0]["score"].get<double>() > c[kind]["chance"].get<double>());
        const DivergingUse use = diverging_use(colours_of(dir / ("out/composition_" + std::string(kind) + ".png")));
        CHECK(use.below);
        CHECK(use.above);
    }
}

TEST_CASE_FIXTURE(Stories260kGgufFixture,
                  "compare's pictures name both models, draw the JS distance on a log scale with its largest value, "
                  "the correlation on the diverging map; a short input carries the too-short caveat") {
    if (gguf.empty()) return;
    const std::string models = "compare " + gguf + "/stories260K.gguf " + gguf + "/stories260K-Q8_0.gguf";
    const CommandResult r = run_attn_viz(models + " --tokens 1,403,407 --diff-pictures 1 --out " + (dir / "short"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    // As model says it: 3 tokens are too short to tell, so labels carry a "?" and their changes are guesses.
    CHECK(r.output.find("\n  too short to tell: the input has 3 tokens, labelling heads needs at least 8 (") !=
          std::string::npos);
    CHECK(r.output.find("; the labels and their changes are guesses\n") != std::string::npos);
    CHECK(r.output.find("previous-token? previous-token?") != std::string::npos);
    // The pictures are what write_head_grid_png draws of compare.json's numbers with these titles: A
    // and B named, the JS distance from 1e-4 to 1 on a log scale (a Q8_0 copy's 0.004 sits low), the
    // correlation over -1..1 on the diverging map, each with its extreme head.
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "short/compare.json"));
    std::vector<float> js, correlation, top1;
    size_t largest = 0, lowest = 0, least_agreed = 0;
    for (size_t n = 0; n < c["heads"].size(); ++n) {
        const nlohmann::json& head = c["heads"][n];
        js.push_back(head["map_js_distance"].get<float>()), correlation.push_back(head["map_correlation"].get<float>());
        top1.push_back(head["top1_agreement"].get<float>());
        largest = js[n] > js[largest] ? n : largest, lowest = correlation[n] < correlation[lowest] ? n : lowest;
        least_agreed = top1[n] < top1[least_agreed] ? n : least_agreed;
    }
    REQUIRE(js.size() == 40);
    const auto tag = [&](size_t n) {
        return fmt::format("L{}H{}", c["heads"][n]["layer"].get<int>(), c["heads"][n]["head"].get<int>());
    };
    const auto expected = [&](const std::string& file, const std::vector<float>& values, HeadGridStyle style) {
        CAPTURE(file);
        style.max_px = 1200;
        write_head_grid_png(dir / ("expected_" + file), values, 5, 8, style);
        CHECK(read_text(dir / ("short/" + file)) == read_text(dir / ("expected_" + file)));
    };
    const std::string named = "A (stories260K.gguf) and B (stories260K-Q8_0.gguf), per head";
    HeadGridStyle style;
    style.title = fmt::format("JS distance between the maps of {}; largest {:.3g} ({})", named,
                              c["heads"][largest]["map_js_distance"].get<double>(), tag(largest));
    style.value_label = "JS distance", style.colormap = "magma", style.log_scale = true, style.low = 0, style.high = 1;
    expected("js_distance.png", js, style);
    style = HeadGridStyle{};
    style.title = fmt::format("Correlation of the maps of {}; lowest {:.3g} ({})", named,
                              c["heads"][lowest]["map_correlation"].get<double>(), tag(lowest));
    style.value_label = "map correlation", style.signed_values = true, style.low = -1, style.high = 1;
    expected("map_correlation.png", correlation, style);
    style = HeadGridStyle{};
    style.title = fmt::format("Queries whose strongest key agrees in {}; lowest {:.3g} ({})", named,
                              c["heads"][least_agreed]["top1_agreement"].get<double>(), tag(least_agreed));
    style.value_label = "top-1 agreement", style.low = 0, style.high = 1;
    expected("top1_agreement.png", top1, style);

    // A text of 8 tokens and more: no caveat, no "?".
    const CommandResult story = run_attn_viz(
        models + " --text \"Once upon a time, there was a little girl named Lily.\" --out " + (dir / "story"));
    REQUIRE_MESSAGE(story.exit_code == 0, story.output);
    CHECK(story.output.find("too short to tell") == std::string::npos);
    CHECK(story.output.find("? ") == std::string::npos);
}

}  // TEST_SUITE("model")
