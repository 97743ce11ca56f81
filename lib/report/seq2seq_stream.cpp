#include "seq2seq_stream.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "file_write.hpp"
#include "json_text.hpp"

namespace attn_viz {

Seq2SeqStream::Seq2SeqStream(OutputDir& out, const Seq2SeqReportInput& input, const ReportOptions& options,
                             Timings& timings)
    : out_(out) {
    stats_input_.source_tokens = input.source_tokens;
    stats_input_.target_tokens = input.target_tokens;
    stats_input_.extra_stats = input.extra_stats;
    stats_input_.extra_stats["pair_scope"] = "layer";
    const std::vector<std::string> dumps = seq2seq_dump_paths(options.dump_attention);
    for (int k = 0; k < 3; ++k) {
        // Each stack streams as write_seq2seq_report writes it: seq2seq_stack_input's folder,
        // tokens and ids, its part of the dump.
        const ReportInput stack = seq2seq_stack_input(input, k);
        LayerStreamInput stream;
        stream.num_layers = static_cast<int64_t>(stack.weights.size());
        stream.num_heads = input.weights->config.blocks.n_heads;
        stream.tokens = stack.query_tokens;
        stream.key_tokens = stack.key_tokens;
        stream.token_ids = stack.token_ids;
        stream.folder = stack.folder;
        stream.backend = stack.backend;
        ReportOptions stack_options = options;
        stack_options.dump_attention = dumps.empty() ? "" : dumps[static_cast<size_t>(k)];
        stacks_.push_back(std::make_unique<LayerStream>(out, std::move(stream), stack_options, timings));
    }
}

void Seq2SeqStream::add_layer(Seq2SeqStack stack, int64_t layer, const LayerResult& result,
                              const LayerWeights& weights) {
    stacks_[static_cast<size_t>(stack)]->add_layer(layer, result, weights);
    if (stack != Seq2SeqStack::cross) return;
    const std::vector<CrossAlignment> heads = stack_alignment({&result});
    alignment_.insert(alignment_.end(), heads.begin(), heads.end());
}

Seq2SeqAnalysis Seq2SeqStream::finish(PictureNotes& notes) {
    Seq2SeqAnalysis analysis;
    for (size_t k = 0; k < stacks_.size(); ++k)
        analysis.stacks.emplace_back(seq2seq_stack_names[k], stacks_[k]->finish(notes));
    analysis.alignment = std::move(alignment_);
    write_file_bytes(out_.file("stats.json"), json_file_text(seq2seq_stats(stats_input_, analysis), 2));
    return analysis;
}

}  // namespace attn_viz
