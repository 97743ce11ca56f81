// Layout presets: random layers written in each framework's naming and orientation, read back
// with load_layer; options vs config.json; error messages for missing tensors and bad layers.
#include <cmath>
#include <filesystem>
#include <functional>
#include <numbers>

#include <doctest/doctest.h>

#include "bert_layer_tensors.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "layouts.hpp"
#include "safetensors.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

LayerWeights random_layer(int64_t d_model, int64_t heads, int64_t kv_heads, int64_t d_head, bool biases) {
    LayerWeights w;
    w.d_model = d_model, w.num_heads = heads, w.num_kv_heads = kv_heads, w.d_head = d_head;
    w.w_q = random_tensor({d_model, heads * d_head});
    w.w_k = random_tensor({d_model, kv_heads * d_head});
    w.w_v = random_tensor({d_model, kv_heads * d_head});
    w.w_o = random_tensor({heads * d_head, d_model});
    if (biases) {
        w.b_q = random_tensor({heads * d_head});
        w.b_k = random_tensor({kv_heads * d_head});
        w.b_v = random_tensor({kv_heads * d_head});
        w.b_o = random_tensor({d_model});
    }
    return w;
}

// Stacks tensors along axis 0 (rows of matrices, elements of vectors).
Tensor stack_rows(const std::vector<const Tensor*>& parts) {
    std::vector<int64_t> shape = parts.front()->shape;
    shape[0] = 0;
    for (const Tensor* p : parts) shape[0] += p->dim(0);
    Tensor out(shape);
    size_t at = 0;
    for (const Tensor* p : parts)
        at = std::copy(p->data.begin(), p->data.end(), out.data.begin() + at) - out.data.begin();
    return out;
}

// Side by side: [rows, a] [rows, b] [rows, c] -> [rows, a + b + c].
Tensor stack_columns(const std::vector<const Tensor*>& parts) {
    std::vector<Tensor> transposes;
    std::vector<const Tensor*> pointers;
    for (const Tensor* p : parts) transposes.push_back(transposed(*p));
    for (const Tensor& t : transposes) pointers.push_back(&t);
    return transposed(stack_rows(pointers));
}

// Each framework's tensors for one layer, the inverse of the preset's conversion.
NamedTensors export_torch_mha(const LayerWeights& w, const std::string& base) {
    const Tensor q = transposed(w.w_q), k = transposed(w.w_k), v = transposed(w.w_v);
    return {{base + "in_proj_weight", stack_rows({&q, &k, &v})},
            {base + "in_proj_bias", stack_rows({&w.b_q, &w.b_k, &w.b_v})},
            {base + "out_proj.weight", transposed(w.w_o)},
            {base + "out_proj.bias", w.b_o}};
}

NamedTensors export_gpt2(const LayerWeights& w, const std::string& base) {
    return {{base + "attn.c_attn.weight", stack_columns({&w.w_q, &w.w_k, &w.w_v})},
            {base + "attn.c_attn.bias", stack_rows({&w.b_q, &w.b_k, &w.b_v})},
            {base + "attn.c_proj.weight", w.w_o},
            {base + "attn.c_proj.bias", w.b_o}};
}

NamedTensors export_llama(const LayerWeights& w, const std::string& base) {
    NamedTensors t = {{base + "self_attn.q_proj.weight", transposed(w.w_q)},
                      {base + "self_attn.k_proj.weight", transposed(w.w_k)},
                      {base + "self_attn.v_proj.weight", transposed(w.w_v)},
                      {base + "self_attn.o_proj.weight", transposed(w.w_o)}};
    if (!w.b_q.empty())  // Qwen2 style
        t.insert(t.end(), {{base + "self_attn.q_proj.bias", w.b_q},
                           {base + "self_attn.k_proj.bias", w.b_k},
                           {base + "self_attn.v_proj.bias", w.b_v}});
    return t;
}

void check_same(const Tensor& loaded, const Tensor& original, double tolerance, const char* what) {
    CAPTURE(what);
    REQUIRE(loaded.shape == original.shape);
    CHECK(max_abs_diff(loaded, original) <= tolerance);
}

