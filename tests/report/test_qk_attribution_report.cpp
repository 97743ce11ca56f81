// QK attribution's outputs: the ranking, the finding's sentence, qk_attribution.csv and the
// stats.json entry of a hand-made attribution (numbers exact in binary), the same bytes on a
// second write, and the picture and files of a random model's attribution.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#include "attention/random_llama.hpp"
#include "output_dir.hpp"
#include "qk_attribution_report.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// Head L2H1 from position 5 to 3: four components a side, score 1.75.
QkAttribution hand_made() {
    QkAttribution a;
    a.layer = 2, a.head = 1, a.kv_head = 0, a.query_position = 5, a.key_position = 3;
    a.query_components = {"embed", "L0H0", "L1 mlp", "query bias"};
    a.key_components = {"embed", "L0H0", "L1 mlp", "key bias"};
    a.terms = {0.5, -0.25, 0.125, 0, 1.0, 2.0, -0.5, 0.25, 0.0, -3.0, 0.75, 0, 0.25, 0.5, 0, 0.125};
    a.scale = 0.5, a.score = 1.75, a.term_sum = 1.75, a.attention = 0.6;
    return a;
}

const std::vector<std::string> labels = {"<s>", "Lily", " saw", " red", " big", " ball"};

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

}  // namespace

TEST_CASE("QK attribution's ranking, totals and finding") {
    const QkAttribution a = hand_made();
    CHECK(a.key_totals() == std::vector<double>{1.75, -0.75, 0.375, 0.375});
    CHECK(a.query_totals() == std::vector<double>{0.375, 2.75, -2.25, 0.875});
    CHECK(dominant_component(a.key_totals()) == 0);
    CHECK(dominant_component(a.query_totals()) == 1);
    CHECK(dominant_component({1.0, -2.0, 2.0}) == 1);  // the first of equal magnitudes
    const std::vector<QkPair> pairs = ranked_qk_pairs(a);
    REQUIRE(pairs.size() == 16);
    // By |term|, equal ones in matrix order: -3, 2, 1, 0.75, then 0.5 (embed x embed before L0H0 x L1 mlp).
    const std::vector<std::pair<int64_t, int64_t>> first = {{2, 1}, {1, 1}, {1, 0}, {2, 2}, {0, 0}, {1, 2}, {3, 1}};
    for (size_t r = 0; r < first.size(); ++r) {
        CHECK(pairs[r].query == first[r].first);
        CHECK(pairs[r].key == first[r].second);
    }
    CHECK(pairs.back().term == 0.0);
    CHECK(qk_attribution_finding(a, labels) ==
          "L2H1 attends from ' ball' (position 5) to ' red' (position 3), weight 0.6 (score 1.75), mostly through "
          "embed on the key side (+1.75, 100% of the score) and L0H0 on the query side (+2.75, 157%); the largest "
          "pair is L1 mlp x L0H0 (-3)");
    CHECK(qk_attribution_findings({a, a}, labels).size() == 2);
    // Without labels the positions name the tokens.
    CHECK(qk_attribution_finding(a, {}).find("from token 5 (position 5) to token 3 (position 3)") != std::string::npos);
}

