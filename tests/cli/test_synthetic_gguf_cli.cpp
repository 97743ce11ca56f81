// scripts/make_synthetic_gguf.py (the 7B benchmark's model, here in tiny shapes): the file holds
// the tensors and metadata llama.cpp writes for a llama model, in each --type, with weights of
// the promised magnitude, and attn-viz model runs it to finite statistics for every head.
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "support.hpp"
#include "synthetic_gguf.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The file's metadata and tensor infos are what the script promises for `shape` and `type`.
void check_layout(const GgufFile& file, const std::string& type, uint32_t type_id, const SyntheticShape& s) {
    CHECK(file.version() == 3);
    CHECK(file.get_string("general.architecture") == "llama");
    CHECK(file.get_uint("llama.block_count") == uint64_t(s.layers));
    CHECK(file.get_uint("llama.embedding_length") == uint64_t(s.dim));
    CHECK(file.get_uint("llama.feed_forward_length") == uint64_t(s.ffn));
    CHECK(file.get_uint("llama.attention.head_count") == uint64_t(s.heads));
    CHECK(file.get_uint("llama.attention.head_count_kv") == uint64_t(s.kv_heads));
    CHECK(file.get_uint("llama.context_length") == 4096u);
    CHECK(file.get_uint("llama.rope.dimension_count") == uint64_t(s.dim / s.heads));
    CHECK(file.get_uint("llama.vocab_size") == uint64_t(s.vocab));
    CHECK(file.get_float("llama.rope.freq_base") == doctest::Approx(10000.0));
    CHECK(file.get_float("llama.attention.layer_norm_rms_epsilon") == doctest::Approx(1e-5));
    CHECK(file.get_uint("general.quantization_version") == 2u);
    CHECK(file.get_string("tokenizer.ggml.model") == "llama");
    const std::vector<std::string> tokens = file.get_string_array("tokenizer.ggml.tokens");
    REQUIRE(tokens.size() == size_t(s.vocab));
    CHECK(tokens[0] == "<unk>");
    CHECK(tokens[2] == "</s>");
    CHECK(tokens[3] == "<0x00>");
    CHECK(tokens[258] == "<0xFF>");
    CHECK(tokens[259] == "\xe2\x96\x81");
    const std::vector<int64_t> token_types = file.get_int_array("tokenizer.ggml.token_type");
    REQUIRE(token_types.size() == tokens.size());
    CHECK(token_types[1] == 3);    // control
    CHECK(token_types[100] == 6);  // byte
    CHECK(token_types[259] == 1);  // normal
    CHECK(file.get_float_array("tokenizer.ggml.scores").size() == tokens.size());

    REQUIRE(file.tensors().size() == size_t(3 + 9 * s.layers));
    const int64_t kv = s.kv_heads * (s.dim / s.heads);
    const std::string last = "blk." + std::to_string(s.layers - 1) + ".";
    const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
        {"token_embd.weight", {s.dim, s.vocab}},
        {"output.weight", {s.dim, s.vocab}},
        {"output_norm.weight", {s.dim}},
        {last + "attn_q.weight", {s.dim, s.dim}},
        {last + "attn_k.weight", {s.dim, kv}},
        {last + "attn_v.weight", {s.dim, kv}},
        {last + "attn_output.weight", {s.dim, s.dim}},
        {last + "ffn_gate.weight", {s.dim, s.ffn}},
        {last + "ffn_up.weight", {s.dim, s.ffn}},
        {last + "ffn_down.weight", {s.ffn, s.dim}},
        {last + "attn_norm.weight", {s.dim}},
        {last + "ffn_norm.weight", {s.dim}}};
    for (const auto& [name, dims] : expected) {
        CAPTURE(name);
        const GgufTensorInfo* info = file.find_tensor(name);
        REQUIRE(info != nullptr);
        CHECK(info->dims == dims);
        CHECK(info->type == (dims.size() == 1 ? 0u : type_id));
    }
    // Dequantized matrices are centred with standard deviation ~0.02; norms are ~1.
    for (const std::string& name : {last + "ffn_down.weight", std::string("token_embd.weight")}) {
        CAPTURE(name);
        const Tensor w = file.load(name);
        double sum = 0, squares = 0;
        for (float v : w.data) sum += v, squares += double(v) * v;
        const double n = double(w.data.size()), mean = sum / n, std = std::sqrt(squares / n - mean * mean);
        CHECK(std::abs(mean) < 0.002);
        CHECK((std > 0.017 && std < 0.023));
    }
    const Tensor norm = file.load("output_norm.weight");
    for (float v : norm.data) CHECK((v > 0.5f && v < 1.5f));
    const ModelConfig config = gguf_llama_config(file);
    CHECK(config.n_kv_heads == s.kv_heads);
    CHECK(!config.shared_classifier);
}

}  // namespace

