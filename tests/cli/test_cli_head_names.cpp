// One head notation on the command line (L1H3 in any case, or 1:3; messages print L1H3), run
// --layer N naming its heads LN, and what model --ablate, --rollout and --flow print and put in
// report.html (the model cases are skipped with a message where ../shared is absent).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "text_codecs.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

std::string stories_files(const std::string& model) {
    return " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin --text \"Lily saw a big red ball.\"";
}

// An input of T random rows of D numbers with tokens w0, w1, ... as DIR/x.json.
void write_input(const ScratchDir& dir, int64_t T, int64_t D) { write_text(dir / "x.json", random_sequence_line(T, D)); }

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("--svg takes L0H2, l0h2, 0:2 and 2 for the same head; a bad head is refused in LxHy") {
    ScratchDir dir;
    write_layer_fixture(dir, 16, 4, 9);
    const std::string run = "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out ";
    std::set<std::string> pictures;
    for (const std::string head : {"L0H2", "l0h2", "L0h2", "0:2", "2"}) {
        INFO(head);
        const std::string out = dir / ("out_" + std::to_string(pictures.size()));
        const CommandResult r = run_attn_viz(run + out + " --svg " + head);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        pictures.insert(read_text(out + "/head_02.svg"));
    }
    CHECK(pictures.size() == 1);
    const CommandResult bad = run_attn_viz(run + (dir / "bad") + " --svg L0H7");
    CHECK(bad.exit_code == 2);
    CHECK(bad.output == "attn-viz: error: svg head L0H7 is out of range: the layer has 4 heads\n");
    CHECK_FALSE(fs::exists(dir / "bad"));
}

TEST_CASE("compare --fail-above names the failing heads as LxHy, with the layer compared") {
    ScratchDir dir;
    write_layer_fixture(dir, 16, 4, 9);
    write_weights_file(dir / "b.json", random_layer(16, 4, 4, false, true));
    const CommandResult r = run_attn_viz("compare -q " + (dir / "w.json") + " " + (dir / "b.json") + " --input " + (dir / "x.json") +
                                         " --fail-above 0");
    CHECK(r.exit_code == 1);
    for (int h = 0; h < 4; ++h) CHECK(r.output.find("attn-viz: L0H" + std::to_string(h) + ": js_distance ") != std::string::npos);
    CHECK(r.output.find("head ") == std::string::npos);
}

}  // TEST_SUITE("cli")

