// Byte-level BPE ("gpt2") tokenizers from GGUF metadata: llama.cpp's real GPT-2 vocabulary file
// against its test vectors (skipped with a message where ../shared is absent), each supported
// tokenizer.ggml.pre on a small vocabulary whose ids tell the splits apart, the BOS defaults,
// read_tokenizer_file's and read_model_tokenizer's dispatch, and hostile metadata.
#include <functional>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_tokenizer.hpp"
#include "llama_vocab_vectors.hpp"
#include "model_tokenizer.hpp"
#include "model_tokenizer_file.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A small byte-level vocabulary ("Ġ" is the space) with merges building "12345", "45" and "Ġab",
// "ba" a token no merge makes, and a control token "<|end|>" as BOS and EOS.
struct BpeMetadata {
    std::string model = "gpt2", pre = "gpt-2";
    std::vector<std::string> tokens = {"1",
                                       "2",
                                       "3",
                                       "4",
                                       "5",
                                       "12",
                                       "123",
                                       "1234",
                                       "12345",
                                       "45",
                                       "a",
                                       "b",
                                       "ab",
                                       "ba",
                                       "\xc4\xa0",
                                       "\xc4\xa0"
                                       "a",
                                       "\xc4\xa0"
                                       "ab",
                                       "!",
                                       "<|end|>"};
    std::vector<int32_t> types = std::vector<int32_t>(18, 1);
    std::vector<std::string> merges = {"1 2",
                                       "12 3",
                                       "123 4",
                                       "1234 5",
                                       "4 5",
                                       "\xc4\xa0 a",
                                       "a b",
                                       "\xc4\xa0"
                                       "a b"};
    uint32_t bos = 18, eos = 18;
    std::function<void(GgufBuilder&)> extra = [](GgufBuilder&) {};
    BpeMetadata() { types.push_back(3); }
};

int id_of(const BpeMetadata& m, const std::string& token) {
    return static_cast<int>(std::find(m.tokens.begin(), m.tokens.end(), token) - m.tokens.begin());
}

// The metadata written as a GGUF file (no tensors) at `path`, opened.
GgufFile write_bpe_gguf(const std::string& path, const BpeMetadata& m) {
    GgufBuilder b;
    b.add_string("general.architecture", "llama");
    b.add_string("tokenizer.ggml.model", m.model);
    if (!m.pre.empty()) b.add_string("tokenizer.ggml.pre", m.pre);
    b.add_string_array("tokenizer.ggml.tokens", m.tokens);
    b.add_i32_array("tokenizer.ggml.token_type", m.types);
    b.add_string_array("tokenizer.ggml.merges", m.merges);
    b.add_u32("tokenizer.ggml.bos_token_id", m.bos);
    b.add_u32("tokenizer.ggml.eos_token_id", m.eos);
    m.extra(b);
    write_text(path, b.bytes());
    return GgufFile(path);
}

}  // namespace

TEST_CASE("llama.cpp's GPT-2 vocabulary GGUF encodes every test string to exactly the listed ids") {
    const std::string dir =
        shared_model_dir("tokenizers/llama.cpp-vocab", {"ggml-vocab-gpt-2.gguf", "ggml-vocab-gpt-2.gguf.inp"});
    if (dir.empty()) return;
    const std::string path = dir + "/ggml-vocab-gpt-2.gguf";
    const HfTokenizer tokenizer = read_gguf_bpe_tokenizer(GgufFile(path), 50257);
    CHECK(tokenizer.kind() == "byte-level BPE");
    CHECK(tokenizer.vocab_size() == 50257);
    CHECK(tokenizer.eos_id() == 50256);
    const std::vector<VocabCase> cases = vocab_cases(dir, "ggml-vocab-gpt-2.gguf");
    check_vocab_cases(tokenizer, cases);
    CHECK(tokenizer.labels({15496, 995}) == std::vector<std::string>{"Hello", " world"});
    CHECK(tokenizer.decode(tokenizer.encode("Héllo wörld 🦙\n\tend<|endoftext|>", false)) ==
          "Héllo wörld 🦙\n\tend");
    CHECK(tokenizer.encode("a<|endoftext|>b", false) == std::vector<int>{64, 50256, 65});

    // The model path a GGUF file's own tokenizer takes: no BOS for GPT-2 (as HF and llama.cpp).
    const std::unique_ptr<ModelTokenizer> model = read_tokenizer_file(path, 50257);
    for (const VocabCase& c : cases) CHECK(model->encode(c.text) == c.ids);
    CHECK(model->end_ids() == std::vector<int>{50256});
    expect_error(ErrorKind::bad_input, [&] { read_tokenizer_file(path, 50000); },
                 {"ggml-vocab-gpt-2.gguf", "50257 tokens but the model's vocabulary has 50000"});
}

