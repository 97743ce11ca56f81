// attn-viz tokenize: the same ids and labels from each form of a model's tokenizer (Hugging Face
// folder, tokenizer.json, legacy vocab.txt, llama2.c tokenizer.bin, GGUF, vocabulary-only GGUF),
// texts from --inputs files, the table and JSON forms, and mistakes named (the real files are
// skipped with a message where ../shared/models is absent).
#include <optional>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "gguf_builder.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"

using namespace test_support;
using nlohmann::json;

namespace {

// The JSON lines `tokenize --json ARGUMENTS` prints (the command must succeed).
std::vector<json> tokenize_json(const std::string& arguments) {
    const CommandResult r = run_attn_viz("tokenize --json " + arguments);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    std::vector<json> lines;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
}

// The one line `tokenize --json` writes for `text` with llama.cpp's vocabulary-only GGUF file
// `name`, or nullopt where ../shared lacks it (the test then returns).
std::optional<json> tokenize_with_llama_cpp_vocab(const std::string& name, const std::string& text) {
    const std::string vocab = shared_model_dir("tokenizers/llama.cpp-vocab", {name});
    if (vocab.empty()) return std::nullopt;
    const std::vector<json> lines = tokenize_json("--tokenizer " + vocab + "/" + name + " --text \"" + text + "\"");
    REQUIRE(lines.size() == 1);
    return lines[0];
}

std::string joined(const json& labels) {
    std::string text;
    for (const json& label : labels) text += label.get<std::string>();
    return text;
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("tokenize: stories260K's folder, tokenizer.json, GGUF and llama2.c tokenizer give the same ids and labels") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json", "tokenizer_config.json"});
    const std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf"});
    const std::string bin = stories260k_dir();
    if (hf.empty() || gguf.empty() || bin.empty()) return;
    const std::string text = " --text \"Once upon a time, Lily saw a big dog. \\\"Wow!\\\" she said.\"";
    const std::vector<json> from_bin =
        tokenize_json("--model " + bin + "/stories260K.bin --tokenizer " + bin + "/tok512.bin" + text);
    REQUIRE(from_bin.size() == 1);
    const json& expected = from_bin[0];
    CHECK(expected["text"] == "Once upon a time, Lily saw a big dog. \"Wow!\" she said.");
    CHECK(expected["ids"][0] == 1);  // BOS, as model mode takes the text
    CHECK(expected["ids"].size() == expected["tokens"].size());
    CHECK(expected["tokens"][0] == "<s>");
    CHECK(joined(expected["tokens"]) == "<s> Once upon a time, Lily saw a big dog. \"Wow!\" she said.");
    for (const std::string& source :
         {"--model " + hf, "--tokenizer " + hf + "/tokenizer.json", "--model " + gguf + "/stories260K.gguf",
          "--tokenizer " + gguf + "/stories260K.gguf"}) {
        CAPTURE(source);
        const std::vector<json> lines = tokenize_json(source + text);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0] == expected);
    }
}

TEST_CASE(
    "tokenize: BERT from tokenizer.json, its folder and the bare vocab.txt, with [CLS] and [SEP], as a table too") {
    const std::string bert = shared_model_dir("tokenizers/bert-base-uncased", {"tokenizer.json", "vocab.txt"});
    if (bert.empty()) return;
    ScratchDir dir;
    std::filesystem::copy_file(bert + "/vocab.txt", dir / "vocab.txt");
    const std::string text = " --text \"Hello World, café!\"";
    // Ids of @huggingface/tokenizers (and HF's Python tokenizer) for this text.
    const json expected = {{"text", "Hello World, café!"},
                           {"ids", {101, 7592, 2088, 1010, 7668, 999, 102}},
                           {"tokens", {"[CLS]", "hello", "world", ",", "cafe", "!", "[SEP]"}}};
    for (const std::string& source : {bert + "/tokenizer.json", bert, (dir / "vocab.txt")}) {
        CAPTURE(source);
        const std::vector<json> lines = tokenize_json("--tokenizer " + source + text);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0] == expected);
    }
    const CommandResult table = run_attn_viz("tokenize --tokenizer " + bert + text);
    REQUIRE_MESSAGE(table.exit_code == 0, table.output);
    CHECK(table.output.find("\"Hello World, café!\": 7 tokens\n") == 0);
    CHECK(table.output.find("       0        101  \"[CLS]\"\n") != std::string::npos);
    CHECK(table.output.find("       4       7668  \"cafe\"\n") != std::string::npos);
}

