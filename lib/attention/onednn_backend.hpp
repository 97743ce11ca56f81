// Every oneDNN call of the project goes through this class (its .cpp is the only file that
// includes dnnl.hpp), so the oneDNN 2 -> 3 API change touches one file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn_viz {

// A batched matrix product  c[b] = scale * a[b] x w[b] (+ bias)  with explicit element strides,
// so transposed and head-interleaved views need no copies.
//   a: [batch, m, k], w: [batch, k, n], c: [batch, m, n], bias: [n] broadcast over rows.
// (A per-batch bias [batch, 1, n] sends oneDNN 2.6 to its reference kernel, 1000x slower: add
// such biases after the product instead.)
// A batch stride of 0 broadcasts that operand over the batch.
struct MatmulShape {
    int64_t batch = 1, m = 0, k = 0, n = 0;
    int64_t a_strides[3] = {0, 0, 0};  // batch, row, column
    int64_t w_strides[3] = {0, 0, 0};
    int64_t c_strides[3] = {0, 0, 0};
    float scale = 1.0f;
    bool has_bias = false;
    bool operator==(const MatmulShape&) const = default;
};

// Dense row-major helper: a [m,k] x w [k,n] -> c [m,n].
MatmulShape dense_matmul(int64_t m, int64_t k, int64_t n);

// How many matmul primitives a backend keeps, the least recently used dropped first. Each holds
// ~80 KB, and a corpus of many lengths needs new shapes for every length; one run's working set is
// a few dozen. A dropped shape used again comes back from oneDNN's own primitive cache (1024
// entries) without new code generation while it is still there.
inline constexpr size_t matmul_cache_capacity = 512;

class OnednnBackend {
public:
    // Caps oneDNN's ISA below AMX (see docs: SIGILL on this VM). Runs on OpenMP's pool, whose
    // size the program sets once (use_threads, parallel_for.hpp).
    OnednnBackend();
    ~OnednnBackend();
    OnednnBackend(const OnednnBackend&) = delete;
    OnednnBackend& operator=(const OnednnBackend&) = delete;

    void matmul(const MatmulShape& shape, const float* a, const float* w, const float* bias, float* c);

    // The implementation oneDNN chose for each primitive held now ("brg:avx512_core", ...; with
    // ", weights repacked" where the product reads its weights through a reorder into the layout
    // the primitive prefers, as tall products of row-major weights do): tests check that none is
    // the slow "ref" fallback.
    std::vector<std::string> implementations() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Must run before any other oneDNN call in a process (the backend constructor calls it too).
// Caps oneDNN below AMX, unless ONEDNN_MAX_CPU_ISA in the environment caps it lower already.
void cap_onednn_isa();

// The ISA oneDNN's kernels use in this process, by the name of its ONEDNN_MAX_CPU_ISA value in
// lower case: "avx2", "avx512_core", "avx512_core_bf16", ... (caps it first, see above).
std::string effective_isa_name();

}  // namespace attn_viz