TEST_CASE("QK attribution's CSV and stats.json entry, the same bytes each time") {
    const QkAttribution a = hand_made();
    ScratchDir dir;
    std::string first_csv;
    for (const std::string run : {"one", "two"}) {
        ReportOptions options;
        options.pictures = false;
        OutputDir out(dir / run, false);
        const nlohmann::json stats = write_qk_attribution_outputs(out, {a}, labels, options);
        out.commit();
        const std::string csv = read_text(dir / (run + "/qk_attribution.csv"));
        CHECK(!std::filesystem::exists(dir / (run + "/qk_attribution_L2H1.png")));
        if (first_csv.empty()) {
            first_csv = csv;
            const std::vector<std::string> lines = lines_of(csv);
            REQUIRE(lines.size() == 17);
            CHECK(lines[0] == "head,query_position,key_position,rank,query_component,key_component,term,share");
            CHECK(lines[1] == "L2H1,5,3,1,\"L1 mlp\",\"L0H0\",-3,-1.7142857142857142");
            CHECK(lines[2] == "L2H1,5,3,2,\"L0H0\",\"L0H0\",2,1.1428571428571428");
            CHECK(lines[16].find("L2H1,5,3,16,") == 0);
            REQUIRE(stats["qk_attribution"].size() == 1);
            const nlohmann::json& e = stats["qk_attribution"][0];
            CHECK(e["name"] == "L2H1");
            CHECK(e["layer"] == 2);
            CHECK(e["head"] == 1);
            CHECK(e["kv_head"] == 0);
            CHECK(e["query_position"] == 5);
            CHECK(e["query_token"] == " ball");
            CHECK(e["key_position"] == 3);
            CHECK(e["key_token"] == " red");
            CHECK(e["score"] == 1.75);
            CHECK(e["term_sum"] == 1.75);
            CHECK(e["attention"] == 0.6);
            CHECK(e["scale"] == 0.5);
            REQUIRE(e["top_pairs"].size() == 10);
            CHECK(e["top_pairs"][0]["query_component"] == "L1 mlp");
            CHECK(e["top_pairs"][0]["key_component"] == "L0H0");
            CHECK(e["top_pairs"][0]["term"] == -3.0);
            CHECK(e["top_pairs"][0]["share"].get<double>() == doctest::Approx(-3.0 / 1.75));
            REQUIRE(e["key_totals"].size() == 4);
            CHECK(e["key_totals"][0] == nlohmann::json{{"component", "embed"}, {"total", 1.75}, {"share", 1.0}});
            CHECK(e["key_totals"][3]["component"] == "key bias");
            CHECK(e["query_totals"][1]["total"] == 2.75);
            CHECK(e["finding"] == qk_attribution_finding(a, labels));
        } else {
            CHECK(csv == first_csv);
        }
    }
    // A score of 0 has no shares.
    QkAttribution zero = a;
    zero.score = 0;
    const nlohmann::json e = qk_attribution_json(zero, labels);
    CHECK(e["top_pairs"][0]["share"].is_null());
    CHECK(qk_attribution_finding(zero, labels).find("(+1.75, - of the score)") != std::string::npos);
}

TEST_CASE("QK attribution's outputs for two heads of a random model, with the matrix pictures") {
    OnednnBackend backend;
    WholeModel model(backend, random_model(16, 24, 3, 4, 2, 30, 16));
    const std::vector<int> tokens = random_ids(7, 30);
    const ModelRun run = model.run(tokens);
    const std::vector<QkAttribution> entries = {attribute_qk(model, run, 2, 1), attribute_qk(model, run, 1, 3, 4, 2)};
    std::vector<std::string> token_labels;
    for (int t : tokens) token_labels.push_back("t" + std::to_string(t));
    ScratchDir dir;
    OutputDir out(dir / "out", false);
    const nlohmann::json stats = write_qk_attribution_outputs(out, entries, token_labels, ReportOptions{});
    out.commit();
    const std::vector<std::string> lines = lines_of(read_text(dir / "out/qk_attribution.csv"));
    CHECK(static_cast<int64_t>(lines.size()) ==
          1 + entries[0].query_count() * entries[0].key_count() + entries[1].query_count() * entries[1].key_count());
    REQUIRE(stats["qk_attribution"].size() == 2);
    CHECK(stats["qk_attribution"][1]["name"] == "L1H3");
    CHECK(stats["qk_attribution"][1]["key_position"] == 2);
    CHECK(stats["qk_attribution"][0]["query_position"] == 6);
    for (const nlohmann::json& e : stats["qk_attribution"])
        CHECK(e["term_sum"].get<double>() == doctest::Approx(e["score"].get<double>()));
    for (const char* name : {"out/qk_attribution_L2H1.png", "out/qk_attribution_L1H3.png"}) {
        int width = 0, height = 0, channels = 0;
        unsigned char* pixels = stbi_load((dir / name).c_str(), &width, &height, &channels, 3);
        REQUIRE_MESSAGE(pixels != nullptr, name);
        // The diverging map: some cells red (positive terms), some blue (negative).
        bool red = false, blue = false;
        for (int p = 0; p < width * height; ++p) {
            const int r = pixels[3 * p], g = pixels[3 * p + 1], b = pixels[3 * p + 2];
            red |= r > 150 && b < 110 && g < 110;
            blue |= b > 150 && r < 110 && g < 150;
        }
        stbi_image_free(pixels);
        CHECK(width > 200);
        CHECK(red);
        CHECK(blue);
    }
}