void check_layer(const LayerWeights& loaded, const LayerWeights& original, double tolerance) {
    CHECK(loaded.d_model == original.d_model);
    CHECK(loaded.num_heads == original.num_heads);
    CHECK(loaded.num_kv_heads == original.num_kv_heads);
    CHECK(loaded.d_head == original.d_head);
    check_same(loaded.w_q, original.w_q, tolerance, "W_Q");
    check_same(loaded.w_k, original.w_k, tolerance, "W_K");
    check_same(loaded.w_v, original.w_v, tolerance, "W_V");
    check_same(loaded.w_o, original.w_o, tolerance, "W_O");
    check_same(loaded.b_q, original.b_q, tolerance, "b_Q");
    check_same(loaded.b_k, original.b_k, tolerance, "b_K");
    check_same(loaded.b_v, original.b_v, tolerance, "b_V");
    if (!original.b_o.empty()) check_same(loaded.b_o, original.b_o, tolerance, "b_O");
}

// load_layer must fail with bad_input mentioning every fragment.
void expect_load_error(const std::string& path, const std::string& layout, int layer, const LayoutOptions& options,
                       const std::vector<std::string>& fragments, Remedy remedy = Remedy::none) {
    expect_error(
        ErrorKind::bad_input, [&] { load_layer(path, layout, layer, options); }, fragments, remedy);
}

struct LayoutCase {
    std::string layout;
    std::string prefix;  // written before each layer's names
    std::function<NamedTensors(const LayerWeights&, const std::string&)> exporter;
    std::function<std::string(int)> layer_path;
    bool causal;
    RopeStyle rope;
};

}  // namespace

