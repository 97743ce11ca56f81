// The only file that talks to oneDNN. Primitives are created once per shape and cached: the
// first execution of a new shape costs ~35 ms of JIT code generation (../shared/design/onednn.md).
#include "onednn_backend.hpp"

#include <omp.h>

#include <string>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "error.hpp"

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

void cap_onednn_isa() {
    // oneDNN 2.6.3 builds an AMX tile configuration from a CPUID leaf this VM hides and dies with
    // SIGILL; AVX-512 with bf16 is the highest ISA that works. Only effective before the first
    // primitive is created, and an error after that, which is harmless to ignore.
    try {
        dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx512_core_bf16);
    } catch (const dnnl::error&) {
    }
}

struct OnednnBackend::Impl {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::vector<std::pair<MatmulShape, dnnl::matmul>> matmuls;
    std::vector<std::string> implementations;
};

namespace {

// A 3-D memory descriptor with explicit strides; a zero batch stride becomes a broadcast
// batch of one, which is how oneDNN's matmul expresses it.
memory::desc strided_desc(int64_t batch, int64_t rows, int64_t cols, const int64_t strides[3]) {
    const int64_t b = strides[0] == 0 ? 1 : batch;
    const int64_t batch_stride = strides[0] == 0 ? rows * cols : strides[0];
    return memory::desc({b, rows, cols}, memory::data_type::f32, {batch_stride, strides[1], strides[2]});
}

}  // namespace

OnednnBackend::OnednnBackend(int threads) {
    cap_onednn_isa();
    if (threads > 0) omp_set_num_threads(threads);
    try {
        impl_ = std::make_unique<Impl>();
    } catch (const dnnl::error& e) {
        throw Error(ErrorKind::internal, std::string("oneDNN: cannot create a CPU engine: ") + e.what());
    }
}

OnednnBackend::~OnednnBackend() = default;

std::vector<std::string> OnednnBackend::implementations() const { return impl_->implementations; }

void OnednnBackend::matmul(const MatmulShape& s, const float* a, const float* w, const float* bias, float* c) {
    try {
        // Step 1: describe the operands (strided views; no copies) and find or create the primitive.
        const memory::desc a_md = strided_desc(s.batch, s.m, s.k, s.a_strides);
        const memory::desc w_md = strided_desc(s.batch, s.k, s.n, s.w_strides);
        const memory::desc c_md = strided_desc(s.batch, s.m, s.n, s.c_strides);
        const memory::desc bias_md({1, 1, s.n}, memory::data_type::f32, memory::format_tag::abc);

        dnnl::matmul* prim = nullptr;
        for (auto& [shape, p] : impl_->matmuls)
            if (shape == s) prim = &p;
        if (!prim) {
            dnnl::primitive_attr attr;
            if (s.scale != 1.0f) attr.set_output_scales(0, {s.scale});
            auto desc = s.has_bias ? dnnl::matmul::desc(a_md, w_md, bias_md, c_md) : dnnl::matmul::desc(a_md, w_md, c_md);
            dnnl::matmul::primitive_desc pd(desc, attr, impl_->engine);
            impl_->implementations.push_back(pd.impl_info_str());
            impl_->matmuls.emplace_back(s, dnnl::matmul(pd));
            prim = &impl_->matmuls.back().second;
        }

        // Step 2: wrap the caller's buffers (oneDNN does not take ownership) and execute.
        memory a_mem(a_md, impl_->engine, const_cast<float*>(a));
        memory w_mem(w_md, impl_->engine, const_cast<float*>(w));
        memory c_mem(c_md, impl_->engine, c);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, c_mem}};
        if (s.has_bias) args.emplace(DNNL_ARG_BIAS, memory(bias_md, impl_->engine, const_cast<float*>(bias)));
        prim->execute(impl_->stream, args);
        impl_->stream.wait();
    } catch (const dnnl::error& e) {
        throw Error(ErrorKind::internal, std::string("oneDNN matmul failed: ") + e.what());
    }
}

}  // namespace attn_viz
