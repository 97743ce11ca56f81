// compare reads every layer format run reads (here an attn-viz/weights@1 JSON against a BERT
// safetensors checkpoint of the same layer, and .npy embeddings as the input), records its
// provenance, and draws the heads that changed most with --diff-pictures N.
#include <algorithm>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "bert_layer_tensors.hpp"
#include "cli_fixtures.hpp"
#include "layer_weights.hpp"
#include "safetensors.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// Layers as a BERT checkpoint (torch Linear weights are [out, in]), layers[l] as layer l.
void write_bert_layers(const std::string& path, const std::vector<LayerWeights>& layers) {
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (size_t l = 0; l < layers.size(); ++l) {
        const auto layer = bert_layer_tensors(layers[l], "encoder.layer." + std::to_string(l) + ".");
        tensors.insert(tensors.end(), layer.begin(), layer.end());
    }
    write_safetensors(path, tensors);
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("compare takes a JSON layer against the same layer in a safetensors checkpoint: every head agrees") {
    ScratchDir dir;
    const LayerWeights w = random_layer(16, 4, 4, false, true);
    write_weights_file(dir / "w.json", w);
    const LayerWeights other = random_layer(16, 4, 4, false, true);
    write_bert_layers(dir / "m.safetensors", {other, other, w});
    write_npy(dir / "x.npy", random_tensor({7, 16}));
    const CommandResult r = run_attn_viz("compare " + (dir / "w.json") + " " + (dir / "m.safetensors") +
                                         " --layout bert --layer 2 --num-heads 4 --input " + (dir / "x.npy") +
                                         " --fail-above 1e-4 --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "out/compare.json"));
    REQUIRE(c["heads"].size() == 4);
    for (const auto& head : c["heads"]) CHECK(head["map_js_distance"].get<double>() < 1e-4);
    std::set<std::string> read;
    for (const auto& input : c["provenance"]["inputs"])
        read.insert(fs::path(input["path"].get<std::string>()).filename());
    CHECK(read == std::set<std::string>{"m.safetensors", "w.json", "x.npy"});
    // Without --layout the checkpoint cannot be read: the usual hint.
    const CommandResult no_layout =
        run_attn_viz("compare -q " + (dir / "w.json") + " " + (dir / "m.safetensors") + " --input " + (dir / "x.npy"));
    CHECK(no_layout.exit_code == 2);
    CHECK(no_layout.output.find("(pass --layout)") != std::string::npos);
}

TEST_CASE("compare --diff-pictures N draws the N heads with the largest map JS distance, and needs --out") {
    ScratchDir dir;
    const LayerWeights a = random_layer(16, 4, 4, false, true);
    LayerWeights b = a;
    b.w_q = random_tensor({16, 16}, 1.0f);  // every head's queries change, each by its own amount
    write_weights_file(dir / "a.json", a);
    write_bert_layers(dir / "b.safetensors", {b});
    write_layer_fixture(dir, 16, 4, 9);  // x.json, 9 labelled tokens (its w.json is not used)
    const std::string compare = "compare -q " + (dir / "a.json") + " " + (dir / "b.safetensors") +
                                " --layout bert --num-heads 4 --input " + (dir / "x.json");
    const CommandResult r = run_attn_viz(compare + " --diff-pictures 2 --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "out/compare.json"));
    std::vector<std::pair<double, int>> by_distance;
    for (const auto& head : c["heads"])
        by_distance.emplace_back(head["map_js_distance"].get<double>(), head["head"].get<int>());
    std::sort(by_distance.rbegin(), by_distance.rend());
    std::set<std::string> expected = {"compare.json", ".attn-viz-run"};
    for (int k = 0; k < 2; ++k)
        expected.insert("diff_head_0" + std::to_string(by_distance[static_cast<size_t>(k)].second) + ".png");
    CHECK(names_in(dir / "out") == expected);

    const CommandResult no_out = run_attn_viz(compare + " --diff-pictures 2");
    CHECK(no_out.exit_code == 2);
    CHECK(no_out.output.find("--diff-pictures: the pictures go into the output directory: give --out DIR") !=
          std::string::npos);
}

}  // TEST_SUITE("cli")
