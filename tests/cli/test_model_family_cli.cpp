// attn-viz model and compare on random small GPT-2, GPT-NeoX and BERT Hugging Face folders with a
// small tokenizer.json (scripts/reference_hf_transformer.py): the dumped attention is the float64
// reference's, stats.json has every head, --generate is the reference's greedy continuation,
// BERT's text is [CLS] ... [SEP] and it refuses --generate, --ablate, --logit-attribution and
// patching, ablation, logit attribution, patching, composition and the other whole-model
// analyses run, and compare of a folder with itself finds nothing.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "logit_attribution_csv.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

struct FamilyCase {
    std::string arguments;  // for reference_hf_transformer.py
    int64_t layers = 0, heads = 0;
    bool decoder = true;
};

// "3,1,4": the reference's ids as --tokens takes them.
std::string token_list(const std::vector<int>& ids) {
    std::string list;
    for (int id : ids) {
        if (!list.empty()) list += ',';
        list += std::to_string(id);
    }
    return list;
}

// attention: [L, H, T, T] as --dump-attention writes it (a one-layer model too); the largest
// difference from the reference's expected_attention_L.npy ([H, T, T] each).
double attention_error(const Tensor& attention, const ScratchDir& reference, int64_t layers) {
    REQUIRE(attention.rank() == 4);
    REQUIRE(attention.dim(0) == layers);
    const int64_t per_layer = static_cast<int64_t>(attention.data.size()) / layers;
    double largest = 0;
    for (int64_t l = 0; l < layers; ++l) {
        const Tensor expected = read_npy(reference / ("expected_attention_" + std::to_string(l) + ".npy"));
        REQUIRE(static_cast<int64_t>(expected.data.size()) == per_layer);
        for (int64_t i = 0; i < per_layer; ++i)
            largest = std::max(largest, std::fabs(double(attention.data[l * per_layer + i]) - expected.data[i]));
    }
    return largest;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "model --model on GPT-2, GPT-NeoX and BERT folders: the reference's attention, every head, the greedy "
    "continuation") {
    const FamilyCase cases[] = {
        {"--model-type gpt2 --prefix --d-model 24 --heads 4 --layers 2 --ffn 37 --vocab 270 --tokens 9", 2, 4, true},
        {"--model-type gpt_neox --d-model 30 --heads 3 --layers 3 --ffn 41 --vocab 271 --tokens 7 --rotary-pct 0.4", 3,
         3, true},
        {"--model-type gpt_neox --prefix --d-model 12 --heads 1 --layers 1 --ffn 5 --vocab 270 --tokens 1 "
         "--sequential-residual "
         "--rotary-pct 1.0",
         1, 1, true},
        {"--model-type bert --prefix --d-model 16 --heads 2 --layers 3 --ffn 20 --vocab 70 --tokens 6 --eps 1e-12", 3,
         2, false},
    };
    for (const FamilyCase& c : cases) {
        CAPTURE(c.arguments);
        ScratchDir dir;
        const std::string generate = c.decoder ? " --generate 5" : "";
        make_reference_folder(dir, "reference_hf_transformer.py", c.arguments + " --tokenizer" + generate);
        const std::vector<int> ids = read_ids(dir / "ids.txt");
        const CommandResult r =
            run_attn_viz("model --model " + dir.path().string() + " --tokens " + token_list(ids) + generate +
                         " --json --out " + (dir / "out") + " --dump-attention " + (dir / "attention.npy") + " 2>&1");
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const double error = attention_error(read_npy(dir / "attention.npy"), dir, c.layers);
        MESSAGE("largest attention difference from the float64 reference: " << error);
        CHECK(error < 1e-5);
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        CHECK(stats["heads"].size() == static_cast<size_t>(c.layers * c.heads));
        CHECK(stats["tokens"].size() == ids.size());
        if (!c.decoder) continue;
        const nlohmann::json printed = nlohmann::json::parse(r.output);
        CHECK(printed["generation"]["tokens"].get<std::vector<int>>() == read_ids(dir / "expected_generation.txt"));
    }
}

