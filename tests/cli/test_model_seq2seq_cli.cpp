// attn-viz model on encoder-decoder folders (random BART and T5 folders written by
// scripts/reference_hf_seq2seq.py): the three stacks' picture folders, stats.json's "stack" on
// every head and "alignment" on cross heads, --dump-attention's three arrays equal to the float64
// reference's maps, T5 with the real t5-base tokenizer.json (skipped where ../shared lacks it),
// --generate, --html's one page with the encoder, decoder and cross views, and the options an
// encoder-decoder run refuses (exit 2).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "html_page_driver.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The heads of stats.json of each stack.
std::map<std::string, int64_t> heads_per_stack(const nlohmann::json& stats) {
    std::map<std::string, int64_t> count;
    for (const nlohmann::json& head : stats["heads"]) ++count[head["stack"].get<std::string>()];
    return count;
}

// Runs attn-viz with `arguments`, which must end in a usage error whose output holds `needle`.
CommandResult expect_usage_error(const std::string& arguments, const std::string& needle) {
    const CommandResult r = run_attn_viz(arguments);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
    return r;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model on a BART folder: encoder/, decoder/ and cross/ pictures, stats.json stacks and the three dumps") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 20 --vocab 300 "
        "--source-tokens 7 --target-tokens 5 --tokenizer");
    const std::string model = dir.path().string(), out = dir / "out";
    const CommandResult r = run_attn_viz(
        "model --model " + model + " --tokens " + id_list(read_ids(dir / "source_ids.txt")) + " --target-tokens " +
        id_list(read_ids(dir / "target_ids.txt")) + " --out " + out + " --dump-attention " + (dir / "maps.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* picture : {"encoder/layer_01/head_03.png", "decoder/layer_02/head_03.png",
                                "cross/layer_02/head_00.png", "encoder/stats.json", "cross/heads.csv"})
        CHECK_MESSAGE(std::filesystem::exists(dir / ("out/" + std::string(picture))), picture);
    CHECK(!std::filesystem::exists(dir / "out/encoder/layer_02"));
    const Tensor encoder = read_npy(dir / "maps.encoder.npy"), decoder = read_npy(dir / "maps.decoder.npy"),
                 cross = read_npy(dir / "maps.cross.npy");
    CHECK(encoder.shape == std::vector<int64_t>{2, 4, 7, 7});
    CHECK(decoder.shape == std::vector<int64_t>{3, 4, 5, 5});
    CHECK(cross.shape == std::vector<int64_t>{3, 4, 5, 7});
    const Tensor expected_cross = read_npy(dir / "expected_cross_2.npy");  // [H, T, S], the last layer
    Tensor last({4, 5, 7});
    std::copy_n(cross.data.begin() + 2 * last.size(), last.size(), last.data.begin());
    CHECK(max_abs_diff(last, expected_cross) < 1e-5);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(heads_per_stack(stats) == std::map<std::string, int64_t>{{"cross", 12}, {"decoder", 12}, {"encoder", 8}});
    // Cross heads have no positions in common with their keys: no distance, previous, next or
    // self weight, and none of the labels built on them; self-attention heads have all four.
    for (const nlohmann::json& head : stats["heads"]) {
        CHECK(head.contains("entropy"));
        const bool cross_head = head["stack"] == "cross";
        CHECK(head.contains("alignment") == cross_head);
        for (const char* positional : {"mean_distance", "previous_token_mass", "next_token_mass", "self_mass"})
            CHECK_MESSAGE(head[positional].is_null() == (cross_head || (std::string(positional) == "next_token_mass" &&
                                                                        head["stack"] == "decoder")),
                          positional << " of " << head["stack"] << " L" << head["layer"] << "H" << head["head"]);
        CHECK(head["first_token_mass"].is_number());
        if (cross_head)
            for (const char* label : {"previous-token", "next-token", "self", "local"}) CHECK(head["label"] != label);
    }
    const nlohmann::json& alignment = stats["heads"].back()["alignment"];
    for (const char* key : {"entropy", "confidence", "diagonal", "monotonicity", "coverage"})
        CHECK_MESSAGE(alignment.contains(key), key);
    CHECK(stats["stacks"]["cross"]["num_queries"] == 5);
    CHECK(stats["stacks"]["cross"]["num_keys"] == 7);
    CHECK(stats["stacks"]["decoder"]["causal"] == true);
}

