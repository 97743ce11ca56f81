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
        std::snprintf(line, sizeof line, "  %-18s %9.2f ms\n", name.c_str(), total * 1e3);
        out += line;
    }
    return out;
}

}  // namespace attn_viz
