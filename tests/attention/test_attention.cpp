#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attention.hpp"
#include "error.hpp"
#include "norm_attention.hpp"
#include "onednn_backend.hpp"
#include "reference_attention.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

OnednnBackend& backend() {
    static OnednnBackend b;
    return b;
}

double max_diff(const Tensor& got, const std::vector<double>& want) {
    REQUIRE(static_cast<size_t>(got.size()) == want.size());
    double m = 0;
    for (size_t i = 0; i < want.size(); ++i) m = std::max(m, std::fabs(got.data[i] - want[i]));
    return m;
}

struct Case {
    const char* name;
    int64_t T, S, D, H, KV;  // S = 0: self-attention
    bool causal, biases, padding;
    RopeStyle rope;
    int64_t rope_dims = 0;  // partial rotary: RoPE on the first rope_dims features of each head
};

void check_case(const Case& c) {
    CAPTURE(c.name);
    LayerWeights w = random_layer(c.D, c.H, c.KV, c.causal, c.biases, c.rope);
    w.rope_dims = c.rope_dims;
    Tensor x = random_tensor({c.T, c.D});
    Tensor context = c.S ? random_tensor({c.S, c.D}) : Tensor();
    const int64_t S = c.S ? c.S : c.T;
    std::vector<uint8_t> padding;
    if (c.padding) {
        padding.assign(static_cast<size_t>(S), 0);
        for (int64_t j = 1; j < S; j += 3) padding[j] = 1;  // every third key from 1 is padding
    }
    AttentionLayer layer(backend(), w);
    AttentionRequest request;
    request.input = &x;
    request.context = c.S ? &context : nullptr;
    request.key_excluded = padding;
    request.with_value_norms = true;
    LayerResult got = layer.run(request);
    ReferenceResult want = reference_attention(w, x, c.S ? &context : nullptr, padding);

    CHECK(got.attention.shape == std::vector<int64_t>{c.H, c.T, S});
    CHECK(max_diff(got.attention, want.attention) < 1e-5);
    CHECK(max_diff(got.logit_margin, want.margin) < 1e-4);
    CHECK(max_diff(got.context, want.context) < 1e-5);
    CHECK(max_diff(got.output, want.output) < 1e-5);
    CHECK(max_diff(got.contribution_norms, want.norms) < 1e-4);
    // The Gram matrix of the heads' shares, relative to its largest entry (a head's squared norm).
    double largest = 0;
    for (double g : want.gram) largest = std::max(largest, std::fabs(g));
    CHECK(max_diff(got.contribution_gram, want.gram) < 2e-6 * largest);
    // Norm-based attention: a_ij ||v_j W_O^h||.
    CHECK(max_diff(got.value_norms, want.value_norms) < 1e-4);
    std::vector<double> norm_map(want.attention.size());
    for (size_t e = 0; e < norm_map.size(); ++e)
        norm_map[e] = want.attention[e] * want.value_norms[(e / (c.T * S)) * S + e % S];
    CHECK(max_diff(norm_based_map(got), norm_map) < 1e-4);

    // Rows sum to 1 over visible keys; masked entries are exactly 0.
    for (int64_t h = 0; h < c.H; ++h)
        for (int64_t i = 0; i < c.T; ++i) {
            double sum = 0;
            for (int64_t j = 0; j < S; ++j) {
                const float a = got.attention.data[(h * c.T + i) * S + j];
                if (!got.visibility.visible(i, j)) CHECK(a == 0.0f);
                sum += a;
            }
            CHECK(sum == doctest::Approx(got.visibility.visible_count(i) ? 1.0 : 0.0).epsilon(1e-5));
        }
}

}  // namespace

