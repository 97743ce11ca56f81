// attn_viz.Layer's native object: one attention layer's weights opened as `attn-viz run --weights`
// opens them (app/cmd_run.cpp), on oneDNN.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <pybind11/pybind11.h>

#include "attention.hpp"
#include "layer_source.hpp"
#include "onednn_backend.hpp"

namespace attn_viz_python {

struct Layer {
    std::unique_ptr<attn_viz::OnednnBackend> backend;  // outlive `layer`
    attn_viz::LayerSource source;
    attn_viz::LayerWeights weights;
    std::unique_ptr<attn_viz::AttentionLayer> layer;
    int threads = 0;   // as opened (0 = all cores): the analyses' too (report_options)
    std::mutex mutex;  // one run at a time: runs release the GIL
};

// Layer.run_corpus: the corpus `source` (a path, or a list of dicts) through the layer, as
// `attn-viz run --inputs` runs it; returns the stats.json document (without provenance) as a dict
// (layer_corpus.cpp).
pybind11::object run_corpus(const std::shared_ptr<Layer>& l, pybind11::object source, pybind11::object progress,
                            const std::optional<std::string>& shard);

}  // namespace attn_viz_python
