#include "timings.hpp"

#include <algorithm>
#include <cstdio>

namespace attn_viz {

void Timings::add(const std::string& stage, double seconds) {
    for (auto& [name, total] : stages_)
        if (name == stage) {
            total += seconds;
            return;
        }
    stages_.emplace_back(stage, seconds);
}

double Timings::seconds(const std::string& stage) const {
    for (const auto& [name, total] : stages_)
        if (name == stage) return total;
    return 0;
}

std::string Timings::table() const {
    std::string out;
    char line[128];
    for (const auto& [name, total] : stages_) {
        std::snprintf(line, sizeof line, "  %-14s %9.2f ms\n", name.c_str(), total * 1e3);
        out += line;
    }
    return out;
}

double attention_flops(int64_t T, int64_t S, int64_t D, int64_t H, int64_t KV, int64_t d_head, bool shares,
                       bool causal) {
    const double projections = 2.0 * T * D * H * d_head + 2.0 * 2.0 * S * D * KV * d_head;
    // Query i sees keys [0, min(i + 1, S)) under a causal mask.
    const double pairs = causal ? static_cast<double>(std::min(T, S)) * (std::min(T, S) + 1) / 2 +
                                      static_cast<double>(std::max<int64_t>(T - S, 0)) * S
                                : static_cast<double>(T) * S;
    const double scores_and_pv = 2.0 * 2.0 * H * pairs * d_head;
    const double output = 2.0 * T * H * d_head * D;
    const double width = static_cast<double>(H) * d_head;
    const double share_products = shares ? 2.0 * T * width * width + 2.0 * T * width * d_head : 0.0;
    return projections + scores_and_pv + output + share_products;
}

}  // namespace attn_viz
