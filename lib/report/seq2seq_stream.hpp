// An encoder-decoder's report written layer by layer (attn-viz model --stream-layers on BART, T5):
// one LayerStream per stack folder (encoder/, decoder/, cross/), fed by Seq2SeqModel::run_layers as
// each attention layer is done, so memory holds one attention layer's maps however many layers the
// stacks have. The cross heads' alignment is computed from each cross layer as it comes. What
// differs from write_seq2seq_report is what differs for a decoder-only model (layer_stream.hpp,
// docs/streaming.md): pairs within layers ("pair_scope": "layer" in every stats.json), --scale
// global pictures ranged per layer, no report.html.
#pragma once

#include <memory>
#include <vector>

#include "layer_stream.hpp"
#include "seq2seq_report.hpp"

namespace attn_viz {

class Seq2SeqStream {
public:
    // input: the run's tokens, extra stats and weights (for each stack's number of layers and
    // heads); input.run: its source and target ids (its layers are not read). options as
    // write_seq2seq_report's, without report.html (Error internal) and --dump-output (not
    // supported, the caller refuses it); each stack's dump ([L, H, queries, keys]) opens here.
    Seq2SeqStream(OutputDir& out, const Seq2SeqReportInput& input, const ReportOptions& options, Timings& timings);

    // result: attention layer `layer` of `stack` ([H, queries, keys]; each stack's layers in order);
    // weights: its attention weights. Its pictures, dump slice and statistics are written or kept;
    // neither `result` nor `weights` is kept.
    void add_layer(Seq2SeqStack stack, int64_t layer, const LayerResult& result, const LayerWeights& weights);

    // After the last layer of every stack: each stack's files (LayerStream::finish) and the
    // top-level stats.json. Returns the three stacks' analyses and the cross heads' alignment;
    // `notes` gets what the pictures look like.
    Seq2SeqAnalysis finish(PictureNotes& notes);

private:
    OutputDir& out_;
    Seq2SeqReportInput stats_input_;  // the tokens and extra stats (with "pair_scope") of the top-level stats.json
    std::vector<std::unique_ptr<LayerStream>> stacks_;  // encoder, decoder, cross
    std::vector<CrossAlignment> alignment_;             // the cross heads' so far, layer-major
};

}  // namespace attn_viz
