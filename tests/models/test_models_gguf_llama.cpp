// Llama models written here as GGUF from random weights: hyper-parameters from the metadata,
// matrices in the x W convention, tied or separate classifiers, the tokenizer, and files that
// are not a llama model refused with errors naming the file and the key or tensor.
#include <memory>
#include <tuple>
#include <utility>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "model_files.hpp"
#include "model_tokenizer_file.hpp"
#include "quantized_llama_gguf.hpp"
#include "support.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

constexpr int64_t D = 8, H = 2, KV = 1, F = 12, L = 2;  // head size 4
// The vocabulary: <unk>, BOS, EOS, 256 byte tokens, then "\u2581", "a", "\u2581a", "b".
constexpr int space = 259, a = 260, space_a = 261, b = 262, V = 263;

// Every tensor of the model as written, row-major [out, in] (GGUF dims [in, out]).
struct WrittenModel {
    std::map<std::string, Tensor> tensors;
    GgufBuilder builder;
};

void put_tensor(WrittenModel& m, const std::string& name, std::vector<int64_t> shape) {
    const Tensor t = random_tensor(shape);
    m.builder.add_f32_tensor(name, {shape.rbegin(), shape.rend()}, t.data);
    m.tensors.emplace(name, t);
}

std::vector<std::string> vocabulary() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    const char* hex = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) tokens.push_back(std::string("<0x") + hex[b / 16] + hex[b % 16] + ">");
    for (const char* piece : {"\xe2\x96\x81", "a",
                              "\xe2\x96\x81"
                              "a",
                              "b"})
        tokens.push_back(piece);
    return tokens;
}

