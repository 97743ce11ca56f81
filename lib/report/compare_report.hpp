// compare's pictures: the layers x heads pictures of the per-head measures (JS distance on a log
// scale, map correlation on the diverging map, top-1 agreement), and with --diff-pictures N the N
// heads whose maps changed most (largest JS distance between their map in A and in B) drawn as
// A | B | A - B (figure_map_comparison), as DIR/diff_head_NN.png (diff_layer_LL_head_NN.png when
// there are several layers). Every title names both models; on an input too short to tell the
// labels carry a "?", as model's pictures do.
#pragma once

#include <string>
#include <vector>

#include "head_compare.hpp"
#include "layer_result.hpp"
#include "output_dir.hpp"

namespace attn_viz {

// How the pictures name the two models: the last part of each path (a folder's name, a file's), or
// the paths as given when those are the same.
struct ComparedNames {
    std::string a, b;
};
ComparedNames compared_names(const std::string& path_a, const std::string& path_b);

// Indices (in comparison order) of the `count` heads with the largest map JS distance, largest
// first; heads whose distance is undefined come last.
std::vector<int64_t> most_changed_heads(const HeadComparison& comparison, int64_t count);

// Stages one picture per head of most_changed_heads(comparison, count) in `out`. first, second:
// each run's layers (as compared); tokens: [T] labels of the queries and keys.
void write_diff_pictures(OutputDir& out, const HeadComparison& comparison, const std::vector<const LayerResult*>& first,
                         const std::vector<const LayerResult*>& second, const std::vector<std::string>& tokens,
                         const ComparedNames& names, int64_t count);

// Stages js_distance.png, map_correlation.png and top1_agreement.png (top1: [N]) in `out` (in its
// `folder`, e.g. "cross/", or at the top), each title ending in `over` (e.g. " (mean over the
// corpus)", or ""). JS distance on a log scale from 1e-4 to 1 (its whole range) with the largest
// value in the title, so a change of 0.004 looks as small as it is.
void write_comparison_pictures(OutputDir& out, const HeadComparison& comparison, const std::vector<double>& top1,
                               const ComparedNames& names, const std::string& over, const std::string& folder = "");

}  // namespace attn_viz
