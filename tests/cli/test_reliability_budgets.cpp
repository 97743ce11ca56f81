// --max-memory holds while a corpus or a texts file is read: a line longer than the budget allows
// (a file of one endless line) is refused, naming the file and line, as soon as that much of it is
// read; a tokenizer's normalizers cannot make more text than the budget allows tokenizing; and a
// run over both the model's context and the budget names the context first.
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "model_tokenizer.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

// The message names `where` ("c.jsonl:3") and the budget, and suggests --max-memory (exit 3).
void check_line_refused(const CommandResult& r, const std::string& where, uint64_t longest) {
    INFO(r.output);
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("attn-viz: error: " + where + ": line is longer than " + std::to_string(longest) +
                        " bytes, the longest the memory budget allows (--max-memory)") != std::string::npos);
}

// The maximum resident set size of `command` in KB (GNU time's %M).
uint64_t peak_rss_kb(const std::string& command) {
    // Grouped, so that time's report reaches the captured stderr while the command's stdout is dropped.
    const CommandResult r = run_command("{ /usr/bin/time -f 'peak %M' " + command + " > /dev/null; }");
    const size_t at = r.output.rfind("peak ");
    REQUIRE_MESSAGE(at != std::string::npos, r.output);
    return std::stoull(r.output.substr(at + 5));
}

// Whether the resident set measures attn-viz's own memory: not in the AddressSanitizer build
// (scripts/test.sh --sanitize), whose shadow memory and quarantine take more than the budgets.
bool memory_measurable() {
#if defined(__SANITIZE_ADDRESS__)
    return false;
#else
    return std::filesystem::exists("/usr/bin/time");
#endif
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE(
    "run --inputs: a JSONL line longer than --max-memory allows is refused by file and line, the lines before it run") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    // 4 MB budget: lines of up to 4M / 16 = 262144 bytes. The third line (after a blank one) is
    // 1 MB of digits without a newline.
    const uint64_t longest = (uint64_t{4} << 20) / attn_viz::json_bytes_per_text_byte;
    write_text(dir / "c.jsonl", random_sequence_line(3, 8) + "\n\n[" + std::string(1 << 20, '7'));
    const std::string args = "run -q --weights " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl") +
                             " --max-memory 4M --out " + (dir / "out");
    check_line_refused(run_attn_viz(args), dir / "c.jsonl:3", longest);
    CHECK(!fs::exists(dir / "out"));
    // A line just within the limit is read (and refused only as the JSON it is not).
    write_text(dir / "c.jsonl", random_sequence_line(3, 8) + "\n[" + std::string(longest - 1, '7'));
    const CommandResult r = run_attn_viz(args);
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("line is longer") == std::string::npos);
    CHECK(r.output.find(dir / "c.jsonl:2") != std::string::npos);
}

TEST_CASE("tokenize --inputs: an over-long line is refused within --max-memory, and memory stays near the budget") {
    const std::string hf = shared_model_dir("stories260K-hf", {"tokenizer.json", "tokenizer_config.json"});
    if (hf.empty()) return;
    ScratchDir dir;
    const std::string tokenizer = " --tokenizer " + hf;
    const uint64_t budget = uint64_t{16} << 20;
    const uint64_t longest = budget / attn_viz::tokenize_bytes_per_text_byte;
    // Plain text: 8 MB on one line, no newline.
    std::string text = "Once upon a time\n";
    while (text.size() < (uint64_t{8} << 20)) text += "Lily saw a big dog and they played in the park. ";
    write_text(dir / "texts.txt", text);
    const std::string args = "tokenize" + tokenizer + " --inputs " + (dir / "texts.txt") + " --max-memory 16M";
    check_line_refused(run_attn_viz(args), dir / "texts.txt:2", longest);
    const bool measured = memory_measurable();
    if (measured) CHECK(peak_rss_kb("'" + attn_viz_binary() + "' " + args) < 64 * 1024);
    // A .jsonl text within the JSON line limit but over what tokenizing it takes is refused too.
    write_text(dir / "texts.jsonl", "{\"text\": \"" + text.substr(17, longest + 1000) + "\"}\n");
    const CommandResult r =
        run_attn_viz("tokenize" + tokenizer + " --inputs " + (dir / "texts.jsonl") + " --max-memory 16M");
    INFO(r.output);
    CHECK(r.exit_code == 3);
    CHECK(r.output.find(dir / "texts.jsonl:1: tokenizing " + std::to_string(longest + 1000) + " bytes of text needs") !=
          std::string::npos);
    // The longest line the budget allows is tokenized, within about twice the budget.
    write_text(dir / "texts.txt", text.substr(17, longest));
    const std::string within = "tokenize" + tokenizer + " --inputs " + (dir / "texts.txt") + " --max-memory 16M";
    REQUIRE(run_attn_viz(within).exit_code == 0);
    if (measured) CHECK(peak_rss_kb("'" + attn_viz_binary() + "' " + within) < 2 * budget / 1024 + 16 * 1024);
}

