// Corpus mode's pictures (docs/outputs.md, "Corpus mode"): what CorpusMeanMaps holds, drawn and
// written as stats.json's "mean_maps", offsets.png, every head's mean map with overview.png
// (aligned corpora), and report.html.
#pragma once

#include <nlohmann/json.hpp>

#include "corpus_mean_maps.hpp"
#include "head_analysis.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// stats.json's "mean_maps": {"sequences", "aligned", "aligned_length" (or null), "max_length",
// "offsets" [d_min .. d_max], "by_offset" [one row per head, in "heads" order: the mass at each offset]}.
nlohmann::json mean_maps_json(const CorpusMeanMaps& maps);

// Writes offsets.png (one row per head, offsets d = query - key across); when the maps are
// aligned, every selected head's mean map (layer_NN/head_NN.png, positions for tokens) and
// overview.png as a single input's; with options.html report.html: `stats` (corpus analysis `a`)
// with each statistic's spread beside its mean, the mean maps and the offsets. Nothing without
// options.pictures.
void write_corpus_map_pictures(OutputDir& out, const CorpusMeanMaps& maps, const ModelAnalysis& a,
                               const nlohmann::json& stats, const ReportOptions& options);

}  // namespace attn_viz
