// Running moments of a stream of numbers (count, mean, sum of squared deviations; Welford, merged
// with Chan et al.): what every corpus statistic keeps, in constant memory.
#pragma once

#include <cstdint>

namespace attn_viz {

// Mean and spread of the defined (non-NaN) values added.
struct RunningMoments {
    int64_t count = 0;
    double mean = 0;
    double m2 = 0;  // sum of squared deviations from the mean

    void add(double x);                       // NaN is skipped
    void merge(const RunningMoments& other);  // as if other's values had been added here
    double mean_or_nan() const;               // NaN when count == 0
    double population_std() const;            // sqrt(m2 / count); NaN when count == 0
};

}  // namespace attn_viz
