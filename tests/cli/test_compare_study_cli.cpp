// compare as a quantization study uses it, on stories260K (skipped with a message where
// ../shared/models/stories260K-gguf is absent): the summary first, the output level (KL, losses,
// top-1 next tokens, greedy continuations), pictures of whole models, heads named LxHy, and a
// 4-bit copy (scripts/quantize_gguf.py: Q4_0 of stories260K, Q4_K of a synthetic model with rows of
// 256) that moves more than Q8_0, at the heads and at the output.
#include <filesystem>
#include <numeric>
#include <regex>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "support.hpp"
#include "synthetic_gguf.hpp"

using namespace test_support;

namespace {

const std::string story =
    " --text \"Once upon a time, there was a little girl named Lily. She loved to play outside in the park.\"";

double mean_js(const nlohmann::json& compare) {
    double total = 0;
    for (const auto& head : compare["heads"]) total += head["map_js_distance"].get<double>();
    return total / static_cast<double>(compare["heads"].size());
}

// `source` quantized to `type` by scripts/quantize_gguf.py into DIR/TYPE.gguf, then compared with
// `source` over `input` (compare's --text or --tokens): its compare.json.
nlohmann::json compare_with_quantized(const std::string& source, const std::string& type, const ScratchDir& dir,
                                      const std::string& input) {
    const std::string quantized = dir / (type + ".gguf");
    const CommandResult made = run_command("/usr/bin/python3 " + source_dir() + "/scripts/quantize_gguf.py " + source +
                                           " " + quantized + " --type " + type);
    REQUIRE_MESSAGE(made.exit_code == 0, made.output);
    const CommandResult r = run_attn_viz("compare -q " + source + " " + quantized + input + " --out " + (dir / type));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    return nlohmann::json::parse(read_text(dir / (type + "/compare.json")));
}

// The 4-bit copy moves the maps and the next-token distributions more than the 8-bit one does.
void check_four_bits_move_more(const nlohmann::json& q8, const nlohmann::json& q4, const std::string& four_bit_type) {
    MESSAGE("mean JS distance per head: Q8_0 " << mean_js(q8) << ", " << four_bit_type << " " << mean_js(q4)
                                               << "; mean KL at the output: Q8_0 " << q8["output"]["mean_kl"] << ", "
                                               << four_bit_type << " " << q4["output"]["mean_kl"]);
    CHECK(mean_js(q4) > 2 * mean_js(q8));
    CHECK(q4["output"]["mean_kl"].get<double>() > 2 * q8["output"]["mean_kl"].get<double>());
    CHECK(q8["output"]["mean_kl"].get<double>() > 0);
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE_FIXTURE(
    Stories260kGgufFixture,
    "compare of two models prints a summary and the output level first, and writes them to compare.json") {
    if (gguf.empty()) return;
    const CommandResult r =
        run_attn_viz("compare " + gguf + "/stories260K.gguf " + gguf + "/stories260K-Q8_0.gguf" + story +
                     " --generate 12 --diff-pictures 3 --fail-above 0.004 --out " + (dir / "q8"));
    INFO(r.output);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.output.find("summary: 40 heads compared\n  largest change: L") != std::string::npos);
    CHECK(r.output.find("\noutput: mean KL(A || B) of next-token distributions ") != std::string::npos);
    CHECK(r.output.find("greedy continuations") != std::string::npos);
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "q8/compare.json"));
    // The summary's largest head is the first ranked and has the largest JS distance of all heads.
    const nlohmann::json& summary = c["summary"];
    REQUIRE(summary["ranked"].size() == 40);
    double largest = 0;
    for (const auto& head : c["heads"]) largest = std::max(largest, head["map_js_distance"].get<double>());
    CHECK(summary["largest"]["value"].get<double>() == largest);
    CHECK(summary["largest"]["head"] == summary["ranked"][0]["head"]);
    CHECK(summary["metric"] == "js_distance");
    const std::string largest_name = summary["largest"]["head"];
    CHECK(r.output.find("largest change: " + largest_name + ", js_distance") != std::string::npos);
    CHECK(std::regex_match(largest_name, std::regex("L[0-4]H[0-7]")));
    // --fail-above: the heads above it named LxHy on stderr, counted in the summary, exit 1 if any.
    const size_t above = summary["heads_above"].size();
    CHECK(r.exit_code == (above > 0 ? 1 : 0));
    for (const auto& name : summary["heads_above"]) {
        CHECK(r.output.find("attn-viz: " + name.get<std::string>() + ": js_distance ") != std::string::npos);
    }
    CHECK(r.output.find("limit 0.004 on js_distance: " + std::to_string(above) + " of 40 heads above") !=
          std::string::npos);
    CHECK(r.output.find("attn-viz: head ") == std::string::npos);
    // The output level: per-position KL over T positions, losses near each other, most top-1 tokens agree.
    const nlohmann::json& output = c["output"];
    const size_t T = output["kl"].size();
    CHECK(T == c["num_queries"].get<size_t>());
    const double mean = std::accumulate(output["kl"].begin(), output["kl"].end(), 0.0,
                                        [](double s, const nlohmann::json& x) { return s + x.get<double>(); }) /
                        static_cast<double>(T);
    CHECK(output["mean_kl"].get<double>() == doctest::Approx(mean));
    CHECK(output["mean_kl"].get<double>() > 0);
    CHECK(output["mean_kl"].get<double>() < 0.05);
    CHECK(std::abs(output["loss_a"].get<double>() - output["loss_b"].get<double>()) < 0.1);
    CHECK(output["top1_agreement"].get<double>() > 0.8);
    CHECK(output["generation"]["steps"] == 12);
    CHECK(output["generation"]["a"].size() <= 12);
    // Pictures of whole models: the N most changed heads, and one layers x heads picture per measure.
    for (const char* file : {"js_distance.png", "map_correlation.png", "top1_agreement.png"})
        CHECK(std::filesystem::exists(dir / (std::string("q8/") + file)));
    int diffs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir / "q8"))
        diffs += entry.path().filename().string().starts_with("diff_layer_");
    CHECK(diffs == 3);
    const std::string top = "diff_layer_0" + largest_name.substr(1, 1) + "_head_0" + largest_name.substr(3, 1) + ".png";
    CHECK(std::filesystem::exists(dir / ("q8/" + top)));
}

