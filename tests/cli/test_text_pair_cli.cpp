// BERT-style sentence pairs (--text-pair, {"text", "text_pair"} corpus lines, tokenize --text-pair):
// encoded as the tokenizer's pair template encodes them, segment B of token type 1, the maps those of
// the float64 reference run with those token types (scripts/reference_hf_transformer.py --pair-at),
// stats.json's sentence_b_start; a [SEP] typed into --text warned about; pairs refused where a
// tokenizer or a model has none.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A random BERT folder with the small WordPiece tokenizer.json (BertProcessing: [CLS] A [SEP] B [SEP]);
// its vocabulary: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, the 5, cat 6, sat 7, on 8, mat 9, . 10.
void make_bert(const ScratchDir& dir, const std::string& extra = "") {
    make_reference_folder(dir, "reference_hf_transformer.py",
                          "--model-type bert --d-model 16 --heads 2 --layers 2 --ffn 20 --vocab 70 --tokens 3 "
                          "--tokenizer " +
                              extra);
}

// The largest difference between two [L, H, T, T] dumps.
double largest_difference(const Tensor& a, const Tensor& b) {
    REQUIRE(a.shape == b.shape);
    double largest = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
        largest = std::max(largest, static_cast<double>(std::abs(a.data[i] - b.data[i])));
    return largest;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "model --text-pair: [CLS] A [SEP] B [SEP] with B of token type 1, the maps of those types, "
    "sentence_b_start") {
    ScratchDir dir;
    make_bert(dir);
    const std::string model = "model -q --model " + dir.path().string();
    const CommandResult pair = run_attn_viz(model + " --text \"the cat sat.\" --text-pair \"on the mat\" --out " +
                                            (dir / "pair") + " --html --dump-attention " + (dir / "pair.npy"));
    REQUIRE_MESSAGE(pair.exit_code == 0, pair.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "pair/stats.json"));
    CHECK(stats["tokens"] ==
          nlohmann::json::array({"[CLS]", "the", "cat", "sat", ".", "[SEP]", "on", "the", "mat", "[SEP]"}));
    CHECK(stats["sentence_b_start"] == 6);
    CHECK(stats["token_types"] == nlohmann::json::array({0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
    CHECK(stats["text_pair"] == "on the mat");
    CHECK(read_text(dir / "pair/report.html").find("text pair, from token 6: on the mat") != std::string::npos);

    // The same ids typed as one text (every token of type 0) give other maps: the types matter.
    const std::string ids = "2,5,6,7,10,3,8,5,9,3";
    const CommandResult single = run_attn_viz(model + " --tokens " + ids + " --out " + (dir / "single") +
                                              " --dump-attention " + (dir / "single.npy"));
    REQUIRE_MESSAGE(single.exit_code == 0, single.output);
    CHECK(nlohmann::json::parse(read_text(dir / "single/stats.json"))["tokens"] == stats["tokens"]);
    CHECK(largest_difference(read_npy(dir / "pair.npy"), read_npy(dir / "single.npy")) > 1e-3);
}

TEST_CASE("model --inputs: {\"text\", \"text_pair\"} lines run as pairs; tokenize --text-pair shows the types") {
    ScratchDir dir;
    make_bert(dir);
    write_text(dir / "pairs.jsonl",
               "{\"text\": \"the cat sat.\", \"text_pair\": \"on the mat\"}\n{\"text\": \"the mat\", \"text_pair\": "
               "\"the cat\"}\n");
    const std::string folder = dir.path().string();
    const CommandResult corpus =
        run_attn_viz("model -q --model " + folder + " --inputs " + (dir / "pairs.jsonl") + " --out " + (dir / "c"));
    REQUIRE_MESSAGE(corpus.exit_code == 0, corpus.output);
    CHECK(nlohmann::json::parse(read_text(dir / "c/stats.json"))["num_sequences"] == 2);
    // The corpus of the pairs is not the corpus of the same texts run alone.
    write_text(dir / "joined.jsonl", "{\"text\": \"the cat sat. on the mat\"}\n{\"text\": \"the mat the cat\"}\n");
    const CommandResult joined =
        run_attn_viz("model -q --model " + folder + " --inputs " + (dir / "joined.jsonl") + " --out " + (dir / "j"));
    REQUIRE_MESSAGE(joined.exit_code == 0, joined.output);
    CHECK(read_text(dir / "c/heads.csv") != read_text(dir / "j/heads.csv"));

    const CommandResult tokens =
        run_attn_viz("tokenize --json --model " + folder + " --text \"the cat\" --text-pair \"sat on the mat\"");
    REQUIRE_MESSAGE(tokens.exit_code == 0, tokens.output);
    const nlohmann::json line = nlohmann::json::parse(tokens.output);
    CHECK(line["tokens"] ==
          nlohmann::json::array({"[CLS]", "the", "cat", "[SEP]", "sat", "on", "the", "mat", "[SEP]"}));
    CHECK(line["token_type_ids"] == nlohmann::json::array({0, 0, 0, 0, 1, 1, 1, 1, 1}));
    CHECK(line["sentence_b_start"] == 4);
    const CommandResult table = run_attn_viz("tokenize --model " + folder + " --text \"the cat\" --text-pair \"sat\"");
    CHECK(table.output.find("\"the cat\" + \"sat\" (from position 4): 6 tokens") != std::string::npos);
    CHECK(table.output.find("position         id  type  token") != std::string::npos);

    // A line's pair must be a text beside "text".
    write_text(dir / "bad.jsonl", "{\"tokens\": [2, 5, 3], \"text_pair\": \"the mat\"}\n");
    const CommandResult bad =
        run_attn_viz("model -q --model " + folder + " --inputs " + (dir / "bad.jsonl") + " --out " + (dir / "b"));
    CHECK(bad.exit_code == 3);
    CHECK(bad.output.find("bad.jsonl:1: \"text_pair\" is the second text of a pair: it goes with \"text\"") !=
          std::string::npos);
}

TEST_CASE("model --text-pair: a [SEP] typed into --text is warned about; impossible pairs are refused") {
    ScratchDir dir;
    make_bert(dir);
    const std::string model = "model -q --model " + dir.path().string();
    const CommandResult typed = run_attn_viz(model + " --text \"the cat [SEP] sat\" --json");
    REQUIRE_MESSAGE(typed.exit_code == 0, typed.output);
    CHECK(typed.output.find("warning: --text holds the model's separator token [SEP]: the text runs as one segment "
                            "(every token of type 0); give the second text with --text-pair") != std::string::npos);
    const CommandResult plain = run_attn_viz(model + " --text \"the cat sat\" --json");
    CHECK(plain.output.find("warning") == std::string::npos);

    const CommandResult empty = run_attn_viz(model + " --text \"the cat\" --text-pair \"\" --json");
    CHECK(empty.exit_code == 2);
    CHECK(empty.output.find("--text-pair: '' is an empty text") != std::string::npos);
    const CommandResult alone = run_attn_viz(model + " --text-pair \"the cat\" --json");
    CHECK(alone.exit_code == 2);
    CHECK(alone.output.find("--text-pair requires --text") != std::string::npos);
    const CommandResult with_ids = run_attn_viz(model + " --tokens 2,5,3 --text-pair \"the cat\" --json");
    CHECK(with_ids.exit_code == 2);

    // A llama2.c tokenizer has no pair template.
    const std::string stories = shared_model_dir("stories260K", {"stories260K.bin", "tok512.bin"});
    if (stories.empty()) return;
    const CommandResult llama2c = run_attn_viz("model -q --model " + stories + "/stories260K.bin --tokenizer " +
                                               stories + "/tok512.bin --text \"Once\" --text-pair \"upon\" --json");
    CHECK(llama2c.exit_code == 2);
    CHECK(llama2c.output.find("--text-pair: a llama2.c tokenizer has no template for a text pair") !=
          std::string::npos);
}

}  // TEST_SUITE("model")