TEST_SUITE("python") {

TEST_CASE(
    "make_synthetic_gguf.py writes llama.cpp's llama layout in F32, F16, Q8_0 and Q4_K, and attn-viz model runs it") {
    const unsigned seed = static_cast<unsigned>(rng()() % 100000);
    const struct {
        const char* type;
        uint32_t id;
        SyntheticShape shape;
    } cases[] = {{"Q4_K", 12, {256, 2, 4, 2, 512, 300}},
                 {"Q8_0", 8, {64, 3, 2, 2, 96, 270}},
                 {"F16", 1, {48, 2, 3, 1, 40, 260}},
                 {"F32", 0, {32, 1, 1, 1, 24, 262}}};
    for (const auto& c : cases) {
        const std::string type = c.type;
        CAPTURE(type);
        ScratchDir dir;
        const std::string path = dir / "tiny.gguf";
        make_synthetic_gguf(path, c.type, c.shape, seed);
        check_layout(GgufFile(path), c.type, c.id, c.shape);

        const CommandResult r = run_attn_viz("model -q --model " + path +
                                             " --tokens 1,258,7,259,42,99,5 --stats-only --out " + (dir / "out"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        REQUIRE(stats["heads"].size() == size_t(c.shape.layers * c.shape.heads));
        for (const auto& head : stats["heads"]) {
            REQUIRE(head["entropy"].is_number());
            CHECK(std::isfinite(head["entropy"].get<double>()));
            CHECK(head["output_share"].is_number());
        }
    }
}

TEST_CASE("make_synthetic_gguf.py: its vocabulary encodes text, and shapes a type cannot hold are refused by name") {
    ScratchDir dir;
    const SyntheticShape tiny{256, 1, 2, 1, 256, 400};
    make_synthetic_gguf(dir / "t.gguf", "Q4_K", tiny, 3);
    const CommandResult text = run_attn_viz("model --model " + (dir / "t.gguf") +
                                            " --text \"abc ab, z!\" --stats-only --out " + (dir / "out"));
    REQUIRE_MESSAGE(text.exit_code == 0, text.output);
    CHECK(text.output.find("9 tokens: abc ab, z!") != std::string::npos);  // <s> \u2581a b c \u2581a b , \u2581z !

    const CommandResult odd =
        run_command("/usr/bin/python3 " + source_dir() + "/scripts/make_synthetic_gguf.py --out " + (dir / "x.gguf") +
                    " --type Q4_K --dim 96 --heads 3 --kv-heads 2 --ffn 200 --vocab 100 2>&1");
    CHECK(odd.exit_code != 0);
    CHECK(odd.output.find("--dim 96 is not a multiple of Q4_K's block of 256 values") != std::string::npos);
    CHECK(odd.output.find("--heads 3 is not a multiple of --kv-heads 2") != std::string::npos);
    CHECK(odd.output.find("--vocab 100 is too small") != std::string::npos);
}

}  // TEST_SUITE("python")