// A valid model; `skip` leaves out one metadata key or tensor, `tied` omits output.weight.
WrittenModel llama_model(const std::string& skip = "", bool tied = false) {
    WrittenModel m;
    GgufBuilder& b = m.builder;
    auto u32 = [&](const std::string& key, uint32_t v) {
        if (key != skip) b.add_u32(key, v);
    };
    if (skip != "general.architecture") b.add_string("general.architecture", "llama");
    u32("llama.block_count", L);
    u32("llama.embedding_length", D);
    u32("llama.feed_forward_length", F);
    u32("llama.attention.head_count", H);
    u32("llama.attention.head_count_kv", KV);
    u32("llama.context_length", 16);
    u32("llama.rope.dimension_count", D / H);
    b.add_f32("llama.rope.freq_base", 500000.0f);
    b.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-6f);
    b.add_string("tokenizer.ggml.model", "llama");
    std::vector<float> scores(V, 0.0f);
    scores[space_a] = -1.0f;
    b.add_string_array("tokenizer.ggml.tokens", vocabulary());
    b.add_f32_array("tokenizer.ggml.scores", scores);
    b.add_u32("tokenizer.ggml.bos_token_id", 1);
    b.add_u32("tokenizer.ggml.eos_token_id", 2);
    auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
        if (name != skip) put_tensor(m, name, shape);
    };
    tensor("token_embd.weight", {V, D});
    for (int64_t l = 0; l < L; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        tensor(p + "attn_norm.weight", {D});
        tensor(p + "attn_q.weight", {D, D});
        tensor(p + "attn_k.weight", {KV * D / H, D});
        tensor(p + "attn_v.weight", {KV * D / H, D});
        tensor(p + "attn_output.weight", {D, D});
        tensor(p + "ffn_norm.weight", {D});
        tensor(p + "ffn_gate.weight", {F, D});
        tensor(p + "ffn_down.weight", {D, F});
        tensor(p + "ffn_up.weight", {F, D});
    }
    tensor("output_norm.weight", {D});
    if (!tied) tensor("output.weight", {V, D});
    return m;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("GGUF llama: configuration, x W matrices, classifier and tokenizer") {
    ScratchDir dir;
    for (bool tied : {false, true}) {
        CAPTURE(tied);
        const WrittenModel m = llama_model("", tied);
        write_text(dir / "m.gguf", m.builder.bytes());
        const ModelWeights w = read_gguf_llama(GgufFile(dir / "m.gguf"));
        const ModelWeights streamed = read_model_weights(open_model_files(dir / "m.gguf"));  // blocks loaded on demand
        CHECK(streamed.blocks->streams());
        CHECK(streamed.blocks->held(0) == nullptr);
        CHECK(streamed.classifier_matrix().data == w.classifier_matrix().data);
        CHECK(streamed.blocks->load(1).w_out.data == w.blocks->held(1)->w_out.data);
        CHECK(streamed.blocks->load(0).attention.w_q.data == w.blocks->held(0)->attention.w_q.data);
        const ModelConfig& c = w.config;
        CHECK(c.d_model == D);
        CHECK(c.ffn_dim == F);
        CHECK(c.n_layers == L);
        CHECK(c.n_heads == H);
        CHECK(c.n_kv_heads == KV);
        CHECK(c.vocab_size == V);
        CHECK(c.max_tokens == 16);
        CHECK(c.rope_base == 500000.0);
        CHECK(c.norm_epsilon == doctest::Approx(1e-6));
        CHECK(c.shared_classifier == tied);
        CHECK(w.token_embedding.data == m.tensors.at("token_embd.weight").data);
        CHECK(w.classifier_matrix().data == m.tensors.at(tied ? "token_embd.weight" : "output.weight").data);
        CHECK(w.classifier.empty() == tied);  // a shared classifier is the embedding itself, not a copy
        CHECK(w.final_norm.weight.data == m.tensors.at("output_norm.weight").data);
        for (int64_t l = 0; l < L; ++l) {
            const std::string p = "blk." + std::to_string(l) + ".";
            const BlockWeights& b = *w.blocks->held(l);
            CHECK(b.attention.rope == RopeStyle::interleaved);
            CHECK(b.attention.rope_base == 500000.0);
            CHECK(b.attention.causal);
            CHECK(b.attention.w_q.data == transposed(m.tensors.at(p + "attn_q.weight")).data);
            CHECK(b.attention.w_k.data == transposed(m.tensors.at(p + "attn_k.weight")).data);
            CHECK(b.attention.w_v.data == transposed(m.tensors.at(p + "attn_v.weight")).data);
            CHECK(b.attention.w_o.data == transposed(m.tensors.at(p + "attn_output.weight")).data);
            CHECK(b.w_in.data == m.tensors.at(p + "ffn_gate.weight").data);
            CHECK(b.w_out.data == m.tensors.at(p + "ffn_down.weight").data);
            CHECK(b.w_up.data == m.tensors.at(p + "ffn_up.weight").data);
            CHECK(b.attention_norm.weight.data == m.tensors.at(p + "attn_norm.weight").data);
            CHECK(b.feed_forward_norm.weight.data == m.tensors.at(p + "ffn_norm.weight").data);
        }
        // "\u2581" reads as a space: the dummy prefix and "\u2581a" merge; "c" falls back to its byte.
        const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(GgufFile(dir / "m.gguf"), V);
        CHECK(tokenizer.piece(space_a) == " a");
        CHECK(tokenizer.encode("ab c", true, false) == std::vector<int>{1, space_a, b, space, 'c' + 3});
        CHECK(tokenizer.decode({1, space_a, b}) == "ab");
        CHECK(tokenizer.decode({1, a, space_a}) == "a a");
    }
}