TEST_SUITE("unit") {

TEST_CASE("attention matches a double-precision reference across shapes and options") {
    const Case cases[] = {
        {"T=1, one head", 1, 0, 8, 1, 1, false, false, false, RopeStyle::none},
        {"one head, T=6", 6, 0, 5, 1, 1, false, true, false, RopeStyle::none},
        {"D not a power of two, biases", 7, 0, 30, 5, 5, false, true, false, RopeStyle::none},
        {"causal, biases", 9, 0, 12, 3, 3, true, true, false, RopeStyle::none},
        {"causal T=1", 1, 0, 12, 4, 4, true, false, false, RopeStyle::none},
        {"GQA 8/4, interleaved RoPE, causal", 11, 0, 32, 8, 4, true, false, false, RopeStyle::interleaved},
        {"GQA 6/2, half-split RoPE", 10, 0, 24, 6, 2, false, true, false, RopeStyle::half_split},
        {"partial half-split RoPE (GPT-NeoX), 6 of 10 features, causal", 13, 0, 30, 3, 3, true, true, false,
         RopeStyle::half_split, 6},
        {"partial RoPE on 2 of 12 features, T=1", 1, 0, 24, 2, 2, true, false, false, RopeStyle::half_split, 2},
        {"partial interleaved RoPE, 4 of 8 features", 9, 0, 16, 2, 1, false, false, false, RopeStyle::interleaved, 4},
        {"multi-query 4/1, causal", 8, 0, 16, 4, 1, true, true, false, RopeStyle::none},
        {"padding mask", 7, 0, 12, 3, 3, false, true, true, RopeStyle::none},
        {"padding + causal", 7, 0, 12, 2, 2, true, false, true, RopeStyle::none},
        {"cross-attention T=5, S=9", 5, 9, 12, 3, 3, false, true, false, RopeStyle::none},
        {"cross-attention with padding, S=1", 4, 1, 6, 2, 2, false, true, false, RopeStyle::none},
        {"longer T=70 causal", 70, 0, 48, 6, 6, true, true, false, RopeStyle::none},
        // Long enough that the map is walked in runs of rows whose products stop near the diagonal.
        {"causal T=1100, products cut at the diagonal", 1100, 0, 16, 2, 2, true, true, false, RopeStyle::none},
        {"GQA 4/2 causal T=900, runs across head boundaries", 900, 0, 32, 4, 2, true, false, false,
         RopeStyle::half_split},
        {"causal with padding T=800", 800, 0, 12, 1, 1, true, false, true, RopeStyle::none},
    };
    for (const Case& c : cases) check_case(c);
}

TEST_CASE("a query that sees no key gets an all-zero row, never NaN") {
    LayerWeights w = random_layer(8, 2, 2, true, true);
    Tensor x = random_tensor({4, 8});
    AttentionLayer layer(backend(), w);
    AttentionRequest request;
    request.input = &x;
    request.key_excluded = {1, 0, 0, 1};  // causal: query 0 sees only key 0, which is padding
    LayerResult r = layer.run(request);
    for (int64_t h = 0; h < 2; ++h)
        for (int64_t j = 0; j < 4; ++j) CHECK(r.attention.data[(h * 4 + 0) * 4 + j] == 0.0f);
    for (float v : r.output.data) CHECK(std::isfinite(v));
    CHECK(r.visibility.visible_count(0) == 0);
}

TEST_CASE("a recycled map's memory gives the same results as a fresh buffer, for shorter and longer inputs") {
    LayerWeights w = random_layer(24, 3, 3, true, true);
    AttentionLayer layer(backend(), w);
    for (int64_t T : {9, 5, 13}) {  // 9 allocates, 5 reuses (smaller), 13 allocates again (larger)
        CAPTURE(T);
        Tensor x = random_tensor({T, 24});
        AttentionRequest request;
        request.input = &x;
        AttentionLayer fresh_layer(backend(), w);
        const LayerResult fresh = fresh_layer.run(request);
        LayerResult reused = layer.run(request);
        CHECK(reused.attention.shape == std::vector<int64_t>{3, T, T});
        CHECK(reused.attention.data == fresh.attention.data);  // incl. the exact zeros above the diagonal
        CHECK(reused.output.data == fresh.output.data);
        layer.recycle(std::move(reused));
    }
}

TEST_CASE("attention rejects inputs of the wrong width") {
    LayerWeights w = random_layer(8, 2, 2, false, false);
    Tensor x = random_tensor({3, 7});
    AttentionLayer layer(backend(), w);
    AttentionRequest request;
    request.input = &x;
    CHECK_THROWS_AS(layer.run(request), Error);
}

TEST_CASE("a layer refuses partial rotary dimensions that are odd or wider than a head") {
    for (const int64_t rope_dims : {int64_t{3}, int64_t{6}, int64_t{-2}}) {
        CAPTURE(rope_dims);
        LayerWeights w = random_layer(8, 2, 2, true, false, RopeStyle::half_split);  // d_h = 4
        w.rope_dims = rope_dims;
        CHECK_THROWS_WITH_AS(AttentionLayer(backend(), w),
                             doctest::Contains("must be even and at most the head size 4"), Error);
    }
}

// The matmul kernel oneDNN 2.6 picks for every f32 product of a layer on an ISA (measured with
// ONEDNN_VERBOSE=1 under each ONEDNN_MAX_CPU_ISA): brgemm from AVX-512 up, below it (AVX2, AVX,
// SSE4.1) the JIT sgemm, which has no brgemm matmul there.
std::string fast_matmul_kernel(const std::string& isa) {
    return isa.rfind("avx512_core", 0) == 0 ? "brg:avx512_core" : "gemm:jit";
}

TEST_CASE("every primitive is one of oneDNN's fast kernels for the ISA it runs on, never the reference fallback") {
    // Biases, GQA, causal masks, RoPE and cross-attention each change the products' shapes.
    // T = 760 makes a KV group's scores larger than one 2 MB step: products over row ranges.
    struct Setup {
        int64_t D, H, KV, T;
        bool causal, biases, cross;
        RopeStyle rope;
    };
    const std::string isa = effective_isa_name();
    CAPTURE(isa);
    for (const Setup& c : {Setup{64, 4, 4, 33, true, true, false, RopeStyle::none},
                           Setup{64, 8, 2, 33, true, false, false, RopeStyle::interleaved},
                           Setup{48, 6, 6, 33, false, true, true, RopeStyle::none},
                           Setup{16, 2, 2, 760, true, true, false, RopeStyle::none}}) {
        CAPTURE(c.T);
        LayerWeights w = random_layer(c.D, c.H, c.KV, c.causal, c.biases, c.rope);
        Tensor x = random_tensor({c.T, c.D}), context = random_tensor({21, c.D});
        AttentionRequest request;
        request.input = &x;
        request.context = c.cross ? &context : nullptr;
        OnednnBackend fresh;
        AttentionLayer(fresh, w).run(request);
        const auto impls = fresh.implementations();
        CHECK(impls.size() >= 5);  // projections, scores, P.V, head shares and their Gram matrix
        for (const std::string& impl : impls) {
            CAPTURE(impl);
            CHECK(impl.find("ref") == std::string::npos);
            // On AVX-512 that excludes gemm:jit too: fast once warm, but its first call generates
            // code for ~25 ms, and strided batch operands are what send a product there.
            CHECK(impl.rfind(fast_matmul_kernel(isa), 0) == 0);
        }
    }
}

TEST_CASE("oneDNN runs below AMX, and under the environment's lower cap when one is set") {
    // Lowest first: the ISAs ONEDNN_MAX_CPU_ISA can name below AMX on the machines we run on.
    const std::vector<std::string> ladder = {
        "sse41", "avx", "avx2", "avx2_vnni", "avx512_core", "avx512_core_vnni", "avx512_core_bf16"};
    const std::string isa = effective_isa_name();
    CAPTURE(isa);
    const auto rung = std::find(ladder.begin(), ladder.end(), isa);
    REQUIRE(rung != ladder.end());  // in particular never avx512_core_amx (SIGILL on this VM kind)
    const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
    std::string cap_name = cap ? cap : "";
    for (char& ch : cap_name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    CAPTURE(cap_name);
    // The effective ISA is the cap, or lower where the CPU lacks it.
    const auto cap_rung = std::find(ladder.begin(), ladder.end(), cap_name);
    if (cap_rung != ladder.end()) CHECK(rung <= cap_rung);
}

}  // TEST_SUITE("unit")
