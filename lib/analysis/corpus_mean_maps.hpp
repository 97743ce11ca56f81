// Corpus mode's maps (docs/metrics.md, "Mean maps over a corpus"): per head the attention by
// relative offset, the mean over every query row of every sequence of the weight at offset
// d = i - j, and, while every sequence has the same length T (and L x H x T x T fits
// max_aligned_cells), the mean map over sequences itself. Kept as sums and counts, so that
// partials (attn-viz merge) add up to what one run over the whole corpus holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layer_result.hpp"
#include "tensor.hpp"

namespace attn_viz {

class CorpusMeanMaps {
public:
    // The most cells ([L, H, T, T]) the aligned mean maps keep: 2^21 doubles (16 MB), e.g. T = 170
    // for 6 layers of 12 heads; past it only the offsets are kept.
    static constexpr int64_t max_aligned_cells = int64_t(1) << 21;

    // layer_folders: where the pictures go (a model's layer_NN/, a layer run's top folder).
    explicit CorpusMeanMaps(bool layer_folders = true) : layer_folders_(layer_folders) {}

    // One sequence's self-attention maps, each layer [H, T, T] (the same H, T and mask for every
    // layer). The first fixes layers, heads and causality; later ones must match (Error internal).
    void add(const std::vector<const LayerResult*>& layers);
    // As if other's sequences had been added here (Error bad_input naming `where` for another layout).
    void merge(const CorpusMeanMaps& other, const std::string& where);

    int64_t num_layers() const { return num_layers_; }
    int64_t num_heads() const { return num_heads_; }
    bool causal() const { return causal_; }
    bool layer_folders() const { return layer_folders_; }
    int64_t num_sequences() const { return sequences_; }
    int64_t max_length() const { return max_length_; }

    // Whether the aligned mean maps are kept: every sequence has length aligned_length() and the
    // maps fit max_aligned_cells.
    bool aligned() const { return sequences_ > 0 && !aligned_sums_.empty(); }
    int64_t aligned_length() const { return aligned() ? max_length_ : 0; }
    // [L, H, T, T]: mean over sequences s of a_s[l][h][i][j] (aligned() only).
    Tensor aligned_mean() const;

    // The offsets the profile covers: min_offset() .. max_offset() (0 .. T-1 causal, -(T-1) ..
    // T-1 otherwise; T the longest sequence).
    int64_t min_offset() const { return causal_ ? 0 : 1 - max_length_; }
    int64_t max_offset() const { return max_length_ - 1; }
    // [L * H, K] (K = max_offset() - min_offset() + 1), head-major: p[n][d] = sum over sequences s
    // and query rows i of a_s[n][i][i - d], over the number of rows of all sequences (sum_s T_s).
    // Each head's row sums to 1 (less the rows with no visible key).
    std::vector<double> offset_profile() const;

    // {"layer_folders", "sequences", "rows", "max_length", "offset_sums" [L * H * (2 T - 1)] and,
    // aligned, "aligned_sums" [L * H * T * T]}: sums, exact to the bit through a save/load round trip.
    nlohmann::json partial_json() const;
    // Validates sizes against `layers` x `heads` and `causal`, counts against `sequences` (the
    // partial's), every sum finite and >= 0; throws Error(bad_input, "<where>: ...").
    static CorpusMeanMaps from_partial_json(const nlohmann::json& json, int64_t layers, int64_t heads, bool causal,
                                            int64_t sequences, const std::string& where);

private:
    bool layer_folders_ = true;
    int64_t num_layers_ = 0, num_heads_ = 0;
    bool causal_ = false;
    int64_t sequences_ = 0, rows_ = 0, max_length_ = 0;
    bool alignable_ = true;             // every sequence so far has had length max_length_, within the cap
    std::vector<double> offset_sums_;   // [L * H, 2 T - 1]: offset d = i - j at column d + T - 1
    std::vector<double> aligned_sums_;  // [L * H, T, T] while alignable_

    // Widens offset_sums_ to sequences of up to `length` tokens (zeros for the new offsets).
    void widen_offsets(int64_t length);
};

}  // namespace attn_viz
