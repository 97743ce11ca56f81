// model --generate: the continuation on its own line after the prompt, how it ended (at once
// when the model's first choice ends the text), the same in --json, and progress at a terminal.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A random llama2.c model (D 16, 1 layer, vocab 8) whose every prediction is BOS: token
// embeddings (also the classifier) are 0 in channel 0 except BOS's, 1e4, and the final norm keeps
// channel 0 only. After a BOS prompt that channel dominates the residual stream, so BOS's logit
// is 1e4 times a positive number and every other is 0.
std::string bos_predicting_checkpoint() {
    const int32_t dim = 16, hidden = 32, layers = 1, heads = 2, kv = 2, vocab = 8, seq_len = 16;
    std::string bytes = llama2c_checkpoint_bytes(dim, hidden, layers, heads, kv, vocab, seq_len);
    for (int v = 0; v < vocab; ++v) set_checkpoint_float(bytes, int64_t{v} * dim, v == 1 ? 1e4f : 0.0f);
    const int64_t per_layer = 2 * dim + 2 * dim * dim + 2 * kv * (dim / heads) * dim + 3 * dim * hidden;
    const int64_t rms_final = int64_t{vocab} * dim + layers * per_layer;
    for (int c = 0; c < dim; ++c) set_checkpoint_float(bytes, rms_final + c, c == 0 ? 1.0f : 0.0f);
    return bytes;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("a model whose first choice ends the text says it stopped at once, in text and in --json") {
    ScratchDir dir;
    write_text(dir / "m.bin", bos_predicting_checkpoint());
    write_text(dir / "tok.bin", llama2c_tokenizer_bytes(8));
    const std::string model = "model --checkpoint " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin") +
                              " --tokens 1 --generate 5 --out ";
    const CommandResult text = run_attn_viz(model + (dir / "text"));
    REQUIRE_MESSAGE(text.exit_code == 0, text.output);
    CHECK(text.output.find(
              "prompt: \ngreedy continuation: none: the model ended the text at once (its first choice was the "
              "end-of-text token <s>)\n") != std::string::npos);
    const CommandResult json = run_attn_viz(model + (dir / "json") + " --json --stats-only");
    REQUIRE_MESSAGE(json.exit_code == 0, json.output);
    const nlohmann::json g = nlohmann::json::parse(json.output)["generation"];
    CHECK(g["stop"] == "end_of_text");
    CHECK(g["tokens"].empty());
    CHECK(g["continuation"] == "");
    CHECK(g["requested"] == 5);

    // At a terminal, the forward pass shows its layers on stderr (erased when done); with -q, nothing.
    const std::vector<std::string> args = {"model",    "--checkpoint", dir / "m.bin",  "--tokenizer", dir / "tok.bin",
                                           "--tokens", "1,3,4",        "--stats-only", "--out",       dir / "tty"};
    const CommandResult shown = run_on_terminal(args);
    REQUIRE_MESSAGE(shown.exit_code == 0, shown.output);
    CHECK(shown.output.find("\rattn-viz: layer 1 of 1\033[K\r\033[K") != std::string::npos);
    std::vector<std::string> quiet = args;
    quiet.push_back("-q");
    quiet.push_back("--force");  // into the same folder
    const CommandResult silent = run_on_terminal(quiet);
    CHECK(silent.exit_code == 0);
    CHECK(silent.output.empty());
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "stories260K: the continuation is printed apart from the prompt, and --json has both and the provenance") {
    if (model.empty()) return;
    const std::string files = "model --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin";
    const CommandResult text =
        run_attn_viz(files + " --stats-only --text \"Once upon a time\" --generate 6 --out " + (dir / "t"));
    REQUIRE_MESSAGE(text.exit_code == 0, text.output);
    CHECK(text.output.find("\nprompt: Once upon a time\ngreedy continuation (6 tokens): , there was a little g\n") !=
          std::string::npos);
    const CommandResult json = run_attn_viz(files + " --stats-only --induction 8 --seed 7 --generate 3 --json --out " +
                                            (dir / "j") + " 2>/dev/null");
    REQUIRE_MESSAGE(json.exit_code == 0, json.output);
    const nlohmann::json doc = nlohmann::json::parse(json.output);
    CHECK(doc["command"] == "model");
    CHECK(doc["heads"].size() == 40);
    CHECK(doc["tokens"].size() == 17);
    CHECK(doc["provenance"]["seed"] == 7);
    CHECK(doc["provenance"]["inputs"].size() == 2);
    CHECK(nlohmann::json::parse(read_text(dir / "j/stats.json"))["provenance"] == doc["provenance"]);
    const nlohmann::json& g = doc["generation"];
    CHECK(g["stop"] == "length");
    CHECK(g["tokens"].size() == 3);
    CHECK(!g["continuation"].get<std::string>().empty());
}

}  // TEST_SUITE("model")
