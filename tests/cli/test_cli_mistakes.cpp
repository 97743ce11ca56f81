// Common mistakes get one line that says what to do: a mistyped command or option (the closest
// valid name), an option of another command, a missing input, a file of the wrong kind (a .npy
// as layer weights, a tokenizer as a checkpoint and the other way round, a whole model as one
// layer).
#include <filesystem>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// The whole output must be this one line.
void check_one_line(const CommandResult& r, int exit_code, const std::string& line) {
    CHECK(r.exit_code == exit_code);
    CHECK(r.output == "attn-viz: error: " + line + "\n");
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("a mistyped command or option gets the closest valid one; another command's option says whose it is") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string run = layer_fixture_run(dir);
    check_one_line(run_attn_viz(run + " --colourmap magma"), 2,
                   "run: unknown option --colourmap (did you mean --colormap?)");
    check_one_line(run_attn_viz(run + " --stat"), 2, "run: unknown option --stat (did you mean --stats-only?)");
    check_one_line(
        run_attn_viz("run --weights " + (dir / "w.json") + " --inpt " + (dir / "x.json") + " --out " + (dir / "out")),
        2, "run: unknown option --inpt (did you mean --input?)");
    check_one_line(run_attn_viz("rnu " + (dir / "w.json")), 2, "unknown command 'rnu' (did you mean run?)");
    check_one_line(run_attn_viz("model --weights " + (dir / "w.json")), 2,
                   "model: unknown option --weights (an option of run; attn-viz model --help lists its own)");
    check_one_line(run_attn_viz("frobnicate"), 2, "unknown command 'frobnicate'");
    CHECK(!fs::exists(dir / "out"));
    // Negative numbers are values, not options; a known option's missing value is CLI11's one line.
    const CommandResult value = run_attn_viz("compare " + (dir / "w.json") + " " + (dir / "w.json") + " --input " +
                                             (dir / "x.json") + " --fail-above -1");
    CHECK(value.exit_code == 2);
    CHECK(value.output.find("unknown option") == std::string::npos);
    CHECK(value.output.find('\n') == value.output.size() - 1);
}

TEST_CASE("a missing input says what to give; a missing required option says what it holds") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    check_one_line(
        run_attn_viz("run --weights " + (dir / "w.json") + " --out " + (dir / "out")), 2,
        "run: no input sequence: give --input X (a JSON sequence, or .npy/.safetensors embeddings with --tokens), "
        "repeated for a batch, or --inputs CORPUS (JSONL or a folder) (attn-viz run --help lists its options)");
    check_one_line(
        run_attn_viz("compare " + (dir / "w.json") + " " + (dir / "w.json")), 2,
        "compare: no input sequence: two layers need --input X, the sequence both run on (a JSON sequence, or "
        ".npy/.safetensors embeddings with --tokens) (attn-viz compare --help lists its options)");
    check_one_line(
        run_attn_viz("run --input " + (dir / "x.json") + " --out " + (dir / "out")), 2,
        "run: --weights is required: Layer weights: attn-viz/weights@1 JSON (tensors inline or {\"npy\": file}), "
        "or a .safetensors checkpoint with --layout (attn-viz run --help lists its options)");
    CHECK(run_attn_viz("--help").exit_code == 0);
    CHECK(run_attn_viz("run --help").output.find("--stats-only") != std::string::npos);
}

TEST_CASE("a .npy or a whole llama2.c model given as layer weights is refused with what to give instead") {
    ScratchDir dir;
    write_npy_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "m.bin", llama2c_checkpoint_bytes(16, 32, 1, 2, 2, 8, 16));
    const std::string tail = " --input " + (dir / "x.json") + " --out " + (dir / "out");
    check_one_line(run_attn_viz("run --weights " + (dir / "wq.npy") + tail), 3,
                   dir / "wq.npy" +
                       ": is a NumPy array (.npy), not layer weights (an attn-viz/weights@1 JSON): a layer is an "
                       "attn-viz/weights@1 JSON naming one .npy file per matrix ({\"format\": \"attn-viz/weights@1\", "
                       "\"d_model\": D, "
                       "\"num_heads\": H, \"W_Q\": {\"npy\": \"wq.npy\"}, ...}) or a .safetensors checkpoint");
    check_one_line(run_attn_viz("run --weights " + (dir / "m.bin") + tail), 3,
                   dir / "m.bin" +
                       ": is a llama2.c checkpoint (a whole model), not layer weights (an attn-viz/weights@1 "
                       "JSON) (run a whole model with attn-viz model --checkpoint M.bin --tokenizer T.bin)");
    CHECK(run_attn_viz("compare " + (dir / "w.json") + " " + (dir / "wk.npy") + " --input " + (dir / "x.json"))
              .exit_code == 3);
    CHECK(!fs::exists(dir / "out"));
}

