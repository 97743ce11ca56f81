// attn-viz model on the trained stories260K (skipped with a message where ../shared is absent).
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("model") {

TEST_CASE_FIXTURE(Stories260kFixture,
                  "model writes every layer's heads, statistics over all 40 heads, and names previous-token heads") {
    if (model.empty()) return;
    CommandResult r =
        run_attn_viz("model --checkpoint " + model + "/stories260K.bin --tokenizer " + model +
                     "/tok512.bin --text \"Once upon a time, there was a little girl named Lily.\" --out " +
                     (dir / "out") + " --dump-attention " + (dir / "a.npy") + " --generate 8");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(r.output.find("\nprompt: Once upon a time, there was a little girl named Lily.\ngreedy continuation (8 "
                        "tokens): She loved") != std::string::npos);
    for (int l = 0; l < 5; ++l)
        for (int h = 0; h < 8; ++h)
            CHECK(fs::exists(dir / ("out/layer_0" + std::to_string(l) + "/head_0" + std::to_string(h) + ".png")));
    const Tensor a = read_npy(dir / "a.npy");
    REQUIRE(a.rank() == 4);
    CHECK(a.dim(0) == 5);
    CHECK(a.dim(1) == 8);
    CHECK(a.dim(2) == a.dim(3));
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    REQUIRE(stats["heads"].size() == 40);
    CHECK(stats["num_layers"] == 5);
    int previous_token_heads_in_layer_1 = 0;
    for (const auto& head : stats["heads"])
        previous_token_heads_in_layer_1 += head["layer"] == 1 && head["label"] == "previous-token";
    CHECK(previous_token_heads_in_layer_1 >= 1);
    CHECK(stats["tokens"][0] == "<s>");
}

TEST_CASE_FIXTURE(Stories260kFixture, "model takes token ids, and --induction feeds a repeated random sequence") {
    if (model.empty()) return;
    const std::string files = " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin";
    CommandResult ids = run_attn_viz("model -q" + files + " --tokens 1,403,407 --out " + (dir / "ids"));
    REQUIRE_MESSAGE(ids.exit_code == 0, ids.output);
    CHECK(nlohmann::json::parse(read_text(dir / "ids/stats.json"))["num_queries"] == 3);
    CommandResult induction = run_attn_viz("model" + files + " --induction 20 --seed 9 --out " + (dir / "ind"));
    REQUIRE_MESSAGE(induction.exit_code == 0, induction.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "ind/stats.json"));
    CHECK(stats["num_queries"] == 41);
    for (const auto& head : stats["heads"]) CHECK(head["induction"].is_number());
    for (const auto& head : stats["heads"]) CHECK(head["duplicate_token"].is_number());
    // How the input was made, so that the run can be repeated; duplicate-token scores on stdout too.
    CHECK(stats["induction_input"]["length"] == 20);
    CHECK(stats["induction_input"]["seed"] == 9);
    CHECK(stats["induction_input"]["token_ids_from"] == 259);
    CHECK(stats["induction_input"]["token_ids_to"] == 512);
    CHECK(induction.output.find("  dup induct\n") != std::string::npos);
    CHECK(induction.output.find("duplicate-token head") != std::string::npos);
    bool induction_finding = false;
    for (const auto& f : stats["findings"]) induction_finding |= f["kind"] == "induction" && f["threshold"] == 0.4;
    CHECK(induction_finding);
    CHECK(run_attn_viz("model -q" + files + " --tokens 1,99999 --out " + (dir / "bad")).exit_code == 3);
    CHECK(run_attn_viz("model -q" + files + " --out " + (dir / "bad")).exit_code == 2);
}

}  // TEST_SUITE("model")
