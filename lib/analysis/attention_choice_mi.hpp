// Mutual information between two heads' attention choices: each query's strongest key is one
// draw of a head's choice, and the pairs of choices of two heads over the query rows give a
// plug-in estimate with the Miller-Madow bias correction. Formula: docs/metrics.md.
#pragma once

#include <cstdint>
#include <vector>

#include "head_matrix.hpp"
#include "layer_result.hpp"

namespace attn_viz {

// Row i's strongest key per head, layer-major: [N][T], -1 where the row sees no key. Ties go to
// the lowest key index. layers[l]->attention: [H, T, S]. Heads spread over `threads` threads.
std::vector<std::vector<int64_t>> attention_choices(const std::vector<const LayerResult*>& layers, int threads = 1);

// [N, N] in nats: I(a; b) = H(a) + H(b) - H(a, b) over the rows with a visible key, each entropy
// the plug-in one plus the Miller-Madow term (K - 1) / (2n). The diagonal is the corrected H(a),
// the largest value of its row. NaN when no row sees a key. Pairs spread over `threads` threads.
HeadMatrix attention_choice_mi(const std::vector<const LayerResult*>& layers, int threads = 1);

}  // namespace attn_viz