TEST_CASE("tokenize --tokenizer: Phi-3's vocabulary-only GGUF file, with BOS as the model takes it") {
    const std::optional<json> line = tokenize_with_llama_cpp_vocab("ggml-vocab-phi-3.gguf", "Hello world");
    if (!line) return;
    // Ids of llama.cpp's vectors (Hugging Face's tokenizer) for "Hello world", after BOS.
    CHECK(*line == json{{"text", "Hello world"}, {"ids", {1, 15043, 3186}}, {"tokens", {"<s>", " Hello", " world"}}});
}

TEST_CASE("tokenize --tokenizer: GPT-2's vocabulary-only GGUF file (byte-level BPE), without BOS as GPT-2 takes text") {
    const std::optional<json> line = tokenize_with_llama_cpp_vocab("ggml-vocab-gpt-2.gguf", "Hello world<|endoftext|>");
    if (!line) return;
    CHECK(*line == json{{"text", "Hello world<|endoftext|>"},
                        {"ids", {15496, 995, 50256}},
                        {"tokens", {"Hello", " world", "<|endoftext|>"}}});
}

TEST_CASE(
    "tokenize --tokenizer: BGE's vocabulary-only GGUF file (WordPiece) as bert-base-uncased's vocab.txt, [CLS] ... "
    "[SEP]") {
    const std::optional<json> line =
        tokenize_with_llama_cpp_vocab("ggml-vocab-bert-bge.gguf", "Hello, Wörld! unaffable");
    if (!line) return;
    CHECK((*line)["ids"] == json{101, 7592, 1010, 2088, 999, 14477, 20961, 3468, 102});
    const std::string uncased = shared_model_dir("tokenizers/bert-base-uncased", {"vocab.txt"});
    if (uncased.empty()) return;
    CHECK(std::vector<json>{*line} ==
          tokenize_json("--tokenizer " + uncased + "/vocab.txt --text \"Hello, Wörld! unaffable\""));
}

TEST_CASE(
    "tokenize --inputs: a text file (one text a line) and a JSONL file of texts and ids, in order, named by line") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json"});
    if (hf.empty()) return;
    ScratchDir dir;
    write_text(dir / "texts.txt", "Lily ran.\r\n\n   \nThe sun\tsmiled.\n");
    const std::vector<json> lines = tokenize_json("--model " + hf + " --inputs " + (dir / "texts.txt"));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0]["text"] == "Lily ran.");
    CHECK(lines[1]["text"] == "The sun\tsmiled.");
    CHECK(lines[0] == tokenize_json("--model " + hf + " --text \"Lily ran.\"")[0]);

    // JSONL: a text, then ids (shown with their decoded text), as model mode's corpora hold them.
    const json ids = lines[1]["ids"];
    write_text(dir / "c.jsonl", json{{"text", "Lily ran."}}.dump() + "\n\n" + json{{"tokens", ids}}.dump() + "\n");
    const std::vector<json> from_jsonl = tokenize_json("--model " + hf + " --inputs " + (dir / "c.jsonl"));
    REQUIRE(from_jsonl.size() == 2);
    CHECK(from_jsonl[0] == lines[0]);
    CHECK(from_jsonl[1] == lines[1]);

    const CommandResult table = run_attn_viz("tokenize --model " + hf + " --inputs " + (dir / "texts.txt"));
    REQUIRE_MESSAGE(table.exit_code == 0, table.output);
    CHECK(table.output.find(dir / "texts.txt:1: \"Lily ran.\": ") == 0);
    CHECK(table.output.find("\n\n" + (dir / "texts.txt:4: \"The sun\\tsmiled.\": ")) != std::string::npos);
}

