// attn-viz model's whole-model analyses on the trained stories260K: --ablate (ranked table,
// pictures, stats.json), --rollout and --flow (arrays and pictures), --map norm, and their usage
// errors (skipped with a message where ../shared is absent).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "npy.hpp"
#include "support.hpp"
#include "text_codecs.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

std::string model_files(const std::string& model) {
    return " --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
           "/tok512.bin --text \"Lily saw a big red ball.\"";
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --ablate all ranks every head; --rollout and --flow write row-stochastic and bounded maps") {
    if (model.empty()) return;
    CommandResult r =
        run_attn_viz("model -q" + model_files(model) + " --ablate all --rollout --flow --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const int64_t T = stats["num_queries"];
    // Ablation: 40 heads, ranked by the change of loss, the CSV in the same order.
    const nlohmann::json& ablation = stats["ablation"];
    CHECK(ablation["mode"] == "zero");
    CHECK(ablation["clean_loss"].get<double>() > 0);
    REQUIRE(ablation["heads"].size() == 40);
    for (size_t n = 1; n < 40; ++n) CHECK(ablation["heads"][n - 1]["delta_loss"] >= ablation["heads"][n]["delta_loss"]);
    double largest_kl = 0;
    for (const auto& head : ablation["heads"]) {
        CHECK(head["kl"].get<double>() >= 0);
        CHECK(head["loss"].get<double>() ==
              doctest::Approx(ablation["clean_loss"].get<double>() + head["delta_loss"].get<double>()));
        largest_kl = std::max(largest_kl, head["kl"].get<double>());
    }
    CHECK(largest_kl > 1e-3);
    const std::string csv = read_text(dir / "out/ablation.csv");
    CHECK(csv.rfind("rank,index,layer,head,delta_loss,kl,loss\n1," +
                        std::to_string(ablation["heads"][0]["index"].get<int>()) + ",",
                    0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 41);
    CHECK(fs::exists(dir / "out/ablation_delta_loss.png"));
    CHECK(fs::exists(dir / "out/ablation_kl.png"));
    // The output share keeps its old name beside the new one.
    for (const auto& head : stats["heads"]) CHECK(head["output_share"] == head["ablation_importance"]);
    // Rollout rows sum to 1; flow is at most 1 and 0 towards later tokens.
    const Tensor rollout = read_npy(dir / "out/rollout.npy"), flow = read_npy(dir / "out/flow.npy");
    CHECK(rollout.shape == std::vector<int64_t>{5, T, T});
    CHECK(flow.shape == std::vector<int64_t>{5, T, T});
    for (int64_t row = 0; row < 5 * T; ++row) {
        double sum = 0;
        for (int64_t j = 0; j < T; ++j) {
            sum += rollout.data[row * T + j];
            CHECK(flow.data[row * T + j] <= 1.0f + 1e-6f);
            if (j > row % T) CHECK(flow.data[row * T + j] == 0.0f);
        }
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
    CHECK(stats["attention_rollout"]["file"] == "rollout.npy");
    CHECK(stats["attention_rollout"]["last_row"].size() == 5);
    CHECK(stats["attention_flow"]["file"] == "flow.npy");
    for (int l = 0; l < 5; ++l) {
        CHECK(fs::exists(dir / ("out/rollout/layer_0" + std::to_string(l) + ".png")));
        CHECK(fs::exists(dir / ("out/flow/layer_0" + std::to_string(l) + ".png")));
    }
}

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model --ablate L:H with --ablate-mode mean, --map norm, and one-line usage errors") {
    if (model.empty()) return;
    const std::string files = model_files(model);
    CommandResult r =
        run_attn_viz("model -q" + files + " --ablate 3:1,0:2 --ablate-mode mean --map norm --out " + (dir / "mean"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "mean/stats.json"));
    CHECK(stats["ablation"]["mode"] == "mean");
    CHECK(stats["ablation"]["heads"].size() == 2);
    CHECK(!stats.contains("attention_rollout"));
    // The norm-based pictures are not the weights' pictures.
    REQUIRE(run_attn_viz("model -q" + files + " --out " + (dir / "weights")).exit_code == 0);
    CHECK(read_text(dir / "mean/layer_01/head_03.png") != read_text(dir / "weights/layer_01/head_03.png"));
    CHECK(read_text(dir / "mean/heads.csv") == read_text(dir / "weights/heads.csv"));  // statistics read the weights

    for (const char* bad : {" --ablate 5:0", " --ablate 0:8", " --ablate 0:1,0:1", " --ablate x",
                            " --ablate-mode resample --ablate all", " --flow --flow-max-tokens 3", " --map sideways"}) {
        INFO(bad);
        CommandResult refused = run_attn_viz("model -q" + files + bad + " --out " + (dir / "bad"));
        CHECK(refused.exit_code == 2);
        CHECK(std::count(refused.output.begin(), refused.output.end(), '\n') <= 2);
        CHECK(!fs::exists(dir / "bad"));
    }
    CHECK(run_attn_viz("model -q" + files + " --ablate 5:0 --out " + (dir / "bad")).output.find("--ablate") !=
          std::string::npos);
    // Corpus mode runs no whole-model analysis and draws no norm-based maps.
    write_text(dir / "c.jsonl", "{\"text\": \"Lily saw a ball.\"}\n");
    const std::string corpus = " --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                               "/tok512.bin --inputs " + (dir / "c.jsonl");
    for (const char* refused : {" --rollout", " --flow", " --map norm"}) {
        INFO(refused);
        CHECK(run_attn_viz("model -q" + corpus + refused + " --out " + (dir / "bad")).exit_code == 2);
    }
    REQUIRE(run_attn_viz("model -q" + corpus + " --out " + (dir / "corpus")).exit_code == 0);
}

TEST_CASE("run --map norm draws a_ij ||v_j W_O^h|| and leaves the statistics alone") {
    ScratchDir dir;
    REQUIRE(run_attn_viz("synth -q --out " + (dir / "layer")).exit_code == 0);
    const std::string files = " --weights " + (dir / "layer/weights.json") + " --input " + (dir / "layer/input.json");
    CommandResult norm = run_attn_viz("run -q" + files + " --map norm --out " + (dir / "norm"));
    REQUIRE_MESSAGE(norm.exit_code == 0, norm.output);
    REQUIRE(run_attn_viz("run -q" + files + " --out " + (dir / "weights")).exit_code == 0);
    CHECK(read_text(dir / "norm/head_02.png") != read_text(dir / "weights/head_02.png"));
    CHECK(read_text(dir / "norm/heads.csv") == read_text(dir / "weights/heads.csv"));
    CHECK(run_attn_viz("run -q" + files + " --map value --out " + (dir / "bad")).exit_code == 2);
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --ablate takes L1H3 lists with ranges; stdout ranks the heads with the clean loss and findings; report.html "
    "has "
    "the ablation, rollout and flow sections; --timings names rollout and flow apart") {
    if (model.empty()) return;
    const CommandResult r =
        run_attn_viz("model" + model_files(model) +
                     " --ablate L0H1,l2h0-3,4:7 --rollout --flow --html --timings --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const nlohmann::json& ablation = stats["ablation"];
    std::set<std::pair<int, int>> ablated;
    for (const auto& head : ablation["heads"]) ablated.insert({head["layer"].get<int>(), head["head"].get<int>()});
    CHECK(ablated == std::set<std::pair<int, int>>{{0, 1}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {4, 7}});
    // The heading with the clean loss, then the ranking as stats.json has it.
    char line[160];
    std::snprintf(line, sizeof line,
                  "ablation (zero, 6 heads): clean next-token loss %.4f nats; the heads that change it most:\n",
                  ablation["clean_loss"].get<double>());
    const size_t heading = r.output.find(line);
    REQUIRE_MESSAGE(heading != std::string::npos, r.output);
    size_t at = heading;
    for (const auto& head : ablation["heads"]) {
        const std::string name =
            "L" + std::to_string(head["layer"].get<int>()) + "H" + std::to_string(head["head"].get<int>());
        std::snprintf(line, sizeof line, "  %4d  %-8s %+12.4f %10.4f\n", head["rank"].get<int>(), name.c_str(),
                      head["delta_loss"].get<double>(), head["kl"].get<double>());
        const size_t found = r.output.find(line, at);
        CHECK_MESSAGE(found != std::string::npos, line);
        if (found != std::string::npos) at = found;
    }
    // The findings: the top head and the clean loss, as stats.json says them; rollout and flow too.
    REQUIRE(ablation["findings"].size() == 2);
    const auto& top = ablation["heads"][0];
    const std::string top_name =
        "L" + std::to_string(top["layer"].get<int>()) + "H" + std::to_string(top["head"].get<int>());
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
    CHECK(stats["attention_rollout"]["findings"][0].get<std::string>().rfind(
              "rollout: after the last layer (4), the last position", 0) == 0);
    CHECK(stats["attention_flow"]["findings"][0].get<std::string>().rfind(
              "flow: after the last layer (4), the last position", 0) == 0);
    // Each stage by what it is.
    for (const char* stage : {"\n  ablation ", "\n  rollout ", "\n  flow ", "\n  weight similarity "})
        CHECK_MESSAGE(r.output.find(stage) != std::string::npos, stage);
    // The share column says what it is.
    CHECK(r.output.find(" share ") != std::string::npos);
    CHECK(r.output.find(" ablate ") == std::string::npos);
    // A head outside the model is named in the same notation.
    const CommandResult bad =
        run_attn_viz("model -q" + model_files(model) + " --ablate L0H1,L9H0 --out " + (dir / "bad"));
    CHECK(bad.exit_code == 2);
    CHECK(bad.output.find("head L9H0 is out of range: the model has 5 layers of 8 heads") != std::string::npos);
}

}  // TEST_SUITE("model")
