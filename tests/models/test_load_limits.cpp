// Every loader reads within the LoadLimits it is given, and hands them on to the loaders it calls:
// a budget just below what a file needs is refused, one that covers it is not, and non-finite
// values pass only when allowed.
#include <filesystem>
#include <limits>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "layer_source.hpp"
#include "load_limits.hpp"
#include "npy.hpp"
#include "reliability_fixtures.hpp"
#include "safetensors.hpp"
#include "sequence_stream.hpp"
#include "support.hpp"
#include "weights_file.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A D x D layer of H heads with random projections and no biases.
LayerWeights random_weights(int64_t D, int64_t H) {
    LayerWeights w;
    w.d_model = D, w.num_heads = w.num_kv_heads = H, w.d_head = D / H;
    w.w_q = random_tensor({D, D}), w.w_k = random_tensor({D, D}), w.w_v = random_tensor({D, D}),
    w.w_o = random_tensor({D, D});
    return w;
}

// Reads every sequence of `path`; returns how many there were.
int64_t read_stream(const std::string& path, int64_t d_model, const LoadLimits& limits) {
    CorpusDocuments documents(path, limits);
    SequenceStream stream(documents, d_model, limits);
    SequenceInput sequence;
    std::string where;
    int64_t count = 0;
    while (stream.next(sequence, where)) ++count;
    return count;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("a corpus stream checks each line against the budget and passes its limits to the line's tensors") {
    ScratchDir dir;
    const int64_t T = std::uniform_int_distribution<int64_t>(1, 6)(rng()), D = 3;
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) rows.push_back({1.5 * double(t), -1.0, 0.25});
    const std::string line = nlohmann::json{{"embeddings", rows}}.dump();
    write_text(dir / "c.jsonl", line + "\n" + line + "\n");
    const uint64_t needed = line.size() * json_bytes_per_text_byte;
    CHECK(read_stream(dir / "c.jsonl", D, limits_with_budget(needed)) == 2);
    expect_error(
        ErrorKind::bad_input, [&] { read_stream(dir / "c.jsonl", D, limits_with_budget(needed - 1)); },
        {"c.jsonl:1: line is longer than " + std::to_string(line.size() - 1) +
         " bytes, the longest the memory budget allows"},
        Remedy::raise_memory_budget);

    rows[0][1] = 1e39;  // beyond float32
    write_text(dir / "bad.jsonl", nlohmann::json{{"embeddings", rows}}.dump() + "\n");
    expect_error(
        ErrorKind::bad_input, [&] { read_stream(dir / "bad.jsonl", D, {}); }, {"bad.jsonl:1", "embeddings[0, 1]"},
        Remedy::allow_nonfinite);
    CHECK(read_stream(dir / "bad.jsonl", D, limits_allowing_nonfinite()) == 1);
}

TEST_CASE("layer and sequence sources hand their limits to the loader of each file type") {
    ScratchDir dir;
    const int64_t D = 32, T = std::uniform_int_distribution<int64_t>(2, 9)(rng());
    // A safetensors checkpoint whose fused projection is over a budget its header fits in (16
    // bytes per header byte, some 2.5 KB).
    const LayerWeights w = random_weights(D, 2);
    write_safetensors(dir / "m.safetensors",
                      {{"in_proj_weight", random_tensor({3 * D, D})}, {"out_proj.weight", transposed(w.w_o)}});
    LayerSource layer{dir / "m.safetensors", "torch-mha", 0, {}};
    layer.options.num_heads = 2;
    CHECK(load_layer_weights(layer).d_model == D);
    expect_error(
        ErrorKind::bad_input, [&] { load_layer_weights(layer, limits_with_budget(3 * D * D * 4 - 1)); },
        {"in_proj_weight", "memory budget"}, Remedy::raise_memory_budget);
    // A weights file and .npy embeddings, with one Inf among them.
    write_weights_file(dir / "w.json", w);
    CHECK(load_layer_weights({dir / "w.json", "", 0, {}},
                             limits_with_budget(std::filesystem::file_size(dir / "w.json") * 16))
              .d_model == D);
    expect_error(
        ErrorKind::bad_input,
        [&] {
            load_layer_weights({dir / "w.json", "", 0, {}}, limits_with_budget(100));
        },
        {"w.json", "memory budget"}, Remedy::raise_memory_budget);
    Tensor x = random_tensor({T, D});
    x.data[size_t(T * D - 1)] = std::numeric_limits<float>::infinity();
    write_npy(dir / "x.npy", x);
    expect_error(
        ErrorKind::bad_input,
        [&] {
            load_sequence({dir / "x.npy", "", ""}, D);
        },
        {"x.npy", "is not finite"}, Remedy::allow_nonfinite);
    CHECK(load_sequence({dir / "x.npy", "", ""}, D, limits_allowing_nonfinite()).embeddings.dim(0) == T);
    expect_error(
        ErrorKind::bad_input,
        [&] {
            load_sequence({dir / "x.npy", "", ""}, D, limits_with_budget(uint64_t(T * D) * 4 - 1));
        },
        {"x.npy: .npy array of shape [", "memory budget"}, Remedy::raise_memory_budget);
}

}  // TEST_SUITE("models")
