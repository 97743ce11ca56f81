// Empty and impossible option values are refused, not ignored (issue 43): every command that takes
// an option refuses '' where an empty value would read as "not given" (every head drawn, no
// ablation, no dump, the default sentence), a --seed that is not a plain decimal in
// 0..18446744073709551615 (CLI11 alone reads -1 as 2^64-1, clamps 2^64 and reads 010 as octal), and
// a --fail-above or --rope-base that is not a finite number (a nan gate never fails). Each is one
// line naming the option and the value as given, a usage error (exit 2), before anything is read
// or written.
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "cli_fixtures.hpp"
#include "reliability_fixtures.hpp"

using namespace test_support;

namespace {

// `args` (attn-viz COMMAND ...) must be refused with exactly this line.
void check_refused(const std::string& args, const std::string& message) {
    const std::string command = args.substr(0, args.find(' '));
    const CommandResult r = run_attn_viz(args);
    INFO(args);
    CHECK(r.exit_code == 2);
    CHECK(r.output ==
          "attn-viz: error: " + command + ": " + message + " (attn-viz " + command + " --help lists its options)\n");
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("'' is refused by every command wherever an option's empty value would read as not given") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    write_text(dir / "c.jsonl", read_text(dir / "x.json") + "\n");
    write_text(dir / "texts.txt", "a b\n");
    const std::string llama2c = write_small_llama2c_model(dir) + " -q";
    const std::string model = llama2c + " --text a --out " + (dir / "out");
    const std::string model_corpus = llama2c + " --inputs " + (dir / "texts.txt") + " --out " + (dir / "out");
    const std::string run = layer_fixture_run(dir) + " -q";
    const std::string run_corpus =
        "run -q --weights " + (dir / "w.json") + " --inputs " + (dir / "c.jsonl") + " --out " + (dir / "out");
    const std::string models =
        "compare " + (dir / "m.bin") + " " + (dir / "m.bin") + " --tokenizer " + (dir / "tok.bin");
    const std::string layers = "compare " + (dir / "w.json") + " " + (dir / "w.json") + " --input " + (dir / "x.json");
    const auto before = names_in(dir.path());
    const std::pair<std::string, std::string> cases[] = {
        {model + " --heads ''", "--heads: '' names no head"},
        {model + " --layers ''", "--layers: '' names no layer"},
        {model + " --ablate ''", "--ablate: '' names no head"},
        {model + " --patch-from ''", "--patch-from: '' is an empty text"},
        {model + " --target-text ''", "--target-text: '' is an empty text"},
        {llama2c + " --text '' --out " + (dir / "out"), "--text: '' is an empty text"},
        {model + " --window ''", "--window: '' names no window"},
        {model + " --svg ''", "--svg: '' names no head"},
        {model + " --vmin ''", "--vmin: '' is not a number"},
        {model + " --vmax ''", "--vmax: '' is not a number"},
        {model + " --dump-attention ''", "--dump-attention: '' names no file"},
        {model + " --dump-output ''", "--dump-output: '' names no file"},
        {model + " --max-memory ''", "--max-memory: '' names no size"},
        {llama2c + " --text a --out ''", "--out: '' names no folder"},
        {model_corpus + " --shard ''", "--shard: '' names no shard"},
        {model_corpus + " --save-partial ''", "--save-partial: '' names no file"},
        {run + " --window ''", "--window: '' names no window"},
        {run + " --svg ''", "--svg: '' names no head"},
        {run + " --dump-attention ''", "--dump-attention: '' names no file"},
        {run + " --input-tensor ''", "--input-tensor: '' names no tensor"},
        {run_corpus + " --save-partial ''", "--save-partial: '' names no file"},
        {run_corpus + " --shard ''", "--shard: '' names no shard"},
        {models + " --text ''", "--text: '' is an empty text"},
        {models + " --text a --target-text ''", "--target-text: '' is an empty text"},
        {layers + " --input-tensor ''", "--input-tensor: '' names no tensor"},
        {layers + " --out ''", "--out: '' names no folder"},
        {"tokenize --tokenizer " + (dir / "tok.bin") + " --text ''", "--text: '' is an empty text"},
        {"synth --out " + (dir / "synth") + " --tokens ''", "--tokens: '' names no word"},
        {"merge " + (dir / "x.json") + " --out " + (dir / "merged") + " --save-partial ''",
         "--save-partial: '' names no file"},
        {"merge " + (dir / "x.json") + " --out ''", "--out: '' names no folder"},
    };
    for (const auto& [args, message] : cases) check_refused(args, message);
    CHECK(names_in(dir.path()) == before);
}

TEST_CASE("--seed takes a decimal whole number in 0..18446744073709551615 exactly, in model and synth") {
    ScratchDir dir;
    const std::string induction = write_small_llama2c_model(dir) + " -q --json --induction 3 --seed ";
    for (const char* seed : {"-1", "18446744073709551616", "1e3", "", "0x10", " 5", "+5", "5 "}) {
        const std::string quoted = std::string("'") + seed + "'";
        check_refused(induction + quoted, "--seed: " + quoted + " is not a whole number in 0..18446744073709551615");
        check_refused("synth --out " + (dir / "synth") + " --seed " + quoted,
                      "--seed: " + quoted + " is not a whole number in 0..18446744073709551615");
    }
    CHECK(!std::filesystem::exists(dir / "synth"));
    // The bounds run, and a leading zero is decimal (010 is ten, not octal eight): stats.json records the seed.
    for (const auto& [seed, recorded] :
         {std::pair<std::string, uint64_t>{"0", 0}, {"18446744073709551615", UINT64_MAX}, {"010", 10}}) {
        const CommandResult r = run_attn_viz(induction + seed);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(nlohmann::json::parse(r.output)["provenance"]["seed"].get<uint64_t>() == recorded);
    }
    const CommandResult synth = run_attn_viz("synth -q --out " + (dir / "synth") + " --seed 18446744073709551615");
    CHECK_MESSAGE(synth.exit_code == 0, synth.output);
}

TEST_CASE("--fail-above and --rope-base take finite numbers only: a nan gate could never fail") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 3);
    const std::string compare =
        "compare " + (dir / "w.json") + " " + (dir / "w.json") + " --input " + (dir / "x.json") + " --fail-above ";
    for (const char* value : {"nan", "inf", "1e400", "", "0x1p3", " 1"})
        check_refused(compare + "'" + value + "'", std::string("--fail-above: '") + value + "' is not a finite number");
    check_refused(compare + "-1", "--fail-above: '-1' is negative");
    const std::string run = layer_fixture_run(dir) + " --rope-base ";
    check_refused(run + "nan", "--rope-base: 'nan' is not a finite number");
    check_refused(run + "0", "--rope-base: '0' is not positive");
    CHECK(!std::filesystem::exists(dir / "out"));
    // A finite gate works: the same layer twice changes nothing, so no head exceeds 0.5.
    const CommandResult r = run_attn_viz(compare + "0.5 -q");
    CHECK_MESSAGE(r.exit_code == 0, r.output);
}

}  // TEST_SUITE("cli")