TEST_CASE("each supported tokenizer.ggml.pre splits as its tokenizer.json does, and llama-bpe adds BOS") {
    ScratchDir dir;
    const BpeMetadata m;
    auto ids = [&](std::initializer_list<const char*> tokens) {
        std::vector<int> out;
        for (const char* t : tokens) out.push_back(id_of(m, t));
        return out;
    };
    const std::string space = "\xc4\xa0";
    struct Case {
        std::string pre;
        std::vector<int> expected;  // of "ba 12345"
        bool bos;
    };
    const Case cases[] = {
        {"gpt-2", ids({"b", "a", "\xc4\xa0", "12345"}), false},  // " 12345" one word; no merge joins "Ġ" and "1"
        {"llama-bpe", ids({"ba", "\xc4\xa0", "123", "45"}),
         true},  // digits by threes; a word that is a token is taken whole
        {"llama3", ids({"ba", "\xc4\xa0", "123", "45"}), true},
        {"qwen2", ids({"b", "a", "\xc4\xa0", "1", "2", "3", "4", "5"}), false},  // digits one by one
        {"default", ids({"b", "a", "\xc4\xa0", "123", "45"}), false},            // llama.cpp's four splits
        {"", ids({"b", "a", "\xc4\xa0", "123", "45"}), false},                   // no key: "default", as llama.cpp
    };
    for (const Case& c : cases) {
        CAPTURE(c.pre);
        BpeMetadata meta;
        meta.pre = c.pre;
        const HfTokenizer tokenizer = read_gguf_bpe_tokenizer(write_bpe_gguf(dir / "t.gguf", meta), 19);
        CHECK(tokenizer.encode("ba 12345", false) == c.expected);
        std::vector<int> with_bos = c.expected;
        if (c.bos) with_bos.insert(with_bos.begin(), 18);
        CHECK(tokenizer.encode("ba 12345", true) == with_bos);
        CHECK(tokenizer.decode(c.expected) == "ba 12345");
        // The control token is cut out of the text before BPE and prints nothing.
        CHECK(tokenizer.encode("ab<|end|> ab", false) == ids({"ab", "<|end|>",
                                                              "\xc4\xa0"
                                                              "ab"}));
        CHECK(tokenizer.decode(ids({"ab", "<|end|>", "!"})) == "ab!");
        CHECK(tokenizer.labels(ids({"\xc4\xa0"
                                    "ab",
                                    "<|end|>"})) == std::vector<std::string>{" ab", "<|end|>"});
    }
    // add_bos_token / add_eos_token override the defaults.
    BpeMetadata flags;
    flags.pre = "llama-bpe";
    flags.extra = [](GgufBuilder& b) {
        b.add_bool("tokenizer.ggml.add_bos_token", false);
        b.add_bool("tokenizer.ggml.add_eos_token", true);
    };
    const HfTokenizer flagged = read_gguf_bpe_tokenizer(write_bpe_gguf(dir / "f.gguf", flags), 0);
    CHECK(flagged.encode("ab", true) == std::vector<int>{id_of(m, "ab"), 18});
    // Through read_model_tokenizer (a GGUF file of any architecture brings its tokenizer).
    write_bpe_gguf(dir / "m.gguf", flags);
    CHECK(read_model_tokenizer(open_model_files(dir / "m.gguf"), "", 19)->encode("ab") ==
          std::vector<int>{id_of(m, "ab"), 18});
}

TEST_CASE("hostile byte-level BPE metadata in GGUF is refused naming the file and the key") {
    ScratchDir dir;
    const std::string path = dir / "bad.gguf";
    auto expect_refused = [&](const std::function<void(BpeMetadata&)>& spoil, const std::string& fragment,
                              int64_t vocab_size = 0) {
        CAPTURE(fragment);
        BpeMetadata m;
        spoil(m);
        expect_error(ErrorKind::bad_input, [&] { read_gguf_bpe_tokenizer(write_bpe_gguf(path, m), vocab_size); },
                     {"bad.gguf", fragment});
    };
    expect_refused([](BpeMetadata& m) { m.pre = "falcon"; },
                   "tokenizer.ggml.pre \"falcon\" is a pre-tokenizer attn-viz does not know (supported: gpt-2, "
                   "llama-bpe (also llama3, "
                   "llama-v3), qwen2, default)");
    expect_refused([](BpeMetadata& m) { m.model = "llama"; },
                   "tokenizer.ggml.model is \"llama\", not the byte-level BPE \"gpt2\"");
    expect_refused([](BpeMetadata& m) { m.merges.push_back("x y"); },
                   "merge 8 (\"x\" + \"y\") joins text that is not in the vocabulary");
    expect_refused([](BpeMetadata& m) { m.merges.push_back("ab"); }, "merge 8 \"ab\" is not two tokens");
    expect_refused([](BpeMetadata& m) { m.types.pop_back(); },
                   "tokenizer.ggml.token_type holds 18 types for 19 tokens");
    expect_refused([](BpeMetadata& m) { m.types[3] = 9; }, "token_type of token 3 is 9");
    expect_refused([](BpeMetadata& m) { m.bos = 19; }, "tokenizer.ggml.bos_token_id is 19, outside the 19 tokens");
    expect_refused([](BpeMetadata& m) { m.tokens[5] = "ab"; },
                   "tokenizer.ggml.tokens holds \"ab\" twice (ids 5 and 12)");
    expect_refused([](BpeMetadata& m) { m.tokens.clear(), m.types.clear(); }, "tokenizer.ggml.tokens is empty");
    expect_refused([](BpeMetadata&) {}, "holds 19 tokens but the model's vocabulary has 18", 18);
    expect_refused(
        [](BpeMetadata& m) { m.extra = [](GgufBuilder& b) { b.add_u32("tokenizer.ggml.add_bos_token", 1); }; },
        "\"tokenizer.ggml.add_bos_token\" is a uint32, expected a bool");
    // Merges are required, as llama.cpp requires them.
    GgufBuilder no_merges;
    no_merges.add_string("tokenizer.ggml.model", "gpt2");
    no_merges.add_string_array("tokenizer.ggml.tokens", {"a"});
    write_text(path, no_merges.bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_bpe_tokenizer(GgufFile(path), 0); },
                 {"bad.gguf", "tokenizer.ggml.merges"});
}