TEST_CASE("tokenize: chained Replace normalizers that expand the text are refused within --max-memory, at once") {
    using json = nlohmann::json;
    ScratchDir dir;
    // Each step makes 64 "a"s of every "a": 4000 bytes would be 16 MB after two steps and 1 GB
    // after three (this took 9 GB of memory before the normalized text was budgeted).
    const json expand = {{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(64, 'a')}};
    const json doc = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", json::array()}}},
                      {"normalizer", {{"type", "Sequence"}, {"normalizers", json::array({expand, expand, expand})}}}};
    write_text(dir / "tokenizer.json", doc.dump());
    const std::string args =
        "tokenize --tokenizer " + (dir / "tokenizer.json") + " --text " + std::string(4000, 'a') + " --max-memory 256M";
    const CommandResult r = run_attn_viz(args);
    INFO(r.output);
    CHECK(r.exit_code == 3);
    const uint64_t longest = (uint64_t{256} << 20) / attn_viz::tokenize_bytes_per_normalized_byte;
    CHECK(r.output ==
          "attn-viz: error: " + (dir / "tokenizer.json") +
              ": normalizer Replace: the normalized text would be longer than " + std::to_string(longest) +
              " bytes, the longest the memory budget of 268435456 bytes allows tokenizing (--max-memory)\n");
    if (memory_measurable()) CHECK(peak_rss_kb("'" + attn_viz_binary() + "' " + args) < 64 * 1024);

    // A normalizer that does not blow the text up tokenizes as before (Llama 2's Prepend + Replace).
    const json llama = {
        {"model",
         {{"type", "BPE"}, {"vocab", {{"\u2581", 0}, {"a", 1}, {"b", 2}, {"\u2581a", 3}}}, {"merges", {"\u2581 a"}}}},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           json::array({{{"type", "Prepend"}, {"prepend", "\u2581"}},
                        {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}})}}}};
    write_text(dir / "llama.json", llama.dump());
    const CommandResult ok =
        run_attn_viz("tokenize --tokenizer " + (dir / "llama.json") + " --text 'a b' --json --max-memory 256M");
    INFO(ok.output);
    CHECK(ok.exit_code == 0);
    CHECK(json::parse(ok.output)["ids"] == json::array({3, 0, 2}));
}

TEST_CASE(
    "model: a corpus line over --max-memory is refused by file and line; over the context and the budget, the context "
    "is named") {
    const std::string stories = stories260k_dir();
    if (stories.empty()) return;
    ScratchDir dir;
    const std::string model =
        "model -q --checkpoint " + stories + "/stories260K.bin --tokenizer " + stories + "/tok512.bin";
    write_text(dir / "c.jsonl", "{\"text\": \"Once upon a time\"}\n{\"text\": \"" + std::string(1 << 20, 'a'));
    const uint64_t longest = (uint64_t{8} << 20) / attn_viz::json_bytes_per_text_byte;
    check_line_refused(
        run_attn_viz(model + " --inputs " + (dir / "c.jsonl") + " --max-memory 8M --out " + (dir / "out")),
        dir / "c.jsonl:2", longest);
    CHECK(!fs::exists(dir / "out"));

    // 600 ids: more than stories260K's 512 positions, and (5 layers of 8 heads of 600 x 600 maps)
    // more than 8 MB: raising the budget cannot help, so the context is what is said.
    std::string ids = "1";
    for (int i = 1; i < 600; ++i) ids += ",300";
    for (const std::string& input : {" --tokens " + ids, " --inputs " + (dir / "long.jsonl")}) {
        write_text(dir / "long.jsonl", "{\"tokens\": [" + ids + "]}\n");
        const CommandResult r = run_attn_viz(model + input + " --max-memory 8M --out " + (dir / "out"));
        INFO(r.output);
        CHECK(r.exit_code == 3);
        CHECK(r.output.find("600 tokens exceed the model's sequence length 512") != std::string::npos);
        CHECK(r.output.find("memory budget") == std::string::npos);
    }
}

}  // TEST_SUITE("reliability")