TEST_CASE(
    "GGUF llama: quantized blocks decode into their transposes, streamed into one block's reused memory as read "
    "whole") {
    ScratchDir dir;
    write_text(dir / "q.gguf", quantized_llama_gguf());
    const GgufFile file(dir / "q.gguf");
    const ModelWeights whole = read_gguf_llama(file);
    const ModelWeights streamed = read_gguf_llama_streaming(std::make_shared<const GgufFile>(dir / "q.gguf"));
    REQUIRE(streamed.blocks->streams());
    // Every matrix as the whole tensor decoded by load() and transposed.
    for (int64_t l = 0; l < QuantizedLlama::layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        const BlockWeights& b = *whole.blocks->held(l);
        CHECK(b.attention.w_q.data == transposed(file.load(p + "attn_q.weight")).data);
        CHECK(b.attention.w_k.data == transposed(file.load(p + "attn_k.weight")).data);
        CHECK(b.attention.w_v.data == transposed(file.load(p + "attn_v.weight")).data);
        CHECK(b.attention.w_o.data == transposed(file.load(p + "attn_output.weight")).data);
        CHECK(b.w_in.data == file.load(p + "ffn_gate.weight").data);
        CHECK(b.w_up.data == file.load(p + "ffn_up.weight").data);
        CHECK(b.w_out.data == file.load(p + "ffn_down.weight").data);
    }
    // One BlockWeights refilled block after block, out of order and twice: equal to the blocks
    // read whole, in the memory of its first fill.
    BlockWeights reused;
    const float* memory = nullptr;
    for (int64_t l : {1, 0, 0, 1}) {
        CAPTURE(l);
        streamed.blocks->load_into(l, reused);
        if (!memory) memory = reused.w_out.ptr();
        CHECK(reused.w_out.ptr() == memory);
        const BlockWeights& b = *whole.blocks->held(l);
        const LayerWeights &got = reused.attention, &want = b.attention;
        for (const auto& [x, y] : {std::pair{&got.w_q, &want.w_q},
                                   {&got.w_k, &want.w_k},
                                   {&got.w_v, &want.w_v},
                                   {&got.w_o, &want.w_o},
                                   {&reused.w_in, &b.w_in},
                                   {&reused.w_up, &b.w_up},
                                   {&reused.w_out, &b.w_out},
                                   {&reused.attention_norm.weight, &b.attention_norm.weight},
                                   {&reused.feed_forward_norm.weight, &b.feed_forward_norm.weight}}) {
            CHECK(x->shape == y->shape);
            CHECK(x->data == y->data);
        }
        CHECK(got.num_heads == want.num_heads);
        CHECK(got.num_kv_heads == want.num_kv_heads);
        CHECK(got.rope == want.rope);
        CHECK(got.causal == want.causal);
    }
}

TEST_CASE("GGUF llama: files that are not a usable llama model are refused, naming the key or tensor") {
    ScratchDir dir;
    const std::string path = dir / "bad.gguf";
    auto expect_refused = [&](const GgufBuilder& b, const std::string& fragment) {
        CAPTURE(fragment);
        write_text(path, b.bytes());
        expect_error(ErrorKind::bad_input, [&] { read_model_weights(open_model_files(path)); }, {"bad.gguf", fragment});
    };
    expect_refused(llama_model("general.architecture").builder, "general.architecture is \"\"");
    expect_refused(llama_model("llama.block_count").builder, "llama.block_count");
    expect_refused(llama_model("llama.embedding_length").builder, "llama.embedding_length");
    expect_refused(llama_model("blk.1.ffn_up.weight").builder, "\"blk.1.ffn_up.weight\"");
    expect_refused(llama_model("token_embd.weight").builder, "token_embd.weight");
    expect_refused(llama_model("output_norm.weight").builder, "output_norm.weight");

    GgufBuilder other_architecture;
    other_architecture.add_string("general.architecture", "mamba");
    expect_refused(other_architecture, "\"mamba\"");
    GgufBuilder partial_rope = llama_model("llama.rope.dimension_count").builder;
    partial_rope.add_u32("llama.rope.dimension_count", 2);
    expect_refused(partial_rope, "partial RoPE");
    GgufBuilder scaled = llama_model().builder;
    scaled.add_string("llama.rope.scaling.type", "linear");
    expect_refused(scaled, "scaled RoPE");

    // A wrong shape: attn_k with the rows of attn_q.
    WrittenModel wrong = llama_model("blk.0.attn_k.weight");
    put_tensor(wrong, "blk.0.attn_k.weight", {D, D});
    expect_refused(wrong.builder, "\"blk.0.attn_k.weight\" has shape [8, 8], expected [4, 8]");

    // Tokenizers attn-viz cannot use.
    auto expect_tokenizer_refused = [&](const GgufBuilder& b, const std::string& fragment) {
        CAPTURE(fragment);
        write_text(path, b.bytes());
        expect_error(ErrorKind::bad_input, [&] { read_gguf_llama_tokenizer(GgufFile(path), V); },
                     {"bad.gguf", fragment});
    };
    GgufBuilder bert;
    bert.add_string("tokenizer.ggml.model", "bert");
    expect_tokenizer_refused(
        bert, "tokenizer.ggml.model is \"bert\"; attn-viz reads the SentencePiece \"llama\" and the byte-level BPE");
    GgufBuilder bos;
    bos.add_string("tokenizer.ggml.model", "llama");
    bos.add_string_array("tokenizer.ggml.tokens", vocabulary());
    bos.add_u32("tokenizer.ggml.bos_token_id", 263);  // any id among the tokens is taken (Gemma's is 2)
    expect_tokenizer_refused(bos, "bos_token_id 263 is not one of its 263 tokens");
    GgufBuilder few;
    few.add_string("tokenizer.ggml.model", "llama");
    few.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
    expect_tokenizer_refused(few, "holds 2 tokens");
    write_text(dir / "m.bin", "not a GGUF file");
    expect_error(ErrorKind::bad_input, [&] { read_model_tokenizer(open_model_files(dir / "m.bin"), "", V); },
                 {"m.bin", "tokenizer"});
}

