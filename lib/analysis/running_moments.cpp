#include "running_moments.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn_viz {

void RunningMoments::add(double x) {
    if (std::isnan(x)) return;
    ++count;
    const double delta = x - mean;
    mean += delta / static_cast<double>(count);
    m2 += delta * (x - mean);
}

void RunningMoments::merge(const RunningMoments& other) {
    if (other.count == 0) return;
    if (count == 0) {
        *this = other;
        return;
    }
    const double n = static_cast<double>(count + other.count);
    const double delta = other.mean - mean;
    mean += delta * static_cast<double>(other.count) / n;
    m2 += other.m2 + delta * delta * static_cast<double>(count) * static_cast<double>(other.count) / n;
    count += other.count;
}

double RunningMoments::mean_or_nan() const { return count > 0 ? mean : std::numeric_limits<double>::quiet_NaN(); }

double RunningMoments::population_std() const {
    return count > 0 ? std::sqrt(std::max(0.0, m2) / static_cast<double>(count))
                     : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace attn_viz