TEST_CASE("model on a T5 folder with t5-base's tokenizer.json: texts, the target as given, --generate") {
    const std::string tokenizer = shared_dir() + "/models/tokenizers/t5-base/tokenizer.json";
    if (!std::filesystem::exists(tokenizer)) {
        MESSAGE("skipped: " << tokenizer << " is absent");
        return;
    }
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 2 --ffn 12 --vocab 32128 "
        "--source-tokens 3 --target-tokens 3 --gated");
    std::filesystem::copy_file(tokenizer, dir / "tokenizer.json");
    const std::string model = dir.path().string();
    const CommandResult r = run_attn_viz("model --model " + model +
                                         " --text \"translate English to German: The house is wonderful.\" "
                                         "--target-text \"Das Haus ist wunderbar.\" --out " +
                                         (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["source_tokens"].front().get<std::string>().find("translate") != std::string::npos);
    CHECK(stats["source_tokens"].back() == "</s>");  // T5's post-processor
    CHECK(stats["target_tokens"].front().get<std::string>().find("Das") !=
          std::string::npos);  // as given: no start token in front
    CHECK(stats["stacks"]["cross"]["num_keys"] == stats["source_tokens"].size());
    CHECK(std::filesystem::exists(dir / "out/cross/layer_01/head_01.png"));

    const CommandResult generated =
        run_attn_viz("model --model " + model + " --text \"summarize: a house\" --generate 3 --out " + (dir / "gen"));
    REQUIRE_MESSAGE(generated.exit_code == 0, generated.output);
    CHECK(generated.output.find("greedy continuation") != std::string::npos);
    const nlohmann::json gen_stats = nlohmann::json::parse(read_text(dir / "gen/stats.json"));
    CHECK(gen_stats["target_tokens"].front() == "<pad>");  // decoder_start_token_id 0
    CHECK(gen_stats["target_tokens"].size() >= 2);
}

