#include "residual_components.hpp"

#include <cmath>

namespace attn_viz {

double dot_double(const float* a, const float* b, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += double(a[i]) * b[i];
    return sum;
}

FrozenNorm frozen_norm(const float* x, int64_t D, const NormWeights& norm, const ModelConfig& config) {
    FrozenNorm f;
    f.present = !norm.weight.empty(), f.centered = f.present && config.norm == NormKind::layer_norm;
    if (f.centered) {
        for (int64_t i = 0; i < D; ++i) f.mean += x[i];
        f.mean /= static_cast<double>(D);
    }
    double square = 0;
    for (int64_t i = 0; i < D; ++i) square += (x[i] - f.mean) * (x[i] - f.mean);
    if (f.present) f.scale = 1.0 / std::sqrt(square / static_cast<double>(D) + config.norm_epsilon);
    return f;
}

double frozen_norm_weight(const NormWeights& norm, NormKind kind, int64_t i) {
    if (norm.weight.empty()) return 1.0;
    return kind == NormKind::rms_offset_one ? 1.0 + double(norm.weight.data[i]) : double(norm.weight.data[i]);
}

const Tensor& stream_leaving(const ModelRun& run, size_t l) {
    return l + 1 < run.residual.size() ? run.residual[l + 1] : run.final_residual;
}

}  // namespace attn_viz
