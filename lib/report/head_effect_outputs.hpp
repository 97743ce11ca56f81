// What the per-head effect outputs share (ablation, direct logit attribution, activation
// patching): the layers x heads picture of one number per head, and numbers in findings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report.hpp"

namespace attn_viz {

// values: [L, H] one number per head -> a labelled layers x heads picture at `path`: with the
// run's colormap over the values' own range, or (signed) with the diverging colormap over
// [-m, m], m the largest |value|, so 0 is white.
void write_layer_head_png(const std::string& path, const std::vector<float>& values, int64_t layers, int64_t heads,
                          const std::string& title, const std::string& value_label, const ReportOptions& options,
                          bool signed_values = false);

// x printed with `format` (a findings sentence).
std::string short_number(double x, const char* format = "%.4g");

}  // namespace attn_viz
