// The only file that talks to oneDNN. Primitives are created once per shape and cached: the
// first execution of a new shape costs ~35 ms of JIT code generation (../shared/design/onednn.md).
#include "onednn_backend.hpp"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "error.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

using dnnl::memory;

MatmulShape dense_matmul(int64_t m, int64_t k, int64_t n) {
    MatmulShape s;
    s.m = m, s.k = k, s.n = n;
    s.a_strides[0] = m * k, s.a_strides[1] = k, s.a_strides[2] = 1;
    s.w_strides[0] = k * n, s.w_strides[1] = n, s.w_strides[2] = 1;
    s.c_strides[0] = m * n, s.c_strides[1] = n, s.c_strides[2] = 1;
    return s;
}

namespace {

// oneDNN's ISAs by the names of their ONEDNN_MAX_CPU_ISA values, lower-cased (oneDNN reads them
// in any case). Not the Xeon Phi ones: 2.6 does not take their names from the environment.
struct NamedIsa {
    dnnl::cpu_isa isa;
    const char* name;
};
constexpr NamedIsa named_isas[] = {
    {dnnl::cpu_isa::sse41, "sse41"},
    {dnnl::cpu_isa::avx, "avx"},
    {dnnl::cpu_isa::avx2, "avx2"},
    {dnnl::cpu_isa::avx2_vnni, "avx2_vnni"},
    {dnnl::cpu_isa::avx512_core, "avx512_core"},
    {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni"},
    {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16"},
    {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx"},
};

// The cap set through oneDNN's environment variable (ONEDNN_MAX_CPU_ISA, or its older name
// DNNL_MAX_CPU_ISA), lower-cased; empty when unset.
std::string isa_cap_from_environment() {
    const char* value = std::getenv("ONEDNN_MAX_CPU_ISA");
    if (!value || !*value) value = std::getenv("DNNL_MAX_CPU_ISA");
    std::string cap = value ? value : "";
    for (char& ch : cap) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return cap;
}

}  // namespace

void cap_onednn_isa() {
    // oneDNN 2.6.3 builds an AMX tile configuration from a CPUID leaf this VM hides and dies with
    // SIGILL; AVX-512 with bf16 is the highest ISA that works. set_max_cpu_isa() replaces the
    // environment's cap instead of lowering it, so a cap below AMX from the environment (AVX2, to
    // emulate a machine without AVX-512) is kept; ALL, AMX or an unknown name is capped. Only
    // effective before the first primitive is created; afterwards it returns an error status,
    // which is harmless to ignore.
    const std::string cap = isa_cap_from_environment();
    for (const NamedIsa& named : named_isas)
        if (named.isa != dnnl::cpu_isa::avx512_core_amx && cap == named.name) return;
    dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx512_core_bf16);
}

std::string effective_isa_name() {
    cap_onednn_isa();
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    for (const NamedIsa& named : named_isas)
        if (named.isa == isa) return named.name;
    return "unknown";
}

namespace {

struct MatmulShapeHash {
    size_t operator()(const MatmulShape& s) const {
        size_t h = std::hash<float>{}(s.scale) ^ (s.has_bias ? 0x9e3779b97f4a7c15u : 0);
        for (int64_t v : {s.batch, s.m, s.k, s.n, s.a_strides[0], s.a_strides[1], s.a_strides[2], s.w_strides[0],
                          s.w_strides[1], s.w_strides[2], s.c_strides[0], s.c_strides[1], s.c_strides[2]})
            h = h * 31 + std::hash<int64_t>{}(v);
        return h;
    }
};

struct CachedMatmul {
    dnnl::matmul primitive;
    std::string implementation;
    uint64_t last_use = 0;
    // Set when the product reads its weights repacked (repacks_weights): the reorder from the
    // caller's layout into the one the primitive chose, and that layout.
    std::optional<dnnl::reorder> repack;
    memory::desc packed_md;
};

}  // namespace

struct OnednnBackend::Impl {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::unordered_map<MatmulShape, CachedMatmul, MatmulShapeHash> matmuls;  // at most matmul_cache_capacity
    uint64_t uses = 0;
    // The repacked weights of the product running now: oneDNN's own (aligned) allocation, grown
    // to the largest such weights and kept, so that each call does not fault in fresh pages.
    memory packed_weights;
};

namespace {

// A 3-D memory descriptor with explicit strides; a zero batch stride becomes a broadcast
// batch of one, which is how oneDNN's matmul expresses it. `two_d`: the [rows, cols] matrix
// alone (a batch of one).
memory::desc strided_desc(int64_t batch, int64_t rows, int64_t cols, const int64_t strides[3], bool two_d = false) {
    if (two_d) return memory::desc({rows, cols}, memory::data_type::f32, {strides[1], strides[2]});
    const int64_t b = strides[0] == 0 ? 1 : batch;
    const int64_t batch_stride = strides[0] == 0 ? rows * cols : strides[0];
    return memory::desc({b, rows, cols}, memory::data_type::f32, {batch_stride, strides[1], strides[2]});
}

}  // namespace

OnednnBackend::OnednnBackend() {
    cap_onednn_isa();
    try {
        impl_ = std::make_unique<Impl>();
    } catch (const dnnl::error& e) {
        throw Error(ErrorKind::internal, fmt::format("oneDNN: cannot create a CPU engine: {}", e.what()));
    }
}

OnednnBackend::~OnednnBackend() = default;

std::vector<std::string> OnednnBackend::implementations() const {
    std::vector<std::string> names;
    for (const auto& [shape, cached] : impl_->matmuls) names.push_back(cached.implementation);
    return names;
}

namespace {

// Products of fewer FLOPs than this are created and run on the calling thread alone, by the rule
// parallel_for.hpp states for values: one core does about 64 FLOPs of a product in the time an
// element pass reads one value, so both thresholds are the same tens of microseconds, below which
// waking OpenMP's other threads costs more than the work (and far more when other processes hold
// the cores). The choice follows the shape only, so a shape's primitive is always created and run
// with the same number of threads.
constexpr double single_thread_flops = 64.0 * parallel_min_values;

// Sets OpenMP's thread count for oneDNN's next calls on this thread to one while it lives, when `on`.
class SingleThreaded {
public:
    explicit SingleThreaded(bool on) : previous_(on ? omp_get_max_threads() : 0) {
        if (on) omp_set_num_threads(1);
    }
    ~SingleThreaded() {
        if (previous_ > 0) omp_set_num_threads(previous_);
    }
    SingleThreaded(const SingleThreaded&) = delete;
    SingleThreaded& operator=(const SingleThreaded&) = delete;

private:
    int previous_;
};

// Whether a product reads its weights through a copy in the layout its primitive prefers, made
// by a oneDNN reorder before each call. Row-major weights ([k, n], rows apart by any stride) make
// oneDNN 2.6's brgemm copy blocks of them again for every block of rows of a; for a tall a that
// costs more than one reorder. Measured (2 threads, AVX-512, 2026-11-27; the results are the same
// bits): [2047, 4096] x [4096, 4096] 324 -> 292 ms and [2047, 768] x [768, 768] 9.6 -> 8.6 ms with
// the reorder included, while at 1024 rows the reorder ate the gain (137 -> 145 ms).
constexpr int64_t repack_min_rows = 1536;

bool repacks_weights(const MatmulShape& s) {
    return s.batch == 1 && s.m >= repack_min_rows && s.w_strides[2] == 1 && s.w_strides[1] >= s.n;
}

}  // namespace

void OnednnBackend::matmul(const MatmulShape& s, const float* a, const float* w, const float* bias, float* c) {
    const SingleThreaded small(2.0 * static_cast<double>(s.batch) * static_cast<double>(s.m) *
                                   static_cast<double>(s.k) * static_cast<double>(s.n) <
                               single_thread_flops);
    try {
        // Step 1: describe the operands (strided views; no copies) and find or create the primitive.
        // A product whose weights are repacked is described in two dimensions: given 3-D weights
        // of `any` layout, oneDNN 2.6 picks the plain one, which is no repacking at all.
        const bool repack = repacks_weights(s);
        const memory::desc a_md = strided_desc(s.batch, s.m, s.k, s.a_strides, repack);
        const memory::desc w_md = strided_desc(s.batch, s.k, s.n, s.w_strides, repack);
        const memory::desc c_md = strided_desc(s.batch, s.m, s.n, s.c_strides, repack);
        const memory::desc bias_md = repack
                                         ? memory::desc({1, s.n}, memory::data_type::f32, memory::format_tag::ab)
                                         : memory::desc({1, 1, s.n}, memory::data_type::f32, memory::format_tag::abc);

        auto cached = impl_->matmuls.find(s);
        if (cached == impl_->matmuls.end()) {
            if (impl_->matmuls.size() >= matmul_cache_capacity)
                impl_->matmuls.erase(std::min_element(
                    impl_->matmuls.begin(), impl_->matmuls.end(),
                    [](const auto& x, const auto& y) { return x.second.last_use < y.second.last_use; }));
            dnnl::primitive_attr attr;
            if (s.scale != 1.0f) attr.set_output_scales(0, {s.scale});
            // Weights to be repacked are described as `any`: the primitive picks their layout.
            const memory::desc chosen_w_md =
                repack ? memory::desc({s.k, s.n}, memory::data_type::f32, memory::format_tag::any) : w_md;
            auto desc = s.has_bias ? dnnl::matmul::desc(a_md, chosen_w_md, bias_md, c_md)
                                   : dnnl::matmul::desc(a_md, chosen_w_md, c_md);
            dnnl::matmul::primitive_desc pd(desc, attr, impl_->engine);
            CachedMatmul entry{dnnl::matmul(pd), pd.impl_info_str()};
            if (repack && pd.weights_desc() != w_md) {
                entry.packed_md = pd.weights_desc();
                entry.repack =
                    dnnl::reorder(dnnl::reorder::primitive_desc(impl_->engine, w_md, impl_->engine, entry.packed_md));
                entry.implementation += ", weights repacked";
            }
            cached = impl_->matmuls.emplace(s, std::move(entry)).first;
        }
        CachedMatmul& product = cached->second;
        product.last_use = ++impl_->uses;

        // Step 2: wrap the caller's buffers (oneDNN does not take ownership), repack the weights
        // where the product reads them repacked, and execute.
        memory a_mem(a_md, impl_->engine, const_cast<float*>(a));
        memory w_mem(w_md, impl_->engine, const_cast<float*>(w));
        memory c_mem(c_md, impl_->engine, c);
        if (product.repack) {
            const size_t bytes = product.packed_md.get_size();
            if (!impl_->packed_weights || impl_->packed_weights.get_desc().get_size() < bytes)
                impl_->packed_weights = memory(
                    {{static_cast<int64_t>(bytes)}, memory::data_type::u8, memory::format_tag::a}, impl_->engine);
            memory packed(product.packed_md, impl_->engine, impl_->packed_weights.get_data_handle());
            product.repack->execute(impl_->stream, w_mem, packed);
            w_mem = packed;
        }
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, c_mem}};
        if (s.has_bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, impl_->engine, const_cast<float*>(bias)));
        product.primitive.execute(impl_->stream, args);
        impl_->stream.wait();
    } catch (const dnnl::error& e) {
        throw Error(ErrorKind::internal, fmt::format("oneDNN matmul failed: {}", e.what()));
    }
}

}  // namespace attn_viz