TEST_CASE(
    "model --html on an encoder-decoder: one report.html with the encoder, decoder and cross views and the alignment "
    "table") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 2 --ffn 20 --vocab 300 "
        "--source-tokens 9 --target-tokens 6 --tokenizer");
    const std::string out = dir / "out";
    const CommandResult r =
        run_attn_viz("model --model " + dir.path().string() + " --tokens " + id_list(read_ids(dir / "source_ids.txt")) +
                     " --target-tokens " + id_list(read_ids(dir / "target_ids.txt")) + " --html --out " + out +
                     " --dump-attention " + (dir / "maps.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* stack : {"encoder", "decoder", "cross"})
        CHECK(!std::filesystem::exists(dir / ("out/" + std::string(stack) + "/report.html")));
    const std::string html = read_text(dir / "out/report.html");
    const nlohmann::json data = report_data(html);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    REQUIRE(data["more_maps"].size() == 2);
    const nlohmann::json& encoder = data;
    const nlohmann::json &decoder = data["more_maps"][0], &cross = data["more_maps"][1];
    CHECK(encoder["name"] == "encoder");
    CHECK(decoder["name"] == "decoder");
    CHECK(cross["name"] == "cross");
    // Cross maps: target tokens down, source tokens across.
    CHECK(encoder["query_tokens"].size() == 9);
    CHECK(decoder["query_tokens"].size() == 6);
    CHECK(cross["query_tokens"].size() == 6);
    CHECK(cross["key_tokens"].size() == 9);
    CHECK(cross["row_edges"].size() == 7);
    CHECK(cross["col_edges"].size() == 10);
    CHECK(cross["layers"].size() == 2);
    CHECK(cross["layers"][1]["heads"].size() == 4);
    CHECK(html.find("cross attention (target tokens down, source tokens across)") != std::string::npos);
    // The statistics: every head of the three stacks, and the cross heads' alignment as a table.
    CHECK(data["stats"]["heads"].size() == stats["heads"].size());
    REQUIRE(data["stats"]["cross_alignment"].size() == 8);
    const nlohmann::json& row = data["stats"]["cross_alignment"][5];  // L1 H1
    CHECK(row["layer"] == 1);
    CHECK(row["head"] == 1);
    CHECK(row["monotonicity"] == stats["heads"][8 + 8 + 5]["alignment"]["monotonicity"]);

    const std::string chromium = chromium_or_skip();
    if (chromium.empty()) return;
    // In the cross view, layer 1 head 2, query 4: the strongest source key marked is the dump's.
    const nlohmann::json shown = drive_report(chromium, dir, html, R"(
function choose(id, value) { var s = document.getElementById(id); s.value = value; s.dispatchEvent(new Event('change')); }
choose('view-cross-layer', '1'); choose('view-cross-head', '2');
document.querySelector('#view-cross .view-query[data-index="4"]').click();
var first = document.querySelector('#view-cross .view-key[data-rank="1"]');
return {views: document.querySelectorAll('.view-body').length, key: Number(first.getAttribute('data-index')),
        weight: Number(first.getAttribute('data-weight')), tables: document.querySelectorAll('#tables table').length};
)");
    CAPTURE(shown.dump());
    CHECK(shown["views"] == 3);
    const Tensor maps = read_npy(dir / "maps.cross.npy");  // [L, H, T, S]
    const float* row_weights = maps.ptr() + ((1 * 4 + 2) * 6 + 4) * 9;
    const float strongest = *std::max_element(row_weights, row_weights + 9);
    float global_top = 0;  // --scale global: one range, 0 to the largest weight of the three stacks
    for (const char* stack : {"encoder", "decoder", "cross"}) {
        const Tensor all = read_npy(dir / ("maps." + std::string(stack) + ".npy"));
        global_top = std::max(global_top, *std::max_element(all.data.begin(), all.data.end()));
    }
    CHECK(row_weights[shown["key"].get<int>()] >= strongest - global_top / 254);  // within a code step of the largest
    CHECK(std::abs(shown["weight"].get<double>() - row_weights[shown["key"].get<int>()]) <= global_top / 254 + 1e-3);
}

TEST_CASE(
    "model --ablate on an encoder-decoder: each stack's ablation in its folder, the zeroed head's loss equal to the "
    "float64 head mask's") {
    for (const std::string stack : {"encoder", "decoder", "cross"}) {
        CAPTURE(stack);
        ScratchDir dir;
        make_reference_folder(
            dir, "reference_hf_seq2seq.py",
            "--model-type t5 --d-model 12 --heads 3 --head-dim 4 --encoder-layers 2 --decoder-layers 2 --ffn 10 "
            "--vocab 300 --tokenizer --source-tokens 6 --target-tokens 7 --zero-head " +
                stack + ":1:2");
        const std::vector<int> target = read_ids(dir / "target_ids.txt");
        const std::string other = stack == "encoder" ? "decoder" : "encoder";
        const CommandResult r = run_attn_viz("model --model " + dir.path().string() + " --tokens " +
                                             id_list(read_ids(dir / "source_ids.txt")) + " --target-tokens " +
                                             id_list(read_ids(dir / "target_ids.txt")) + " --ablate " + stack +
                                             "/L1H2," + other + "/all --out " + (dir / "out"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const CommandResult unnamed =
            run_attn_viz("model --model " + dir.path().string() +
                         " --tokens 1,2 --target-tokens 0,1 --ablate L0H0 --out " + (dir / "o"));
        CHECK(unnamed.exit_code == 2);
        CHECK_MESSAGE(unnamed.output.find("--ablate: heads 'L0H0': 'L0H0' names no stack") != std::string::npos,
                      unnamed.output);
        CHECK_MESSAGE(r.output.find(stack + ": ablation (zero): removing") != std::string::npos, r.output);
        for (const std::string& file :
             {stack + "/ablation.csv", stack + "/ablation_delta_loss.png", other + "/ablation_kl.png"})
            CHECK_MESSAGE(std::filesystem::exists(dir / ("out/" + file)), file);
        const std::string third = stack == "cross" ? "decoder" : "cross";
        CHECK(!std::filesystem::exists(dir / ("out/" + third + "/ablation.csv")));
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        const nlohmann::json& ablation = stats["ablation"];
        CHECK(ablation[other]["heads"].size() == 6);
        REQUIRE(ablation[stack]["heads"].size() == 1);
        // The teacher-forced target loss of both reference logits, in double.
        double losses[2] = {0, 0};
        const char* files[2] = {"expected_logits.npy", "expected_logits_zeroed.npy"};
        for (int k = 0; k < 2; ++k) {
            const Tensor logits = read_npy(dir / files[k]);
            const int64_t V = logits.dim(1);
            for (size_t t = 0; t + 1 < target.size(); ++t) {
                const float* row = logits.ptr() + static_cast<int64_t>(t) * V;
                double top = row[0], sum = 0;
                for (int64_t v = 0; v < V; ++v) top = std::max(top, double(row[v]));
                for (int64_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - top);
                losses[k] += top + std::log(sum) - row[target[t + 1]];
            }
            losses[k] /= static_cast<double>(target.size() - 1);
        }
        CHECK(ablation[stack]["clean_loss"].get<double>() == doctest::Approx(losses[0]).epsilon(1e-5));
        const nlohmann::json& head = ablation[stack]["heads"][0];
        CHECK(head["layer"] == 1);
        CHECK(head["head"] == 2);
        CHECK(head["loss"].get<double>() == doctest::Approx(losses[1]).epsilon(1e-5));
        CHECK(head["delta_loss"].get<double>() == doctest::Approx(losses[1] - losses[0]).epsilon(1e-4).scale(1.0));
    }
}

TEST_CASE(
    "model on an encoder-decoder refuses each option that does not apply to it, saying why, and a decoder refuses a "
    "target (exit 2)") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 20 "
        "--source-tokens 2 --target-tokens 2");
    const std::string model = "model --model " + dir.path().string() + " ", run = model + "--tokens 1,2,3 ";
    const std::string target = "--target-tokens 0,1 --out " + (dir / "o") + " ";
    write_text(dir / "corpus.txt", "1 2\n");
    // Each refusal names the option and says why, on one line.
    for (const auto& [command, needle] : std::vector<std::pair<std::string, std::string>>{
             {run + target + "--logit-attribution",
              "--logit-attribution does not apply to an encoder-decoder model (t5): encoder heads reach the logits "
              "only through cross attention"},
             {run + target + "--patch-from-tokens 1,2,4",
              "--patch-from-tokens does not apply to an encoder-decoder model (t5): the corrupted run would need its "
              "own "
              "source and target"},
             {run + target + "--composition",
              "--composition does not apply to an encoder-decoder model (t5): it composes heads within one residual "
              "stream"},
             {run + target + "--rollout",
              "--rollout does not apply to an encoder-decoder model (t5): rollout composes one stack's maps"},
             {run + target + "--flow",
              "--flow does not apply to an encoder-decoder model (t5): flow composes one stack's maps"},
             {run + target + "--layers 0",
              "--layers does not apply to an encoder-decoder model (t5): layer numbers would be ambiguous"},
             {run + target + "--heads L0H0",
              "--heads does not apply to an encoder-decoder model (t5): LxHy names would be ambiguous"},
             {run + target + "--svg L0H0",
              "--svg does not apply to an encoder-decoder model (t5): LxHy names would be ambiguous"},
             {run + target + "--map norm",
              "--map norm does not apply to an encoder-decoder model (t5): the norm-based maps need"},
             {run + target + "--dump-output " + (dir / "out.npy"),
              "--dump-output does not apply to an encoder-decoder model (t5): there are two last outputs"},
             {model + target + "--induction 4",
              "--induction does not apply to an encoder-decoder model (t5): the test feeds a repeated random sequence"},
             {model + "--inputs " + (dir / "corpus.txt") + " --patch-from-inputs " + (dir / "corpus.txt") + " --out " +
                  (dir / "o"),
              "--patch-from-inputs does not apply to an encoder-decoder model (t5): the corrupted run would need its "
              "own source and target pair"},
             {run + target + "--generate 2",
              "--generate with --target-text or --target-tokens does not apply to an encoder-decoder model (t5): "
              "--generate makes the target"},
             {run + "--out " + (dir / "o"),
              "needs the decoder's input: --target-text, --target-tokens or --generate N"},
         }) {
        CAPTURE(command);
        const CommandResult r = expect_usage_error(command, needle);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') <= 2);  // the error line (and at most a usage hint)
        CHECK(!std::filesystem::exists(dir / "o"));
    }
    expect_usage_error(
        "compare " + dir.path().string() + " " + dir.path().string() + " --tokens 1,2",
        "compare of two encoder-decoder models needs the decoder's input: --target-text or --target-tokens");
    write_text(dir / "corpus.txt", "1 2\n");
    expect_usage_error(
        "compare " + dir.path().string() + " " + dir.path().string() + " --inputs " + (dir / "corpus.txt"),
        "is an encoder-decoder model, which `model` runs and `compare` compares over one source and target");

    ScratchDir llama;
    make_reference_folder(
        llama, "reference_hf_llama.py",
        "--model-type llama --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    expect_usage_error(
        "model --model " + llama.path().string() + " --tokens 1,2 --target-tokens 1 --out " + (dir / "o"),
        "model_type llama has no decoder input");
}

TEST_CASE(
    "ids outside an encoder-decoder's vocabulary are blamed on the option that gave them, a start token on "
    "config.json's key (exit 3)") {
    ScratchDir dir;
    // 300 embedding rows; the tokenizer has 265 tokens.
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 300 "
        "--source-tokens 2 --target-tokens 2 --tokenizer");
    const std::string folder = dir.path().string(), out = " -q --out " + (dir / "o");
    const auto check_refused = [&](const std::string& args, const std::string& message) {
        const CommandResult r = run_attn_viz(args);
        INFO(args);
        CHECK(r.exit_code == 3);
        CHECK(r.output == "attn-viz: error: " + message + "\n");
        CHECK(!std::filesystem::exists(dir / "o"));
    };
    // Not "the target: tokens: ..." nor tokenizer.json's "token id 300 is not in the vocabulary".
    check_refused("model --model " + folder + " --tokens 5,6 --target-tokens 0,300" + out,
                  "--target-tokens: token 1 is id 300, outside the vocabulary (0..299)");
    check_refused("model --model " + folder + " --tokens 5,300 --target-tokens 0,1" + out,
                  "--tokens: token 1 is id 300, outside the vocabulary (0..299)");
    check_refused("compare " + folder + " " + folder + " --tokens 5,6 --target-tokens 0,300" + out,
                  "--target-tokens: token 1 is id 300, outside the vocabulary (0..299)");
    // --generate starts from decoder_start_token_id: past the model's rows, or past the tokenizer's
    // tokens (which label it), it is config.json's.
    nlohmann::json config = nlohmann::json::parse(read_text(dir / "config.json"));
    for (const int start : {300, 280}) {
        config["decoder_start_token_id"] = start;
        write_text(dir / "config.json", config.dump());
        check_refused("model --model " + folder + " --tokens 5,6 --generate 2" + out,
                      dir / "config.json" + ": \"decoder_start_token_id\" is " + std::to_string(start) +
                          ", outside the vocabulary (0..264)");
    }
    // A run with its target given does not start from it.
    const CommandResult r = run_attn_viz("model --model " + folder + " --tokens 5,6 --target-tokens 0,1" + out);
    CHECK_MESSAGE(r.exit_code == 0, r.output);
}

}  // TEST_SUITE("model")
