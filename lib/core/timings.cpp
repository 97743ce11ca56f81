#include "timings.hpp"

#include <algorithm>

#include <fmt/format.h>

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
    for (const auto& [name, total] : stages_) out += fmt::format("  {:<18} {:9.2f} ms\n", name, total * 1e3);
    return out;
}

}  // namespace attn_viz
