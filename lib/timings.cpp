#include "timings.hpp"

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

double attention_flops(int64_t T, int64_t S, int64_t D, int64_t H, int64_t KV, int64_t d_head, bool shares) {
    const double projections = 2.0 * T * D * H * d_head + 2.0 * 2.0 * S * D * KV * d_head;
    const double scores_and_pv = 2.0 * 2.0 * H * T * S * d_head;
    const double output = 2.0 * T * H * d_head * D;
    const double share_products = shares ? 2.0 * T * H * d_head * D + 2.0 * H * H * T * D : 0.0;
    return projections + scores_and_pv + output + share_products;
}

}  // namespace attn_viz