TEST_CASE("GGUF llama: an unused tensor of a type attn-viz cannot decode does not stop the model or its tokenizer") {
    ScratchDir dir;
    const std::string path = dir / "extra.gguf", plain = dir / "plain.gguf";
    const WrittenModel base = llama_model();  // random weights: every file below holds these
    write_text(plain, base.builder.bytes());
    const uint64_t expected = model_fingerprint(read_model_weights(open_model_files(plain)));
    // Q2_K (256 values in 84 bytes), IQ2_XXS (256 in 66) and IQ4_NL (32 in 18): read in the file's
    // structure, used by nothing; a tensor of such a type is refused by name only when loaded
    // (tests/formats/test_formats_gguf.cpp).
    const std::tuple<uint32_t, std::string, int64_t, size_t> types[] = {
        {10, "Q2_K", 256, 84}, {16, "IQ2_XXS", 256, 66}, {20, "IQ4_NL", 32, 18}};
    for (const auto& [type, name, values, bytes] : types) {
        CAPTURE(name);
        WrittenModel m = base;
        m.builder.add_tensor("unused.weight", {values}, type, std::string(bytes, '\x11'));
        write_text(path, m.builder.bytes());
        CHECK(model_fingerprint(read_model_weights(open_model_files(path))) == expected);
        const GgufFile file(path);  // the file's structure is read
        CHECK(file.find_tensor("unused.weight")->bytes == bytes);
        expect_error(ErrorKind::bad_input, [&] { file.load("unused.weight"); },
                     {"extra.gguf: tensor \"unused.weight\": is of type " + name + ", which attn-viz cannot decode"});
        CHECK(read_model_tokenizer(open_model_files(path), "", V)->vocab_size() == V);
    }
    // A type id ggml does not have (removed Q4_2) refuses the file as soon as it is opened.
    WrittenModel m = llama_model();
    m.builder.add_tensor("unused.weight", {32}, 4, std::string(18, '\x11'));
    write_text(path, m.builder.bytes());
    expect_error(ErrorKind::bad_input, [&] { GgufFile{path}; }, {"extra.gguf", "unknown ggml type 4"});
}

