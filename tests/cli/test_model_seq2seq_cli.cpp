// attn-viz model on encoder-decoder folders (random BART and T5 folders written by
// scripts/reference_hf_seq2seq.py): the three stacks' picture folders, stats.json's "stack" on
// every head and "alignment" on cross heads, --dump-attention's three arrays equal to the float64
// reference's maps, T5 with the real t5-base tokenizer.json (skipped where ../shared lacks it),
// --generate, and the options an encoder-decoder run refuses (exit 2).
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// "1,2,3" from a reference folder's ids file.
std::string id_list(const std::string& path) {
    std::string list;
    for (int id : read_ids(path)) list += (list.empty() ? "" : ",") + std::to_string(id);
    return list;
}

// The heads of stats.json of each stack.
std::map<std::string, int64_t> heads_per_stack(const nlohmann::json& stats) {
    std::map<std::string, int64_t> count;
    for (const nlohmann::json& head : stats["heads"]) ++count[head["stack"].get<std::string>()];
    return count;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model on a BART folder: encoder/, decoder/ and cross/ pictures, stats.json stacks and the three dumps") {
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_seq2seq.py",
                          "--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 20 --vocab 300 "
                          "--source-tokens 7 --target-tokens 5 --tokenizer");
    const std::string model = dir.path().string(), out = dir / "out";
    const CommandResult r = run_attn_viz("model --model " + model + " --tokens " + id_list(dir / "source_ids.txt") + " --target-tokens " +
                                         id_list(dir / "target_ids.txt") + " --out " + out + " --dump-attention " + (dir / "maps.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* picture : {"encoder/layer_01/head_03.png", "decoder/layer_02/head_03.png", "cross/layer_02/head_00.png",
                                "encoder/stats.json", "cross/heads.csv"})
        CHECK_MESSAGE(std::filesystem::exists(dir / ("out/" + std::string(picture))), picture);
    CHECK(!std::filesystem::exists(dir / "out/encoder/layer_02"));
    const Tensor encoder = read_npy(dir / "maps.encoder.npy"), decoder = read_npy(dir / "maps.decoder.npy"), cross = read_npy(dir / "maps.cross.npy");
    CHECK(encoder.shape == std::vector<int64_t>{2, 4, 7, 7});
    CHECK(decoder.shape == std::vector<int64_t>{3, 4, 5, 5});
    CHECK(cross.shape == std::vector<int64_t>{3, 4, 5, 7});
    const Tensor expected_cross = read_npy(dir / "expected_cross_2.npy");  // [H, T, S], the last layer
    Tensor last({4, 5, 7});
    std::copy_n(cross.data.begin() + 2 * last.size(), last.size(), last.data.begin());
    CHECK(max_abs_diff(last, expected_cross) < 1e-5);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(heads_per_stack(stats) == std::map<std::string, int64_t>{{"cross", 12}, {"decoder", 12}, {"encoder", 8}});
    for (const nlohmann::json& head : stats["heads"]) {
        CHECK(head.contains("entropy"));
        CHECK(head.contains("alignment") == (head["stack"] == "cross"));
    }
    const nlohmann::json& alignment = stats["heads"].back()["alignment"];
    for (const char* key : {"entropy", "confidence", "diagonal", "monotonicity", "coverage"}) CHECK_MESSAGE(alignment.contains(key), key);
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
    make_reference_folder(dir, "reference_hf_seq2seq.py",
                          "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 2 --ffn 12 --vocab 32128 "
                          "--source-tokens 3 --target-tokens 3 --gated");
    std::filesystem::copy_file(tokenizer, dir / "tokenizer.json");
    const std::string model = dir.path().string();
    const CommandResult r = run_attn_viz("model --model " + model + " --text \"translate English to German: The house is wonderful.\" "
                                         "--target-text \"Das Haus ist wunderbar.\" --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["source_tokens"].front().get<std::string>().find("translate") != std::string::npos);
    CHECK(stats["source_tokens"].back() == "</s>");  // T5's post-processor
    CHECK(stats["target_tokens"].front().get<std::string>().find("Das") != std::string::npos);  // as given: no start token in front
    CHECK(stats["stacks"]["cross"]["num_keys"] == stats["source_tokens"].size());
    CHECK(std::filesystem::exists(dir / "out/cross/layer_01/head_01.png"));

    const CommandResult generated = run_attn_viz("model --model " + model + " --text \"summarize: a house\" --generate 3 --out " + (dir / "gen"));
    REQUIRE_MESSAGE(generated.exit_code == 0, generated.output);
    CHECK(generated.output.find("greedy continuation") != std::string::npos);
    const nlohmann::json gen_stats = nlohmann::json::parse(read_text(dir / "gen/stats.json"));
    CHECK(gen_stats["target_tokens"].front() == "<pad>");  // decoder_start_token_id 0
    CHECK(gen_stats["target_tokens"].size() >= 2);
}

TEST_CASE("model on an encoder-decoder refuses what does not apply to it yet, and a decoder refuses a target (exit 2)") {
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_seq2seq.py",
                          "--model-type t5 --d-model 8 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 20 "
                          "--source-tokens 2 --target-tokens 2");
    const std::string run = "model --model " + dir.path().string() + " --tokens 1,2,3 ";
    write_text(dir / "corpus.txt", "1 2\n");
    for (const auto& [options, needle] : std::vector<std::pair<std::string, std::string>>{
             {"--target-tokens 0,1 --stream-layers --out " + (dir / "o"), "--stream-layers does not apply to an encoder-decoder model (t5)"},
             {"--target-tokens 0,1 --ablate all --out " + (dir / "o"), "--ablate does not apply"},
             {"--target-tokens 0,1 --rollout --out " + (dir / "o"), "--rollout does not apply"},
             {"--target-tokens 0,1 --composition --out " + (dir / "o"), "--composition does not apply"},
             {"--target-tokens 0,1 --layers 0 --out " + (dir / "o"), "--layers does not apply"},
             {"--target-tokens 0,1 --generate 2 --out " + (dir / "o"), "--generate with --target-text or --target-tokens does not apply"},
             {"--out " + (dir / "o"), "needs the decoder's input: --target-text, --target-tokens or --generate N"},
         }) {
        CAPTURE(options);
        const CommandResult r = run_attn_viz(run + options);
        CHECK(r.exit_code == 2);
        CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
        CHECK(!std::filesystem::exists(dir / "o"));
    }
    const CommandResult corpus = run_attn_viz("model --model " + dir.path().string() + " --inputs " + (dir / "corpus.txt") + " --out " + (dir / "o"));
    CHECK(corpus.exit_code == 2);
    CHECK_MESSAGE(corpus.output.find("--inputs (corpus mode) does not apply to an encoder-decoder model") != std::string::npos, corpus.output);
    const CommandResult compared = run_attn_viz("compare " + dir.path().string() + " " + dir.path().string() + " --tokens 1,2");
    CHECK(compared.exit_code == 2);
    CHECK_MESSAGE(compared.output.find("is an encoder-decoder model, which only the model command runs") != std::string::npos, compared.output);

    ScratchDir llama;
    make_reference_folder(llama, "reference_hf_llama.py",
                          "--model-type llama --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 12 --tokens 3");
    const CommandResult decoder = run_attn_viz("model --model " + llama.path().string() + " --tokens 1,2 --target-tokens 1 --out " + (dir / "o"));
    CHECK(decoder.exit_code == 2);
    CHECK_MESSAGE(decoder.output.find("model_type llama has no decoder input") != std::string::npos, decoder.output);
}

}  // TEST_SUITE