TEST_CASE("a path that does not exist is named by the option as the user typed it, not by its alias") {
    ScratchDir dir;
    const std::string missing = dir / "missing";
    for (const char* command : {"model", "tokenize"})
        for (const char* option : {"--model", "--checkpoint"}) {
            CAPTURE(command);
            check_one_line(run_attn_viz(std::string(command) + " " + option + " " + missing + " --text hi"), 2,
                           fmt::format("{0}: {1}: Path does not exist: {2} (attn-viz {0} --help lists its options)",
                                       command, option, missing));
        }
}

TEST_CASE("a tokenizer given as the checkpoint, or a checkpoint as the tokenizer, is named as such") {
    ScratchDir dir;
    write_text(dir / "m.bin", llama2c_checkpoint_bytes(16, 32, 1, 2, 2, 8, 16));
    write_text(dir / "tok.bin", llama2c_tokenizer_bytes(8));
    const std::string swap = " (--checkpoint takes the model, --tokenizer its tokenizer: are the two swapped?)";
    const std::string tail = " --tokens 1,3 -q --out " + (dir / "out");
    check_one_line(run_attn_viz("model --checkpoint " + (dir / "tok.bin") + " --tokenizer " + (dir / "m.bin") + tail),
                   3, dir / "tok.bin" + ": is a llama2.c tokenizer, not a llama2.c checkpoint" + swap);
    check_one_line(run_attn_viz("model --model " + (dir / "tok.bin") + " --tokenizer " + (dir / "m.bin") + tail), 3,
                   dir / "tok.bin" + ": is a llama2.c tokenizer, not a llama2.c checkpoint" +
                       " (--model takes the model, --tokenizer its tokenizer: are the two swapped?)");
    check_one_line(run_attn_viz("model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "m.bin") + tail), 3,
                   dir / "m.bin" + ": is a llama2.c checkpoint (a whole model), not a llama2.c tokenizer" + swap);
    CHECK(!fs::exists(dir / "out"));
    const CommandResult right =
        run_attn_viz("model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin") + tail);
    CHECK_MESSAGE(right.exit_code == 0, right.output);
}

