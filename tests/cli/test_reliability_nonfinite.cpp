// Non-finite weights and embeddings: refused by default with the tensor's name and the index of
// the first bad value with Remedy::allow_nonfinite, loaded with LoadLimits::allow_nonfinite, and
// then reported per poisoned head.
#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include "attention.hpp"
#include "cli_fixtures.hpp"
#include "expect_error.hpp"
#include "llama2c_checkpoint.hpp"
#include "load_limits.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "poisoned_heads.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"
#include "token_file.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_value = std::numeric_limits<float>::infinity();

int64_t random_index(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng()); }

// Writes DIR/w.json whose W_K comes from DIR/wk.npy, with `bad` at [row, col] of it.
void write_weights_with_bad_npy(const ScratchDir& dir, int64_t D, int64_t H, int64_t row, int64_t col, float bad) {
    LayerWeights w = random_layer(D, H, H, false, false);
    w.w_k.data[size_t(row * D + col)] = bad;
    write_npy(dir / "wk.npy", w.w_k);
    w.w_k = random_tensor({D, D});
    write_weights_file(dir / "w.json", w);
    nlohmann::json doc = nlohmann::json::parse(read_text(dir / "w.json"));
    doc["W_K"] = {{"npy", "wk.npy"}};
    write_text(dir / "w.json", doc.dump());
}

}  // namespace

