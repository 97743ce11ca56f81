// TensorSource's default row reader: the whole tensor once, cut into its ranges.
#include "tensor_source.hpp"

#include <utility>

#include "layer_weights.hpp"

namespace attn_viz {

void TensorSource::load_row_ranges(const std::string& name, const std::vector<RowRange>& ranges,
                                   RowLayout layout) const {
    Tensor whole = load(name);
    for (const RowRange& range : ranges) {
        const bool all_rows = range.begin == 0 && range.count == whole.dim(0) && ranges.size() == 1;
        Tensor part = all_rows ? std::move(whole) : rows_of(whole, range.begin, range.count);
        *range.out = layout == RowLayout::transposed ? transposed(part) : std::move(part);
    }
}

}  // namespace attn_viz
