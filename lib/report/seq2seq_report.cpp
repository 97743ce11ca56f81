#include "seq2seq_report.hpp"

#include "cross_alignment.hpp"
#include "file_write.hpp"
#include "json_text.hpp"
#include "npy.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

constexpr const char* stack_names[3] = {"encoder", "decoder", "cross"};

// Stack `k`'s maps, weights, token labels and ids as a model report in its own folder.
ReportInput stack_input(const Seq2SeqReportInput& in, int k) {
    const Seq2SeqRun& run = *in.run;
    const std::vector<LayerResult>& layers = k == 0 ? run.encoder : k == 1 ? run.decoder : run.cross;
    ReportInput r;
    for (const LayerResult& layer : layers) r.layers.push_back(&layer);
    for (const BlockWeights& b : in.weights->encoder)
        if (k == 0) r.weights.push_back(&b.attention);
    for (const DecoderBlockWeights& b : in.weights->decoder)
        if (k > 0) r.weights.push_back(k == 1 ? &b.block.attention : &b.cross_attention);
    r.query_tokens = k == 0 ? in.source_tokens : in.target_tokens;
    r.key_tokens = k == 1 ? in.target_tokens : in.source_tokens;
    const std::vector<int>& ids = k == 0 ? run.source : run.target;
    if (k < 2) r.token_ids.assign(ids.begin(), ids.end());  // duplicate-token / induction scores: self-attention only
    r.layer_folders = true;
    r.folder = std::string(stack_names[k]) + "/";
    r.model_description = in.model_description + " " + stack_names[k];
    r.input_text = k == 0 ? in.source_text : in.target_text;
    return r;
}

}  // namespace

std::vector<std::string> seq2seq_dump_paths(const std::string& path) {
    if (path.empty()) return {};
    const bool npy = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    const std::string stem = npy ? path.substr(0, path.size() - 4) : path;
    return {stem + ".encoder.npy", stem + ".decoder.npy", stem + ".cross.npy"};
}

Seq2SeqAnalysis write_seq2seq_report(OutputDir& out, const Seq2SeqReportInput& in, const ReportOptions& options, Timings& timings,
                                     PictureNotes* notes) {
    ReportOptions stack_options = options;
    stack_options.dump_attention.clear();
    stack_options.dump_output.clear();
    Seq2SeqAnalysis result;
    nlohmann::json stats = {{"format", stats_format}, {"source_tokens", in.source_tokens}, {"target_tokens", in.target_tokens},
                            {"heads", nlohmann::json::array()}, {"stacks", nlohmann::json::object()}};
    stats.update(in.extra_stats);
    for (int k = 0; k < 3; ++k) {
        const ReportInput stack = stack_input(in, k);
        ModelAnalysis analysis = write_report(out, stack, stack_options, timings, notes);
        const nlohmann::json stack_stats = stats_json(analysis);
        std::vector<CrossAlignment> alignment;
        for (const LayerResult* layer : stack.layers)
            if (k == 2) {
                const std::vector<CrossAlignment> heads = cross_alignment(layer->attention);
                alignment.insert(alignment.end(), heads.begin(), heads.end());
            }
        for (size_t n = 0; n < stack_stats["heads"].size(); ++n) {
            nlohmann::json head = stack_stats["heads"][n];
            head["stack"] = stack_names[k];
            if (k == 2) head["alignment"] = cross_alignment_json(alignment[n]);
            stats["heads"].push_back(std::move(head));
        }
        stats["stacks"][stack_names[k]] = {{"num_layers", analysis.num_layers}, {"num_heads", analysis.num_heads},
                                           {"num_queries", analysis.num_queries}, {"num_keys", analysis.num_keys},
                                           {"causal", analysis.causal}, {"folder", stack.folder}};
        result.stacks.emplace_back(stack_names[k], std::move(analysis));
    }
    write_file_bytes(out.file("stats.json"), dump_json(stats, 2) + "\n");
    Timings::Scope t(timings, "dumps");
    const std::vector<std::string> dumps = seq2seq_dump_paths(options.dump_attention);
    for (size_t k = 0; k < dumps.size(); ++k)
        write_npy(out.external_file(dumps[k]), stacked_attention(stack_input(in, static_cast<int>(k)).layers, true));
    return result;
}

}  // namespace attn_viz