TEST_CASE("GGUF llama tokenizer from a vocabulary-only file (no tensors), checked on its own or against a model") {
    ScratchDir dir;
    auto tokenizer_file = [&](std::vector<std::string> tokens, uint32_t eos) {
        GgufBuilder b;
        b.add_string("general.architecture", "llama");
        b.add_string("tokenizer.ggml.model", "llama");
        std::vector<float> scores(tokens.size(), 0.0f);
        scores[space_a] = -1.0f;
        b.add_string_array("tokenizer.ggml.tokens", tokens);
        b.add_f32_array("tokenizer.ggml.scores", scores);
        b.add_u32("tokenizer.ggml.bos_token_id", 1);
        b.add_u32("tokenizer.ggml.eos_token_id", eos);
        return b;
    };
    const std::string path = dir / "vocab.gguf";
    write_text(path, tokenizer_file(vocabulary(), V - 1).bytes());  // an EOS other than 2, as Phi-3's 32000
    const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(GgufFile(path), 0);
    CHECK(tokenizer.vocab_size() == V);
    CHECK(tokenizer.encode("ab c", true, false) == std::vector<int>{1, space_a, b, space, 'c' + 3});
    for (const int64_t vocab : {int64_t{0}, int64_t{V}}) {  // as --tokenizer: the model's tokenizer, with its BOS
        const std::unique_ptr<ModelTokenizer> given = read_tokenizer_file(path, vocab);
        CHECK(given->vocab_size() == V);
        CHECK(given->encode("ab c") == std::vector<int>{1, space_a, b, space, 'c' + 3});
    }
    expect_error(ErrorKind::bad_input, [&] { read_tokenizer_file(path, V + 1); },
                 {"vocab.gguf", "holds 263 tokens but the model's vocabulary has 264"});

    // With a token_embd.weight, its rows are the vocabulary the tokens must fill.
    GgufBuilder with_model = tokenizer_file(vocabulary(), 2);
    with_model.add_f32_tensor("token_embd.weight", {D, V + 1}, random_tensor({V + 1, D}).data);
    write_text(path, with_model.bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama_tokenizer(GgufFile(path), 0); },
                 {"vocab.gguf", "the model's vocabulary has 264"});

    write_text(path, tokenizer_file(vocabulary(), V).bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama_tokenizer(GgufFile(path), 0); },
                 {"vocab.gguf", "eos_token_id 263 is not one of its 263 tokens"});
    std::vector<std::string> no_newline = vocabulary();
    no_newline[3 + '\n'] = "x";
    write_text(path, tokenizer_file(no_newline, 2).bytes());
    // Byte tokens are looked up by their spelling wherever they are: a missing one fails when a text needs it.
    const Llama2cTokenizer no_byte = read_gguf_llama_tokenizer(GgufFile(path), 0);
    expect_error(ErrorKind::bad_input, [&] { no_byte.encode("a\nb", true, false); },
                 {"vocab.gguf", "no byte token for byte 10"});

    // One token (BOS 1 named, as before the check): refused at load, vocabulary-only or with a
    // one-row token_embd.weight, rather than encode reading past it.
    GgufBuilder one_token;
    one_token.add_string("general.architecture", "llama");
    one_token.add_string("tokenizer.ggml.model", "llama");
    one_token.add_string_array("tokenizer.ggml.tokens", {"\xe2\x96\x81"});
    one_token.add_f32_array("tokenizer.ggml.scores", {0.0f});
    one_token.add_u32("tokenizer.ggml.bos_token_id", 1);
    write_text(path, one_token.bytes());
    for (int64_t vocab : {0, 1})
        expect_error(ErrorKind::bad_input, [&] { read_tokenizer_file(path, vocab); },
                     {"vocab.gguf", "holds 1 token;", "needs at least 3"});
    one_token.add_f32_tensor("token_embd.weight", {D, 1}, random_tensor({1, D}).data);
    write_text(path, one_token.bytes());
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama_tokenizer(GgufFile(path), 0); },
                 {"vocab.gguf", "holds 1 token;", "needs at least 3"});
}

}  // TEST_SUITE("models")