TEST_SUITE("model") {

TEST_CASE("run --layer N names its heads LN in the table, the findings and stats.json, and --svg LNHx draws them") {
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (hf.empty()) return;
    ScratchDir dir;
    write_input(dir, 12, 64);
    const std::string run = "run --weights " + hf + "/model.safetensors --layout llama --layer 3 --input " + (dir / "x.json");
    const CommandResult r = run_attn_viz(run + " --out " + (dir / "out") + " --svg L3H5");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    REQUIRE(stats["heads"].size() == 8);
    for (const auto& head : stats["heads"]) CHECK(head["layer"] == 3);
    for (const auto& finding : stats["findings"])
        for (const auto& head : finding["heads"]) CHECK(head["layer"] == 3);
    // Table rows start with the layer number; findings name L3Hx and never L0Hx.
    for (int h = 0; h < 8; ++h) {
        char row[32];
        std::snprintf(row, sizeof row, "\n    3    %d ", h);
        CHECK(r.output.find(row) != std::string::npos);
    }
    CHECK(r.output.find("L0H") == std::string::npos);
    CHECK(r.output.find("L3H") != std::string::npos);
    CHECK(fs::exists(dir / "out/head_05.svg"));
    const CommandResult other = run_attn_viz(run + " --out " + (dir / "other") + " --svg 2:5");
    CHECK(other.exit_code == 2);
    CHECK(other.output == "attn-viz: error: --svg '2:5': L2H5 is not drawn: run draws layer 3 only\n");
}

TEST_CASE("model --ablate takes L1H3 lists with ranges; stdout ranks the heads with the clean loss and findings; report.html has "
          "the ablation, rollout and flow sections; --timings names rollout and flow apart") {
    const std::string model = stories260k_dir();
    if (model.empty()) return;
    ScratchDir dir;
    const CommandResult r = run_attn_viz("model" + stories_files(model) + " --ablate L0H1,l2h0-3,4:7 --rollout --flow --html --timings --out " +
                                         (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const nlohmann::json& ablation = stats["ablation"];
    std::set<std::pair<int, int>> ablated;
    for (const auto& head : ablation["heads"]) ablated.insert({head["layer"].get<int>(), head["head"].get<int>()});
    CHECK(ablated == std::set<std::pair<int, int>>{{0, 1}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {4, 7}});
    // The heading with the clean loss, then the ranking as stats.json has it.
    char line[160];
    std::snprintf(line, sizeof line, "ablation (zero, 6 heads): clean next-token loss %.4f nats; the heads that change it most:\n",
                  ablation["clean_loss"].get<double>());
    const size_t heading = r.output.find(line);
    REQUIRE_MESSAGE(heading != std::string::npos, r.output);
    size_t at = heading;
    for (const auto& head : ablation["heads"]) {
        std::snprintf(line, sizeof line, "  %4d  L%dH%-6d %+12.4f %10.4f\n", head["rank"].get<int>(), head["layer"].get<int>(),
                      head["head"].get<int>(), head["delta_loss"].get<double>(), head["kl"].get<double>());
        const size_t found = r.output.find(line, at);
        CHECK_MESSAGE(found != std::string::npos, line);
        if (found != std::string::npos) at = found;
    }
    // The findings: the top head and the clean loss, as stats.json says them; rollout and flow too.
    REQUIRE(ablation["findings"].size() == 2);
    const auto& top = ablation["heads"][0];
    const std::string top_name = "L" + std::to_string(top["layer"].get<int>()) + "H" + std::to_string(top["head"].get<int>());
    const std::string first = ablation["findings"][0];
    CHECK(first.find(top_name) != std::string::npos);
    CHECK(first.rfind("ablation (zero): ", 0) == 0);
    const std::string html = read_text(dir / "out/report.html");
    for (const char* key : {"ablation", "attention_rollout", "attention_flow"}) {
        INFO(key);
        REQUIRE(stats[key]["findings"].size() >= 1);
        for (const auto& finding : stats[key]["findings"]) {
            CHECK(r.output.find("  " + finding.get<std::string>() + "\n") != std::string::npos);
            CHECK(html.find("<li>" + xml_escape(finding.get<std::string>()) + "</li>") != std::string::npos);
        }
        CHECK(html.find(std::string("<section class=\"analysis\" id=\"") + key + "\">") != std::string::npos);
    }
    CHECK(stats["attention_rollout"]["findings"][0].get<std::string>().rfind("rollout: after the last layer (4), the last position", 0) == 0);
    CHECK(stats["attention_flow"]["findings"][0].get<std::string>().rfind("flow: after the last layer (4), the last position", 0) == 0);
    // Each stage by what it is.
    for (const char* stage : {"\n  ablation ", "\n  rollout ", "\n  flow ", "\n  weight similarity "})
        CHECK_MESSAGE(r.output.find(stage) != std::string::npos, stage);
    // The share column says what it is.
    CHECK(r.output.find(" share ") != std::string::npos);
    CHECK(r.output.find(" ablate ") == std::string::npos);
    // A head outside the model is named in the same notation.
    const CommandResult bad = run_attn_viz("model -q" + stories_files(model) + " --ablate L0H1,L9H0 --out " + (dir / "bad"));
    CHECK(bad.exit_code == 2);
    CHECK(bad.output.find("head L9H0 is out of range: the model has 5 layers of 8 heads") != std::string::npos);
}

}  // TEST_SUITE("model")