TEST_SUITE("reliability") {

TEST_CASE("an .npy weight with NaN or Inf is refused naming the file, the tensor and the index") {
    for (float bad : {nan_value, inf_value, -inf_value}) {
        ScratchDir dir;
        const int64_t D = 6, row = random_index(D), col = random_index(D);
        write_weights_with_bad_npy(dir, D, 2, row, col, bad);
        expect_error(
            ErrorKind::bad_input, [&] { read_weights_file(dir / "w.json"); },
            {dir / "wk.npy", "W_K[" + std::to_string(row) + ", " + std::to_string(col) + "] is not finite"},
            Remedy::allow_nonfinite);
        const LayerWeights w = read_weights_file(dir / "w.json", limits_allowing_nonfinite());
        CHECK(!std::isfinite(w.w_k.data[size_t(row * D + col)]));
    }
}

TEST_CASE("inline JSON numbers beyond float32 are refused unless non-finite values are allowed") {
    ScratchDir dir;
    write_text(dir / "w.json", R"({"format":"attn-viz/weights@1","d_model":2,"num_heads":1,"W_Q":[[1,2],[3,-1e39]],)"
                               R"("W_K":[[1,0],[0,1]],"W_V":[[1,0],[0,1]],"W_O":[[1,0],[0,1]]})");
    expect_error(
        ErrorKind::bad_input, [&] { read_weights_file(dir / "w.json"); },
        {"w.json", "W_Q[1, 1] is not a finite float32"}, Remedy::allow_nonfinite);
    CHECK(read_weights_file(dir / "w.json", limits_allowing_nonfinite()).w_q.data[3] == -inf_value);
}

TEST_CASE("a safetensors tensor with NaN is refused when loaded, naming it and the index") {
    ScratchDir dir;
    for (SafetensorsDtype dtype :
         {SafetensorsDtype::f32, SafetensorsDtype::f16, SafetensorsDtype::bf16, SafetensorsDtype::f64}) {
        const int64_t rows = 3, cols = 5, at = random_index(rows * cols);
        Tensor t = random_tensor({rows, cols});
        t.data[size_t(at)] = nan_value;
        write_safetensors(dir / "m.safetensors", {{"fine", random_tensor({4})}, {"layer.weight", t}}, dtype);
        const SafetensorsFile file(dir / "m.safetensors");
        CHECK(file.load("fine").size() == 4);
        expect_error(
            ErrorKind::bad_input, [&] { file.load("layer.weight"); },
            {dir / "m.safetensors",
             "layer.weight[" + std::to_string(at / cols) + ", " + std::to_string(at % cols) + "] is not finite"},
            Remedy::allow_nonfinite);
        CHECK(std::isnan(
            SafetensorsFile(dir / "m.safetensors", limits_allowing_nonfinite()).load("layer.weight").data[size_t(at)]));
    }
}

TEST_CASE("embeddings from .npy with Inf are refused") {
    ScratchDir dir;
    Tensor x = random_tensor({4, 3});
    const int64_t at = random_index(12);
    x.data[size_t(at)] = inf_value;
    write_npy(dir / "x.npy", x);
    expect_error(
        ErrorKind::bad_input, [&] { read_embeddings(dir / "x.npy", ""); },
        {"x.npy", "embeddings[" + std::to_string(at / 3) + ", " + std::to_string(at % 3) + "] is not finite"},
        Remedy::allow_nonfinite);
    CHECK(read_embeddings(dir / "x.npy", "", limits_allowing_nonfinite()).data[size_t(at)] == inf_value);
}

TEST_CASE("a llama2.c checkpoint with NaN names the array, the layer and the index as stored") {
    ScratchDir dir;
    // dim 4, hidden 6, 2 layers, 2 heads, 1 KV head, vocab 5, seq_len 3: wq of layer 1 starts after
    // the embedding table (5*4), rms_att (2*4) and wq of layer 0 (16).
    std::string bytes = llama2c_checkpoint_bytes(4, 6, 2, 2, 1, 5, 3);
    const int64_t at = random_index(16);
    set_checkpoint_float(bytes, 5 * 4 + 2 * 4 + 16 + at, nan_value);
    write_text(dir / "m.bin", bytes);
    expect_error(
        ErrorKind::bad_input, [&] { read_llama2c_checkpoint(dir / "m.bin"); },
        {"m.bin", "layer 1 wq[" + std::to_string(at / 4) + ", " + std::to_string(at % 4) + "] is not finite"},
        Remedy::allow_nonfinite);
    CHECK(std::isnan(read_llama2c_checkpoint(dir / "m.bin", limits_allowing_nonfinite())
                         .blocks->held(1)
                         ->attention.w_q.data[size_t((at % 4) * 4 + at / 4)]));
}

TEST_CASE("NaN weights of one head poison exactly that head, without crashing the attention path") {
    OnednnBackend backend;
    for (auto [D, H, T] : {std::tuple{8, 2, 5}, std::tuple{12, 3, 1}, std::tuple{6, 1, 7}}) {
        LayerWeights w = random_layer(D, H, H, T > 1, true);
        const int64_t d_h = D / H, head = random_index(H);
        // A NaN in W_Q's columns of `head` reaches only that head's scores, map and output share.
        w.w_q.data[size_t(random_index(D) * D + head * d_h + random_index(d_h))] = nan_value;
        AttentionLayer layer(backend, w);
        const Tensor x = random_tensor({T, D});
        AttentionRequest request;
        request.input = &x;
        const LayerResult r = layer.run(request);
        CHECK(poisoned_heads(r, 2) == std::vector<std::string>{"L2H" + std::to_string(head)});
    }
    // A NaN embedding reaches every head through its key.
    const LayerWeights w = random_layer(8, 4, 4, false, false);
    AttentionLayer layer(backend, w);
    Tensor x = random_tensor({3, 8});
    x.data[size_t(random_index(24))] = nan_value;
    AttentionRequest request;
    request.input = &x;
    CHECK(poisoned_heads(layer.run(request), 0).size() == 4);
    // Finite input: none.
    const Tensor clean = random_tensor({3, 8});
    request.input = &clean;
    CHECK(poisoned_heads(layer.run(request), 0).empty());
}

TEST_CASE("run --allow-nonfinite loads NaN weights, names the poisoned head and still writes its results") {
    ScratchDir dir;
    const int64_t D = 8, H = 2;
    write_layer_fixture(dir, D, H, 4);
    LayerWeights w = read_weights_file(dir / "w.json");
    const int64_t head = random_index(H);
    w.w_q.data[size_t(random_index(D) * D + head * (D / H))] = nan_value;
    write_npy(dir / "wq.npy", w.w_q);
    nlohmann::json doc = nlohmann::json::parse(read_text(dir / "w.json"));
    doc["W_Q"] = {{"npy", "wq.npy"}};
    write_text(dir / "w.json", doc.dump());
    const std::string args = layer_fixture_run(dir) + " -q";
    CommandResult r = run_attn_viz(args);
    CHECK(r.exit_code == 3);
    CHECK(r.output.find("W_Q[") != std::string::npos);
    CHECK(r.output.find("--allow-nonfinite") != std::string::npos);
    r = run_attn_viz(args + " --allow-nonfinite");
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("non-finite values reach L0H" + std::to_string(head) + "\n") != std::string::npos);
    CHECK(std::filesystem::exists(dir / "out/stats.json"));
}

}  // TEST_SUITE("reliability")