TEST_CASE_FIXTURE(
    Stories260kGgufFixture,
    "compare of a model with itself in another format: no change at the output, identical continuations") {
    const std::string bin = stories260k_dir();
    if (gguf.empty() || bin.empty()) return;
    const CommandResult r = run_attn_viz("compare -q " + gguf + "/stories260K.gguf " + bin + "/stories260K.bin" +
                                         story + " --generate 10 --out " + (dir / "same"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json output = nlohmann::json::parse(read_text(dir / "same/compare.json"))["output"];
    CHECK(output["mean_kl"].get<double>() < 1e-8);
    CHECK(output["loss_a"].get<double>() == doctest::Approx(output["loss_b"].get<double>()).epsilon(1e-6));
    CHECK(output["top1_agreement"] == 1.0);
    CHECK(output["generation"]["first_divergence"].is_null());
    CHECK(output["generation"]["a"] == output["generation"]["b"]);
    // --generate belongs to whole models.
    ScratchDir layers;
    write_layer_fixture(layers, 8, 2, 5);
    const CommandResult refused = run_attn_viz("compare " + (layers / "w.json") + " " + (layers / "w.json") +
                                               " --input " + (layers / "x.json") + " --generate 3");
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find("--generate continues a text with two whole models") != std::string::npos);
}

TEST_CASE_FIXTURE(Stories260kGgufFixture,
                  "a 4-bit copy of stories260K moves more than its Q8_0 copy, at the heads and at the output") {
    if (gguf.empty()) return;
    const std::string source = gguf + "/stories260K.gguf";
    check_four_bits_move_more(compare_with_quantized(source, "Q8_0", dir, story),
                              compare_with_quantized(source, "Q4_0", dir, story), "Q4_0");
}

TEST_CASE("a Q4_K copy of a model with rows of 256 moves more than its Q8_0 copy, at the heads and at the output") {
    ScratchDir dir;
    const std::string source = dir / "f32.gguf";
    make_synthetic_gguf(source, "F32", {256, 2, 4, 4, 512, 300}, static_cast<unsigned>(rng()() % 100000));
    std::string tokens = " --tokens 1";
    std::uniform_int_distribution<int> id(3, 299);
    for (int t = 1; t < 24; ++t) tokens += "," + std::to_string(id(rng()));
    check_four_bits_move_more(compare_with_quantized(source, "Q8_0", dir, tokens),
                              compare_with_quantized(source, "Q4_K", dir, tokens), "Q4_K");
}

}  // TEST_SUITE("model")