TEST_CASE(
    "model --model on a BERT folder: [CLS] text [SEP], pictures without a causal mask, and no --generate, logit "
    "attribution, patching or --composition") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_transformer.py",
        "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 70 --tokens 3 --tokenizer");
    const std::string model = "model --model " + dir.path().string() + " --text \"The cat sat.\"";
    const CommandResult r =
        run_attn_viz(model + " -q --rollout --out " + (dir / "out") + " --dump-attention " + (dir / "a.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["tokens"] == nlohmann::json::array({"[CLS]", "the", "cat", "sat", ".", "[SEP]"}));
    CHECK(std::filesystem::exists(dir / "out/layer_01/head_01.png"));
    CHECK(std::filesystem::exists(dir / "out/rollout.npy"));
    // An encoder: the first token attends to the last as well.
    const Tensor attention = read_npy(dir / "a.npy");  // [L, H, T, T]
    CHECK(attention.data[static_cast<size_t>(attention.dim(3) - 1)] > 0.0f);
    // A text over the 64 positions, cut by --truncate as transformers' truncation=True: [CLS], the
    // text's first 62 tokens, [SEP].
    std::string long_text;
    for (int n = 0; n < 20; ++n) long_text += "The cat sat. ";
    const std::string long_model = "model --model " + dir.path().string() + " --text \"" + long_text + "\"";
    CHECK(run_attn_viz(long_model + " -q --stats-only --out " + (dir / "long")).exit_code == 3);
    const CommandResult cut = run_attn_viz(long_model + " --truncate -q --stats-only --out " + (dir / "long"));
    REQUIRE_MESSAGE(cut.exit_code == 0, cut.output);
    const nlohmann::json whole = nlohmann::json::parse(
        run_attn_viz("tokenize --model " + dir.path().string() + " --json --text \"" + long_text + "\"").output);
    std::vector<std::string> kept(whole["tokens"].begin(), whole["tokens"].begin() + 63);
    kept.push_back("[SEP]");
    const nlohmann::json long_stats = nlohmann::json::parse(read_text(dir / "long/stats.json"));
    CHECK(long_stats["tokens"] == nlohmann::json(kept));
    CHECK(long_stats["truncated_input"] == nlohmann::json{{"original_tokens", whole["ids"].size()}, {"tokens", 64}});
    for (const std::string option : {"--generate 3", "--logit-attribution", "--patch-from-tokens 5,6,7,8,9,10"}) {
        CAPTURE(option);
        const CommandResult refused = run_attn_viz(model + " " + option + " --out " + (dir / "refused"));
        CHECK(refused.exit_code == 2);
        CHECK(refused.output.find(option.substr(0, option.find(' ')) +
                                  " needs a model that predicts next tokens, but this is a bert "
                                  "model") != std::string::npos);
        CHECK(!std::filesystem::exists(dir / "refused"));
    }
    // Composition, as for Gemma's norm on each attention output: BERT's norm after each block scales
    // what a head writes (and the residual stream) before any later head reads it.
    const CommandResult composition = run_attn_viz(model + " --composition --out " + (dir / "refused"));
    CHECK(composition.exit_code == 2);
    CHECK(composition.output.find("--composition: composition scores do not describe this model's heads: a norm "
                                  "after each block rescales what its heads write") != std::string::npos);
    CHECK(!std::filesystem::exists(dir / "refused"));
}

TEST_CASE(
    "model --ablate, --rollout and --map norm on GPT-2 and GPT-NeoX folders; corpus mode; compare of a folder with "
    "itself") {
    std::vector<std::string> weights_fingerprints;
    for (const std::string type : {"gpt2", "gpt_neox"}) {
        CAPTURE(type);
        ScratchDir dir;
        make_reference_folder(
            dir, "reference_hf_transformer.py",
            "--model-type " + type + " --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 270 --tokens 3 --tokenizer");
        const std::string folder = dir.path().string();
        const CommandResult r =
            run_attn_viz("model -q --model " + folder + " --text \"the cat sat on the mat\" --ablate all --rollout " +
                         "--map norm --logit-attribution --composition --out " + (dir / "out"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        CHECK(stats["ablation"]["heads"].size() == 4);
        const std::vector<std::string> tokens = stats["tokens"];
        CHECK(std::count(tokens.begin(), tokens.end(), " cat") == 1);  // byte-level "Ġcat", decoded
        CHECK(std::filesystem::exists(dir / "out/ablation.csv"));
        CHECK(stats["composition"]["norm_folding"] ==
              "LayerNorm weights folded into W_Q, W_K, W_V; readers and W_O centred");
        const CommandResult patched =
            run_attn_viz("model -q --model " + folder + " --tokens 5,6,7,8 --patch-from-tokens 9,6,7,8 " +
                         "--stats-only --out " + (dir / "patched"));
        REQUIRE_MESSAGE(patched.exit_code == 0, patched.output);
        CHECK(nlohmann::json::parse(read_text(dir / "patched/stats.json"))["activation_patching"]["heads"].size() == 4);
        // Through the final LayerNorm, with its bias and every block's: the components sum to the logit.
        for (const auto& [position, sum] : logit_attribution_sums(read_text(dir / "out/logit_attribution.csv")))
            CHECK(sum == doctest::Approx(stats["logit_attribution"]["positions"][position]["logit"].get<double>())
                             .epsilon(1e-4));

        const CommandResult compared =
            run_attn_viz("compare " + folder + " " + folder + " --text \"the cat sat\" --out " + (dir / "compare") +
                         " --fail-above 0");
        REQUIRE_MESSAGE(compared.exit_code == 0, compared.output);
        const nlohmann::json doc = nlohmann::json::parse(read_text(dir / "compare/compare.json"));
        REQUIRE(doc["heads"].size() == 4);
        for (const nlohmann::json& head : doc["heads"]) CHECK(head["map_js_distance"] == 0.0);

        // Corpus mode: the partial names the model's weights by their fingerprint.
        write_text(dir / "c.jsonl", "{\"text\": \"the cat\"}\n{\"tokens\": [5, 6, 7, 8]}\n");
        const CommandResult corpus = run_attn_viz("model -q --model " + folder + " --inputs " + (dir / "c.jsonl") +
                                                  " --out " + (dir / "corpus") + " --save-partial " + (dir / "p.json"));
        REQUIRE_MESSAGE(corpus.exit_code == 0, corpus.output);
        const nlohmann::json partial = nlohmann::json::parse(read_text(dir / "p.json"));
        CHECK(partial["fingerprints"]["sequences"].size() == 2);
        weights_fingerprints.push_back(partial["fingerprints"]["weights"]);
    }
    CHECK(weights_fingerprints[0] != weights_fingerprints[1]);
}

TEST_CASE(
    "model --model with the real GPT-2 and BERT tokenizers (../shared/models/tokenizers): decoded labels, [CLS] ... "
    "[SEP]") {
    const std::string gpt2 = shared_model_dir("tokenizers/gpt2", {"encoder.json", "vocab.bpe"});
    const std::string bert = shared_model_dir("tokenizers/bert-base-uncased", {"vocab.txt", "tokenizer.json"});
    if (gpt2.empty() || bert.empty()) return;
    struct RealCase {
        std::string arguments, tokenizer;
        std::vector<std::string> labels;
    };
    const RealCase cases[] = {
        {"--model-type gpt2 --vocab 50257", gpt2, {"Hello", " world", ",", " café", "!"}},
        {"--model-type bert --vocab 30522", bert, {"[CLS]", "hello", "world", ",", "cafe", "!", "[SEP]"}},
    };
    for (const RealCase& c : cases) {
        CAPTURE(c.arguments);
        ScratchDir dir;
        make_reference_folder(dir, "reference_hf_transformer.py",
                              c.arguments + " --d-model 8 --heads 2 --layers 1 --ffn 8 --tokens 2");
        const CommandResult r = run_attn_viz("model -q --model " + dir.path().string() + " --tokenizer " + c.tokenizer +
                                             " --text \"Hello world, café!\" --stats-only --out " + (dir / "out"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        CHECK(stats["tokens"] == nlohmann::json(c.labels));
        CHECK(stats["heads"].size() == 2);
    }
}

}  // TEST_SUITE("model")