TEST_SUITE("models") {

TEST_CASE("each layout preset reads back random layers in F32, F16 and BF16") {
    const std::vector<LayoutCase> cases = {
        {"torch-mha", "", export_torch_mha, [](int) { return std::string(); }, false, RopeStyle::none},
        {"torch-mha", "blocks.{layer}.attn.", export_torch_mha,
         [](int l) { return "blocks." + std::to_string(l) + ".attn."; }, false, RopeStyle::none},
        {"bert", "bert.", bert_layer_tensors, [](int l) { return "bert.encoder.layer." + std::to_string(l) + "."; },
         false, RopeStyle::none},
        {"bert", "", bert_layer_tensors, [](int l) { return "encoder.layer." + std::to_string(l) + "."; }, false,
         RopeStyle::none},
        {"gpt2", "", export_gpt2, [](int l) { return "h." + std::to_string(l) + "."; }, true, RopeStyle::none},
        {"gpt2", "transformer.", export_gpt2, [](int l) { return "transformer.h." + std::to_string(l) + "."; }, true,
         RopeStyle::none},
        {"llama", "", export_llama, [](int l) { return "model.layers." + std::to_string(l) + "."; }, true,
         RopeStyle::half_split},
    };
    struct Dims {
        int64_t d, h, d_head;
    };
    ScratchDir dir;
    for (const LayoutCase& c : cases) {
        for (Dims dims : {Dims{8, 2, 4}, Dims{12, 3, 4},
                          c.rope == RopeStyle::none ? Dims{5, 1, 5} : Dims{6, 1, 6}}) {  // RoPE needs even d_h
            for (SafetensorsDtype dtype : {SafetensorsDtype::f32, SafetensorsDtype::f16, SafetensorsDtype::bf16}) {
                INFO(c.layout << " prefix " << c.prefix << " D=" << dims.d << " "
                              << std::string(safetensors_dtype_name(dtype)));
                const bool single = c.layout == "torch-mha" && c.prefix.empty();
                const int layers = single ? 1 : 3;
                std::vector<LayerWeights> originals;
                NamedTensors tensors;
                for (int l = 0; l < layers; ++l) {
                    originals.push_back(random_layer(dims.d, dims.h, dims.h, dims.d_head, c.layout != "llama"));
                    for (auto& named : c.exporter(originals.back(), c.layer_path(l)))
                        tensors.push_back(std::move(named));
                }
                const std::string path = dir / "model.safetensors";
                write_safetensors(path, tensors, dtype);
                LayoutOptions options;
                options.num_heads = dims.h;
                if (c.prefix.find("{layer}") != std::string::npos) options.prefix = c.prefix;
                CHECK(count_layers(SafetensorsFile(path), c.layout, options) == layers);
                const double tolerance = dtype == SafetensorsDtype::f32   ? 0.0
                                         : dtype == SafetensorsDtype::f16 ? 1.0 / 2048
                                                                          : 1.0 / 256;
                for (int l = 0; l < layers; ++l) {
                    const LayerWeights loaded = load_layer(path, c.layout, l, options);
                    check_layer(loaded, originals[static_cast<size_t>(l)], tolerance);
                    CHECK(loaded.causal == c.causal);
                    CHECK(loaded.rope == c.rope);
                }
                expect_load_error(path, c.layout, layers, options,
                                  {"out of range", std::to_string(layers) + " " + c.layout + " layer"});
            }
        }
    }
}

TEST_CASE("llama layout: grouped-query heads, Qwen2 biases, config.json and option precedence") {
    ScratchDir dir;
    struct Dims {
        int64_t d, h, kv, d_head;
        bool biases;
    };
    for (Dims dims :
         {Dims{16, 4, 2, 4, false}, Dims{16, 4, 1, 6, true}, Dims{6, 3, 3, 2, true}, Dims{8, 8, 2, 2, false}}) {
        INFO("D=" << dims.d << " H=" << dims.h << " KV=" << dims.kv);
        LayerWeights original = random_layer(dims.d, dims.h, dims.kv, dims.d_head, dims.biases);
        original.b_o = Tensor();  // Llama-family output projections have no bias
        write_safetensors(dir / "model.safetensors", export_llama(original, "model.layers.0."));
        // Without a config the head counts must be given, and a wrong KV count is explained.
        expect_load_error(dir / "model.safetensors", "llama", 0, {}, {"number of heads unknown"},
                          Remedy::give_num_heads);
        LayoutOptions options;
        options.num_heads = dims.h;
        if (dims.kv != dims.h)
            expect_load_error(dir / "model.safetensors", "llama", 0, options, {"key/value heads x"},
                              Remedy::give_num_kv_heads);
        options.num_kv_heads = dims.kv;
        LayerWeights loaded = load_layer(dir / "model.safetensors", "llama", 0, options);
        check_layer(loaded, original, 0.0);
        CHECK(loaded.rope_base == 10000.0);
        // config.json beside the checkpoint supplies what the options leave out ...
        write_text(
            dir / "config.json",
            R"({"num_attention_heads": )" + std::to_string(dims.h) + R"(, "num_key_value_heads": )" +
                std::to_string(dims.kv) + R"(, "hidden_size": )" + std::to_string(dims.d) +
                R"(, "rope_theta": 500000.0, "num_hidden_layers": 1, "rope_scaling": {"rope_type": "llama3",)"
                R"( "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
        loaded = load_layer(dir / "model.safetensors", "llama", 0, {});
        check_layer(loaded, original, 0.0);
        CHECK(loaded.rope_base == 500000.0);
        CHECK(loaded.rope_scaling.kind == RopeScaling::Kind::llama3);
        CHECK(loaded.rope_scaling.factor == 8.0);
        CHECK(loaded.rope_scaling.original_max_positions == 8192.0);
        CHECK(loaded.rope == RopeStyle::half_split);
        CHECK(loaded.causal);
        // ... and options override it.
        LayoutOptions overrides;
        overrides.rope_base = 1234.0, overrides.rope = RopeStyle::interleaved, overrides.causal = false;
        loaded = load_layer(dir / "model.safetensors", "llama", 0, overrides);
        CHECK(loaded.rope_base == 1234.0);
        CHECK(loaded.rope == RopeStyle::interleaved);
        CHECK_FALSE(loaded.causal);
        std::filesystem::remove(dir / "config.json");
    }
}

TEST_CASE(
    "RoPE scaling: linear divides every frequency; llama3 keeps the short wavelengths, divides the long, blends "
    "between") {
    LayerWeights layer;
    layer.d_head = 64, layer.rope_base = 500000.0;
    const std::vector<double> plain = rope_inverse_frequencies(layer);
    REQUIRE(plain.size() == 32);
    for (size_t i = 0; i < plain.size(); ++i)
        CHECK(plain[i] == doctest::Approx(std::pow(500000.0, -2.0 * double(i) / 64)).epsilon(1e-14));
    layer.rope_scaling.kind = RopeScaling::Kind::linear, layer.rope_scaling.factor = 4;
    const std::vector<double> linear = rope_inverse_frequencies(layer);
    for (size_t i = 0; i < plain.size(); ++i) CHECK(linear[i] == doctest::Approx(plain[i] / 4).epsilon(1e-14));
    layer.rope_scaling = {RopeScaling::Kind::llama3, 8.0, 1.0, 4.0, 8192.0};
    const std::vector<double> llama3 = rope_inverse_frequencies(layer);
    int kept = 0, divided = 0, blended = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
        const double wavelength = 2 * std::numbers::pi / plain[i];
        CAPTURE(i);
        if (wavelength < 8192.0 / 4) {
            CHECK(llama3[i] == plain[i]);
            ++kept;
        } else if (wavelength > 8192.0) {
            CHECK(llama3[i] == doctest::Approx(plain[i] / 8).epsilon(1e-14));
            ++divided;
        } else {
            CHECK(llama3[i] < plain[i]);
            CHECK(llama3[i] > plain[i] / 8);
            ++blended;
        }
    }
    CHECK(kept > 0);
    CHECK(divided > 0);
    CHECK(blended > 0);
    // Partial rotary: the frequencies of a rope_dims-wide head.
    layer.rope_scaling = {};
    layer.rope_dims = 16;
    const std::vector<double> partial = rope_inverse_frequencies(layer);
    REQUIRE(partial.size() == 8);
    CHECK(partial[1] == doctest::Approx(std::pow(500000.0, -2.0 / 16)).epsilon(1e-14));
}

TEST_CASE("layout errors name the file, the layer and the expected tensor") {
    ScratchDir dir;
    const LayerWeights w = random_layer(8, 2, 2, 4, true);
    NamedTensors tensors = bert_layer_tensors(w, "encoder.layer.0.");
    LayoutOptions options;
    options.num_heads = 2;
    // A missing key projection.
    NamedTensors without_key;
    for (auto& t : tensors)
        if (t.first.find("key.weight") == std::string::npos) without_key.push_back(t);
    write_safetensors(dir / "m.safetensors", without_key);
    expect_load_error(dir / "m.safetensors", "bert", 0, options,
                      {"m.safetensors", "layer 0", "encoder.layer.0.attention.self.key.weight"});
    // A misshapen output projection.
    NamedTensors bad_shape = tensors;
    for (auto& t : bad_shape)
        if (t.first.find("output.dense.weight") != std::string::npos) t.second = random_tensor({8, 5});
    write_safetensors(dir / "m.safetensors", bad_shape);
    expect_load_error(dir / "m.safetensors", "bert", 0, options, {"output.dense.weight", "[8, 5]", "expected [8, 8]"});
    // Heads that do not divide the width; a wrong layout; a config that disagrees with the tensors.
    write_safetensors(dir / "m.safetensors", tensors);
    options.num_heads = 3;
    expect_load_error(dir / "m.safetensors", "bert", 0, options, {"not divisible by 3 heads"});
    options.num_heads = 2;
    expect_load_error(dir / "m.safetensors", "gpt2", 0, options, {"holds no gpt2 layer", "h.0.attn.c_attn.weight"},
                      Remedy::change_layout);
    expect_load_error(dir / "m.safetensors", "bert", -1, options, {"out of range", "1 bert layer"});
    LayoutOptions grouped = options;
    grouped.num_kv_heads = 1;
    expect_load_error(dir / "m.safetensors", "bert", 0, grouped, {"a key/value head count of 1 does not apply"});
    write_text(dir / "config.json", R"({"num_attention_heads": 2, "hidden_size": 16})");
    expect_load_error(dir / "m.safetensors", "bert", 0, {}, {"width 8", "config.json", "16"});
    write_text(dir / "config.json", R"({"num_attention_heads": -2})");
    expect_load_error(dir / "m.safetensors", "bert", 0, {}, {"config.json", "num_attention_heads", "positive"});
    write_text(dir / "config.json", "{broken");
    expect_load_error(dir / "m.safetensors", "bert", 0, {}, {"config.json", "not valid JSON"});
    expect_error(ErrorKind::usage, [&] { load_layer(dir / "m.safetensors", "keras", 0, options); }, {"torch-mha"});
    CHECK(parse_rope_style("half") == RopeStyle::half_split);
    CHECK(parse_rope_style("interleaved") == RopeStyle::interleaved);
    CHECK_THROWS_AS(parse_rope_style("spiral"), Error);
}

}  // TEST_SUITE("models")
