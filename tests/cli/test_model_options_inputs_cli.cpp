// attn-viz model's options that do what they say (--stats-only with --ablate and --rollout, -q with
// --generate, --timings under --stats-only), the inputs people have (--inputs as plain text, --json
// without --out) and the advice a wrong file gets (a model folder's file as --model, a tokenizer
// of another vocabulary, a missing file), on a small random llama2.c model.
#include <algorithm>
#include <filesystem>
#include <set>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// `arguments` run in `dir` with TMPDIR=dir/tmp (created empty).
CommandResult run_in(const ScratchDir& dir, const std::string& arguments) {
    fs::create_directories(dir / "tmp");
    return run_command("cd '" + dir.path().string() + "' && TMPDIR='" + (dir / "tmp") + "' '" + attn_viz_binary() +
                       "' " + arguments);
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "model --stats-only: --ablate and --rollout write their tables and arrays, no picture; --timings has no pictures "
    "stage") {
    ScratchDir dir;
    const std::string model =
        write_small_llama2c_model(dir) + " --tokens 1,259,260,261,259,262 --ablate all --rollout --timings -q";
    CommandResult r = run_attn_viz(model + " --stats-only --out " + (dir / "stats"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    std::set<std::string> files = files_below(dir / "stats");
    for (const std::string& f : files) CHECK_MESSAGE(fs::path(f).extension() != ".png", f);
    for (const char* kept : {"stats.json", "heads.csv", "pairs.csv", "ablation.csv", "rollout.npy"})
        CHECK_MESSAGE(files.count(kept), kept);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "stats/stats.json"));
    CHECK(stats["ablation"]["heads"].size() == 4);
    CHECK(!stats["attention_rollout"].contains("pictures"));
    CHECK_MESSAGE(r.output.find("  statistics files ") != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("  pictures ") == std::string::npos, r.output);

    // The same run with pictures draws them and times them.
    r = run_attn_viz(model + " --out " + (dir / "pictures"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(fs::exists(dir / "pictures/ablation_delta_loss.png"));
    CHECK(fs::exists(dir / "pictures/ablation_kl.png"));
    CHECK(fs::exists(dir / "pictures/rollout/layer_01.png"));
    CHECK(nlohmann::json::parse(read_text(dir / "pictures/stats.json"))["attention_rollout"]["pictures"] ==
          "rollout/layer_NN.png");
    CHECK_MESSAGE(r.output.find("  pictures ") != std::string::npos, r.output);
    CHECK(r.output.find("  statistics files ") == std::string::npos);
}

TEST_CASE("model -q --generate prints the continuation, and nothing else") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir) + " --tokens 1,259,260 --stats-only --out ";
    const CommandResult loud = run_attn_viz(model + (dir / "loud") + " --generate 3");
    REQUIRE_MESSAGE(loud.exit_code == 0, loud.output);
    const size_t continuation = loud.output.find("greedy continuation");
    REQUIRE_MESSAGE(continuation != std::string::npos, loud.output);
    const size_t prompt = loud.output.rfind("prompt: ", continuation);
    REQUIRE(prompt != std::string::npos);
    const std::string lines = loud.output.substr(prompt, loud.output.find("wrote ", continuation) - prompt);
    const CommandResult quiet = run_attn_viz(model + (dir / "quiet") + " --generate 3 -q");
    REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.output);
    CHECK(quiet.output == lines);
    CHECK(run_attn_viz(model + (dir / "silent") + " -q").output.empty());
}

TEST_CASE("model --inputs takes a plain text file, one text per line, as tokenize does; a .jsonl file stays JSON") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir) + " -q --stats-only";
    write_text(dir / "texts.txt", "ab ba\n\n  \nThe end.\r\n{\"text\": \"a\"}\nThe end.\n");
    write_text(dir / "texts.jsonl",
               "{\"text\": \"ab ba\"}\n{\"text\": \"The end.\"}\n{\"text\": \"{\\\"text\\\": \\\"a\\\"}\"}\n"
               "{\"text\": \"The end.\"}\n");
    for (const char* name : {"texts.txt", "texts.jsonl"}) {
        const CommandResult r =
            run_attn_viz(model + " --inputs " + (dir / name) + " --out " + (dir / (std::string(name) + ".out")));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    }
    nlohmann::json text = nlohmann::json::parse(read_text(dir / "texts.txt.out/stats.json"));
    nlohmann::json jsonl = nlohmann::json::parse(read_text(dir / "texts.jsonl.out/stats.json"));
    CHECK(text["num_sequences"] == 4);
    CHECK(text["heads"] == jsonl["heads"]);
    CHECK(text["num_queries"] == jsonl["num_queries"]);
    // tokenize reads the same file the same way.
    const CommandResult tokens = run_attn_viz("tokenize --json --model " + (dir / "m.bin") + " --tokenizer " +
                                              (dir / "tok.bin") + " --inputs " + (dir / "texts.txt"));
    REQUIRE_MESSAGE(tokens.exit_code == 0, tokens.output);
    CHECK(std::count(tokens.output.begin(), tokens.output.end(), '\n') == 4);
    CHECK(tokens.output.find("\"text\":\"The end.\"") != std::string::npos);
    // A line that is not UTF-8 is named; a shard of a text corpus merges like any other.
    write_text(dir / "latin1.txt", "ab\ncaf\xe9\n");
    const CommandResult bad = run_attn_viz(model + " --inputs " + (dir / "latin1.txt") + " --out " + (dir / "bad"));
    CHECK(bad.exit_code == 3);
    CHECK_MESSAGE(bad.output.find(dir / "latin1.txt:2: is not UTF-8") != std::string::npos, bad.output);
    CHECK(!fs::exists(dir / "bad"));
}

