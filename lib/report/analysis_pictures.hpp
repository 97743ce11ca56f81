// Pictures of the dependence matrices (output MI, output CKA, choice MI) and of the keys each
// head needs under sparse attention (layers x heads). Pairs not computed are hatched; MI and CKA
// take their color range from min(0, smallest) to the largest entry off the diagonal (a head
// with itself).
#pragma once

#include <string>
#include <vector>

#include "head_analysis.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// m: [N, N] -> a float tensor; NaN entries become `undefined`.
Tensor head_matrix_tensor(const HeadMatrix& m, float undefined = NAN);

// title, with ", within layers" when `a` has several layers and m ([N, N] over a's heads) holds
// no pair of heads in different layers (those entries NaN: not computed).
std::string matrix_title(const std::string& title, const HeadMatrix& m, const ModelAnalysis& a);

// output_mi.png, output_cka.png, choice_mi.png and keys_needed.png under `folder`.
// names: [N] head names for the axes.
void write_dependence_pictures(OutputDir& out, const std::string& folder, const ModelAnalysis& a,
                               const std::vector<std::string>& names, const ReportOptions& o);

}  // namespace attn_viz