TEST_CASE(
    "model: a text longer than the model's context is refused at once, naming the tokens, the sequence length and "
    "--truncate, which cuts it as transformers does and says so in stats.json") {
    ScratchDir dir;
    // Vocabulary 261: <unk>, BOS "\n<s>\n", EOS, the byte tokens, " ", "a"; the longest piece is 6 bytes.
    write_text(dir / "tok.bin", tokenizer_bytes(vocabulary_with_bytes({{" ", 0}, {"a", 0}}), 6));
    write_text(dir / "m.bin", llama2c_checkpoint_bytes(16, 32, 1, 2, 2, 261, 16));
    const std::string model =
        "model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin") + " -q --out " + (dir / "out");
    const std::string hint = " (--truncate cuts it to the context, as transformers' truncation=True)";
    // 100,000 bytes are at least (5 + 1 + 100,000) / 6 tokens: refused before encoding.
    check_one_line(
        run_attn_viz(model + " --text " + std::string(100000, 'a')), 3,
        "--text: a text of 100000 bytes is at least 16668 tokens, more than the model's sequence length 16" + hint);
    // 20 bytes may be 5 tokens, but encode to BOS, " " and 20 "a": refused after encoding.
    check_one_line(run_attn_viz(model + " --text " + std::string(20, 'a')), 3,
                   "--text: 22 tokens exceed the model's sequence length 16" + hint);
    // Corpus mode names the line.
    write_text(dir / "c.jsonl", "{\"text\": \"aaa\"}\n{\"text\": \"" + std::string(200, 'a') + "\"}\n");
    check_one_line(run_attn_viz(model + " --inputs " + (dir / "c.jsonl")), 3,
                   dir / "c.jsonl" +
                       ":2: a text of 200 bytes is at least 35 tokens, more than the model's sequence length 16" +
                       hint);
    CHECK(!fs::exists(dir / "out"));
    const CommandResult fits = run_attn_viz(model + " --text " + std::string(14, 'a'));
    CHECK_MESSAGE(fits.exit_code == 0, fits.output);
    CHECK(!nlohmann::json::parse(read_text(dir / "out/stats.json")).contains("truncated_input"));

    // --truncate: the first 16 ids, BOS kept, and stats.json says what the text was cut from.
    for (const size_t bytes : {size_t{20}, size_t{100000}}) {
        CAPTURE(bytes);
        const CommandResult cut = run_attn_viz(model + " --force --truncate --json --text " + std::string(bytes, 'a'));
        REQUIRE_MESSAGE(cut.exit_code == 0, cut.output);
        std::vector<std::string> tokens = {"<s>", " "};
        tokens.resize(16, "a");
        CHECK(nlohmann::json::parse(cut.output)["tokens"] == nlohmann::json(tokens));
        CHECK(nlohmann::json::parse(read_text(dir / "out/stats.json"))["truncated_input"] ==
              nlohmann::json{{"original_tokens", bytes + 2}, {"tokens", 16}});
    }
    const CommandResult corpus = run_attn_viz(model + " --force --truncate --inputs " + (dir / "c.jsonl"));
    CHECK_MESSAGE(corpus.exit_code == 0, corpus.output);
    CHECK(nlohmann::json::parse(read_text(dir / "out/stats.json"))["num_sequences"] == 2);
}

TEST_CASE("--tokens '' is refused as --tokens ' , ' is, by model and by compare of two models") {
    ScratchDir dir;
    write_text(dir / "m.bin", llama2c_checkpoint_bytes(16, 32, 1, 2, 2, 8, 16));
    write_text(dir / "tok.bin", llama2c_tokenizer_bytes(8));
    const std::string model = " --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin");
    for (const std::string& empty : {"''", "' , '"}) {
        CAPTURE(empty);
        check_one_line(run_attn_viz("model" + model + " --tokens " + empty + " -q --out " + (dir / "out")), 2,
                       "--tokens: no token ids given");
        check_one_line(run_attn_viz("compare " + (dir / "m.bin") + " " + (dir / "m.bin") + " --tokenizer " +
                                    (dir / "tok.bin") + " --tokens " + empty),
                       2, "--tokens: no token ids given");
        // Beside --text, an empty --tokens is not dropped in favour of the text.
        CHECK(run_attn_viz("compare " + (dir / "m.bin") + " " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin") +
                           " --text a --tokens " + empty)
                  .exit_code == 2);
    }
    CHECK(!fs::exists(dir / "out"));
}

TEST_CASE("token ids a model cannot take are blamed on the option that gave them (exit 3)") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir) + " -q --out " + (dir / "out");  // 263 ids, 24 tokens
    check_one_line(run_attn_viz(model + " --tokens 1,263"), 3,
                   "--tokens: token 1 is id 263, outside the vocabulary (0..262)");
    check_one_line(run_attn_viz(model + " --tokens 1,2 --patch-from-tokens 1,263"), 3,
                   "--patch-from-tokens: token 1 is id 263, outside the vocabulary (0..262)");
    check_one_line(run_attn_viz(model + " --induction 20"), 3,
                   "--induction: 41 tokens exceed the model's sequence length 24");
    check_one_line(run_attn_viz("compare " + (dir / "m.bin") + " " + (dir / "m.bin") + " --tokenizer " +
                                (dir / "tok.bin") + " --tokens 1,263"),
                   3, "--tokens: token 1 is id 263, outside the vocabulary (0..262)");
    CHECK(!fs::exists(dir / "out"));
}

}  // TEST_SUITE("cli")