TEST_CASE(
    "--json without --out prints the summary and writes nothing; without either, or with a file option, a usage "
    "error") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    const std::set<std::string> before = files_below(dir.path());
    CommandResult r = run_in(dir, model + " --json --tokens 1,259,260,261 --generate 2 2>/dev/null");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json doc = nlohmann::json::parse(r.output);
    CHECK(doc["command"] == "model");
    CHECK(doc["out"].is_null());
    CHECK(doc["heads"].size() == 4);
    CHECK(doc["generation"]["requested"] == 2);
    CHECK(files_below(dir.path()) == before);  // nothing in the folder, nothing left in TMPDIR
    write_layer_fixture(dir, 8, 2, 3);
    const std::set<std::string> with_layer = files_below(dir.path());
    r = run_in(dir, "run --json --weights w.json --input x.json 2>/dev/null");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(nlohmann::json::parse(r.output)["heads"].size() == 2);
    CHECK(files_below(dir.path()) == with_layer);

    r = run_in(dir, model + " --tokens 1,259");
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(
        r.output.find("--out (or --json, to print the summary and write nothing) is required") != std::string::npos,
        r.output);
    for (const char* option : {"--dump-attention a.npy", "--html", "--svg 0:0", "--dump-output o.npy"}) {
        r = run_in(dir, model + " --json --tokens 1,259 " + option);
        CHECK_MESSAGE(r.exit_code == 2, option);
        CHECK_MESSAGE(r.output.find("writes a file: give --out") != std::string::npos, r.output);
    }
    r = run_in(dir, model + " --json --inputs x.json --save-partial p.json");
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find("--save-partial") != std::string::npos, r.output);
    CHECK(files_below(dir.path()) == with_layer);
}

TEST_CASE(
    "a model folder's file as --model says to pass the folder; a tokenizer of another vocabulary names both sizes") {
    ScratchDir dir;
    write_small_llama2c_model(dir);
    fs::create_directories(dir / "hf");
    write_text(dir / "hf/config.json", R"({"model_type": "llama"})");
    write_text(dir / "hf/tokenizer.json", "{}");
    write_text(dir / "hf/model.safetensors", "not read");
    write_text(dir / "hf/model-00001-of-00002.safetensors", "not read");
    for (const char* file :
         {"config.json", "tokenizer.json", "model.safetensors", "model-00001-of-00002.safetensors"}) {
        const CommandResult r =
            run_attn_viz("model --model " + (dir / ("hf/" + std::string(file))) + " --text hi --out " + (dir / "out"));
        CHECK(r.exit_code == 3);
        CHECK(r.output == "attn-viz: error: " + (dir / ("hf/" + std::string(file))) + ": is the " + file +
                              " of a model folder, not a model: pass the folder that holds it (" + (dir / "hf") +
                              ")\n");
    }
    CHECK(!fs::exists(dir / "out"));

    // A llama2.c tokenizer of 8 tokens for a model of 263.
    write_text(dir / "tok8.bin", llama2c_tokenizer_bytes(8));
    CommandResult r = run_attn_viz("model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok8.bin") +
                                   " --text ab --out " + (dir / "out"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("holds 8 tokens but the model's vocabulary has 263") != std::string::npos, r.output);
    // A tokenizer.json of more tokens than the model's vocabulary.
    const std::string bert = shared_model_dir("tokenizers/bert-base-uncased", {"tokenizer.json"});
    if (!bert.empty()) {
        r = run_attn_viz("model --checkpoint " + (dir / "m.bin") + " --tokenizer " + bert +
                         "/tokenizer.json --text ab --out " + (dir / "out"));
        CHECK(r.exit_code == 3);
        CHECK_MESSAGE(
            r.output.find(bert + "/tokenizer.json: its vocabulary of 30522 tokens does not fit the model's 263 (" +
                          (dir / "m.bin") + ")") != std::string::npos,
            r.output);
    }
    CHECK(!fs::exists(dir / "out"));

    // A file named on the command line that does not exist: usage, exit 2 (README, "Exit status").
    for (const std::string& missing :
         {"--model " + (dir / "nothing"), "--checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "nothing"),
          "--checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin") + " --inputs " + (dir / "nothing")}) {
        r = run_attn_viz("model " + missing + (missing.find("--inputs") == std::string::npos ? " --text ab" : "") +
                         " --out " + (dir / "out"));
        CHECK_MESSAGE(r.exit_code == 2, missing);
        CHECK_MESSAGE(r.output.find(dir / "nothing") != std::string::npos, r.output);
    }
    CHECK(!fs::exists(dir / "out"));
}

}  // TEST_SUITE("model")
