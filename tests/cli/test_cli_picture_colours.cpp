// Colours that cannot mislead, as the tool writes them (issue 44 item 3): the pictures of signed
// measures on the diverging map, heads without a value hatched, correlation.png without the causal
// triangle, composition against its chance level (skipped with a message where ../shared is absent).
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include <filesystem>
#include <map>
#include <tuple>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "colormap.hpp"
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

}  // TEST_SUITE("model")
