#include "corpus_mean_maps.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "json_input.hpp"
#include "partial_json.hpp"

namespace attn_viz {
namespace {

// The longest sequence a partial may declare: far past any model's context.
constexpr int64_t max_partial_length = int64_t(1) << 24;

// block as exactly `expected` finite sums >= 0 (Error bad_input naming `where` and `what`).
std::vector<double> read_sums(const nlohmann::json& block, size_t expected, const std::string& where,
                              const std::string& what) {
    if (!block.is_array() || block.size() != expected)
        fail_input(where, fmt::format("\"{}\" must be an array of {} numbers", what, expected));
    std::vector<double> sums(expected);
    for (size_t k = 0; k < expected; ++k) {
        const nlohmann::json& v = block[k];
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
            fail_input(where, fmt::format("{}[{}] is {}, expected a finite number >= 0", what, k, json_excerpt(v)));
        sums[k] = v.get<double>();
    }
    return sums;
}

}  // namespace

void CorpusMeanMaps::widen_offsets(int64_t length) {
    if (length <= max_length_) return;
    const int64_t N = num_layers_ * num_heads_, old_width = 2 * max_length_ - 1, width = 2 * length - 1;
    const int64_t shift = length - max_length_;
    std::vector<double> wider(static_cast<size_t>(N * width), 0.0);
    for (int64_t n = 0; max_length_ > 0 && n < N; ++n)
        std::copy_n(offset_sums_.begin() + n * old_width, old_width, wider.begin() + n * width + shift);
    offset_sums_ = std::move(wider);
    max_length_ = length;
}

void CorpusMeanMaps::add(const std::vector<const LayerResult*>& layers) {
    if (layers.empty()) throw Error(ErrorKind::internal, "CorpusMeanMaps::add: no layer");
    const Visibility& vis = layers.front()->visibility;
    const int64_t L = static_cast<int64_t>(layers.size()), T = vis.queries;
    const int64_t H = layers.front()->attention.shape.empty() ? 0 : layers.front()->attention.shape[0];
    if (vis.keys != T) throw Error(ErrorKind::internal, "CorpusMeanMaps::add: not self-attention");
    if (sequences_ == 0) {
        num_layers_ = L, num_heads_ = H, causal_ = vis.causal;
        alignable_ = L * H * T * T <= max_aligned_cells;
    } else if (L != num_layers_ || H != num_heads_ || vis.causal != causal_) {
        throw Error(ErrorKind::internal, "CorpusMeanMaps::add: another layout than the sequences before");
    }
    if (sequences_ > 0 && T != max_length_) alignable_ = false, aligned_sums_ = {};
    widen_offsets(T);
    if (alignable_ && aligned_sums_.empty()) aligned_sums_.assign(static_cast<size_t>(L * H * T * T), 0.0);
    const int64_t width = 2 * max_length_ - 1, centre = max_length_ - 1;
    for (int64_t l = 0; l < L; ++l) {
        const LayerResult& r = *layers[static_cast<size_t>(l)];
        if (r.attention.size() != H * T * T)
            throw Error(ErrorKind::internal, "CorpusMeanMaps::add: the layers' maps differ in shape");
        for (int64_t h = 0; h < H; ++h) {
            const int64_t n = l * H + h;
            const float* a = r.attention.ptr() + h * T * T;
            double* by_offset = offset_sums_.data() + n * width + centre;  // by_offset[i - j]
            double* aligned = alignable_ ? aligned_sums_.data() + n * T * T : nullptr;
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < T; ++j) {
                    by_offset[i - j] += a[i * T + j];
                    if (aligned) aligned[i * T + j] += a[i * T + j];
                }
        }
    }
    rows_ += T;
    ++sequences_;
}

void CorpusMeanMaps::merge(const CorpusMeanMaps& other, const std::string& where) {
    if (other.sequences_ == 0) return;
    if (sequences_ == 0) {
        *this = other;
        return;
    }
    if (other.num_layers_ != num_layers_ || other.num_heads_ != num_heads_ || other.causal_ != causal_)
        fail_input(where, "its mean maps are of another layout");
    if (!alignable_ || !other.alignable_ || other.max_length_ != max_length_) alignable_ = false, aligned_sums_ = {};
    CorpusMeanMaps theirs = other;
    theirs.widen_offsets(max_length_);
    widen_offsets(theirs.max_length_);
    for (size_t k = 0; k < offset_sums_.size(); ++k) offset_sums_[k] += theirs.offset_sums_[k];
    for (size_t k = 0; k < aligned_sums_.size(); ++k) aligned_sums_[k] += theirs.aligned_sums_[k];
    sequences_ += other.sequences_;
    rows_ += other.rows_;
}

Tensor CorpusMeanMaps::aligned_mean() const {
    if (!aligned()) throw Error(ErrorKind::internal, "CorpusMeanMaps: no aligned maps");
    const int64_t T = max_length_;
    Tensor mean({num_layers_, num_heads_, T, T});
    for (size_t k = 0; k < aligned_sums_.size(); ++k)
        mean.data[k] = static_cast<float>(aligned_sums_[k] / static_cast<double>(sequences_));
    return mean;
}

std::vector<double> CorpusMeanMaps::offset_profile() const {
    const int64_t N = num_layers_ * num_heads_, width = 2 * max_length_ - 1, centre = max_length_ - 1;
    const int64_t K = max_offset() - min_offset() + 1;
    std::vector<double> profile(static_cast<size_t>(N * K));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t d = min_offset(); d <= max_offset(); ++d)
            profile[static_cast<size_t>(n * K + d - min_offset())] =
                offset_sums_[static_cast<size_t>(n * width + centre + d)] / static_cast<double>(rows_);
    return profile;
}

nlohmann::json CorpusMeanMaps::partial_json() const {
    nlohmann::json j = {{"layer_folders", layer_folders_},
                        {"sequences", sequences_},
                        {"rows", rows_},
                        {"max_length", max_length_},
                        {"offset_sums", offset_sums_}};
    if (aligned()) j["aligned_sums"] = aligned_sums_;
    return j;
}

CorpusMeanMaps CorpusMeanMaps::from_partial_json(const nlohmann::json& j, int64_t layers, int64_t heads, bool causal,
                                                 int64_t sequences, const std::string& where) {
    const std::string what = fmt::format("{} mean_maps", where);
    const nlohmann::json& folders = member(j, "layer_folders", what);
    if (!folders.is_boolean()) fail_input(what, "\"layer_folders\" must be true or false");
    CorpusMeanMaps maps(folders.get<bool>());
    maps.num_layers_ = layers, maps.num_heads_ = heads, maps.causal_ = causal;
    maps.sequences_ = whole_number(j, "sequences", sequences, sequences, what);
    maps.max_length_ = whole_number(j, "max_length", 1, max_partial_length, what);
    maps.rows_ = whole_number(j, "rows", sequences, sequences * maps.max_length_, what);
    const int64_t N = layers * heads, T = maps.max_length_;
    maps.offset_sums_ =
        read_sums(member(j, "offset_sums", what), static_cast<size_t>(N * (2 * T - 1)), what, "offset_sums");
    maps.alignable_ = j.contains("aligned_sums");
    if (maps.alignable_) {
        if (N * T * T > max_aligned_cells)
            fail_input(what, fmt::format("\"aligned_sums\" of {} x {} x {} cells exceed the {} kept", N, T, T,
                                         max_aligned_cells));
        maps.aligned_sums_ = read_sums(j["aligned_sums"], static_cast<size_t>(N * T * T), what, "aligned_sums");
    }
    return maps;
}

}  // namespace attn_viz
