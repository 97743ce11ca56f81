// tokenizer_config.json beside a tokenizer.json: the special tokens and flags it names are used or
// refused with the file named, never dropped silently (an unknown bos_token used to mean "no BOS",
// a string "true" for add_bos_token was ignored).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "expect_error.hpp"
#include "hf_tokenizer.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
using json = nlohmann::json;

namespace {

// A folder with a small BPE tokenizer.json (<s> 0, </s> 1, a 2, b 3, ab 4) and `config` as its
// tokenizer_config.json; returns the folder.
std::string tokenizer_folder(const ScratchDir& dir, const json& config) {
    const json tokenizer = {
        {"model",
         {{"type", "BPE"}, {"vocab", {{"<s>", 0}, {"</s>", 1}, {"a", 2}, {"b", 3}, {"ab", 4}}}, {"merges", {"a b"}}}}};
    write_text(dir / "tokenizer.json", tokenizer.dump());
    write_text(dir / "tokenizer_config.json", config.dump());
    return dir.path();
}

}  // namespace

TEST_SUITE("tokenizers") {

TEST_CASE("tokenizer_config.json: named special tokens and boolean flags are applied") {
    ScratchDir dir;
    const HfTokenizer with_both = HfTokenizer::load(tokenizer_folder(dir, {{"bos_token", "<s>"},
                                                                           {"eos_token", {{"content", "</s>"}}},
                                                                           {"add_bos_token", true},
                                                                           {"add_eos_token", true}}));
    CHECK(with_both.bos_id() == 0);
    CHECK(with_both.eos_id() == 1);
    CHECK(with_both.encode("abab", true) == std::vector<int>{0, 4, 4, 1});
    const HfTokenizer without = HfTokenizer::load(
        tokenizer_folder(dir, {{"bos_token", "<s>"}, {"add_bos_token", false}, {"add_eos_token", nullptr}}));
    CHECK(without.encode("abab", true) == std::vector<int>{4, 4});
}

TEST_CASE(
    "tokenizer_config.json: an unknown special token or a flag that is not a boolean is refused naming the file") {
    ScratchDir dir;
    const std::string config = dir / "tokenizer_config.json";
    const std::pair<json, std::string> cases[] = {
        {{{"bos_token", "<bos>"}}, "\"bos_token\" \"<bos>\" is not a token of the vocabulary"},
        {{{"eos_token", {{"content", "<|end|>"}}}}, "\"eos_token\" \"<|end|>\" is not a token of the vocabulary"},
        {{{"bos_token", 7}}, "\"bos_token\" must be a token (a string or {\"content\": ...})"},
        {{{"add_bos_token", "true"}}, "\"add_bos_token\" must be true or false, not \"true\""},
        {{{"add_eos_token", 1}}, "\"add_eos_token\" must be true or false, not 1"},
    };
    for (const auto& [bad, message] : cases) {
        CAPTURE(bad.dump());
        expect_error(ErrorKind::bad_input, [&] { HfTokenizer::load(tokenizer_folder(dir, bad)); },
                     {config + ": " + message});
    }
}

}  // TEST_SUITE("tokenizers")