TEST_CASE("tokenize: mistakes get a usage error or a one-line error naming the file") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json"});
    const std::string bin = stories260k_dir();
    if (hf.empty() || bin.empty()) return;
    ScratchDir dir;
    struct Mistake {
        std::string arguments;
        int exit_code;
        std::string message;
    };
    write_text(dir / "bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": 3}\n");
    write_text(dir / "ids.jsonl", "{\"tokens\": [1, 99999]}\n");
    write_text(dir / "latin1.txt", "caf\xe9\n");
    const std::vector<Mistake> mistakes = {
        {"--text hi", 2, "--model or --tokenizer is required"},
        {"--model " + hf, 2, "--text or --inputs is required"},
        {"--model " + hf + " --text hi --inputs " + (dir / "bad.jsonl"), 2, "excludes"},
        {"--model " + bin + "/stories260K.bin --text hi", 3, "whose tokenizer is a separate file"},
        {"--model " + hf + " --inputs " + (dir / "bad.jsonl"), 3, dir / "bad.jsonl:2: \"text\" must be a string"},
        {"--model " + hf + " --inputs " + (dir / "ids.jsonl"), 3,
         dir / "ids.jsonl:1: " + hf + "/tokenizer.json: token id 99999 is not in the vocabulary"},
        {"--model " + hf + " --inputs " + (dir / "latin1.txt"), 3, dir / "latin1.txt:1: is not UTF-8"},
        {"--tokenizer " + (dir / "latin1.txt") + " --text hi", 3, "latin1.txt"},
    };
    for (const Mistake& m : mistakes) {
        CAPTURE(m.arguments);
        const CommandResult r = run_attn_viz("tokenize " + m.arguments);
        CHECK(r.exit_code == m.exit_code);
        CHECK_MESSAGE(r.output.find(m.message) != std::string::npos, r.output);
    }
}

TEST_CASE(
    "tokenize and model: a vocabulary of one token (tokenizer.bin, vocabulary-only GGUF, GGUF model) is refused, not a "
    "crash") {
    ScratchDir dir;
    write_text(dir / "one.bin", tokenizer_bytes({{" ", 0.0f}}, 4));
    GgufBuilder vocabulary_only;
    vocabulary_only.add_string("general.architecture", "llama");
    vocabulary_only.add_string("tokenizer.ggml.model", "llama");
    vocabulary_only.add_string_array("tokenizer.ggml.tokens", {"\xe2\x96\x81"});
    vocabulary_only.add_f32_array("tokenizer.ggml.scores", {0.0f});
    write_text(dir / "vocab.gguf", vocabulary_only.bytes());
    GgufBuilder with_embedding = vocabulary_only;
    with_embedding.add_f32_tensor("token_embd.weight", {8, 1}, random_tensor({1, 8}).data);
    write_text(dir / "model.gguf", with_embedding.bytes());
    write_text(dir / "one-token-model.bin", llama2c_checkpoint_bytes(16, 32, 1, 4, 2, 1, 8));
    for (const std::string& arguments : {"tokenize --tokenizer " + (dir / "one.bin") + " --text ' '",
                                         "tokenize --tokenizer " + (dir / "vocab.gguf") + " --text ' '",
                                         "tokenize --model " + (dir / "model.gguf") + " --text ' '",
                                         "model --checkpoint " + (dir / "one-token-model.bin") + " --tokenizer " +
                                             (dir / "one.bin") + " --text ' ' --out " + (dir / "out")}) {
        CAPTURE(arguments);
        const CommandResult r = run_attn_viz(arguments);
        CHECK(r.exit_code == 3);
        CHECK_MESSAGE(r.output.find("holds 1 token; a llama tokenizer needs at least 3") != std::string::npos,
                      r.output);
    }
}

}  // TEST_SUITE("cli")
