#include "report.hpp"

#include <cstdio>
#include <fstream>

#include "error.hpp"
#include "head_stats.hpp"
#include "npy.hpp"

namespace attn_viz {
namespace {

void write_json(const std::string& path, const nlohmann::json& doc) {
    std::ofstream out(path);
    out << doc.dump(2) << '\n';
    if (!out.flush()) throw Error(ErrorKind::io, path + ": write failed (disk full?)");
}

// [L, H, T, S] (or [H, T, S] for one layer) gathered from the layers.
Tensor stacked_attention(const std::vector<const LayerResult*>& layers) {
    const Tensor& first = layers.front()->attention;
    std::vector<int64_t> shape = first.shape;
    if (layers.size() > 1) shape.insert(shape.begin(), static_cast<int64_t>(layers.size()));
    Tensor all(shape);
    for (size_t l = 0; l < layers.size(); ++l)
        std::copy(layers[l]->attention.data.begin(), layers[l]->attention.data.end(), all.data.begin() + l * first.size());
    return all;
}

}  // namespace

std::string write_report(OutputDir& out, const ReportInput& in, const ReportOptions& options, Timings& timings) {
    Timings::Scope timed(timings, "statistics");
    nlohmann::json heads = nlohmann::json::array();
    nlohmann::json layers = nlohmann::json::array();
    char line[160];
    std::string table = "layer head  entropy  normalized\n";
    for (size_t l = 0; l < in.layers.size(); ++l) {
        const LayerResult& r = *in.layers[l];
        const std::vector<HeadStats> stats = compute_head_stats(r);
        const Tensor corr = attention_correlation(r);
        const int64_t H = r.attention.dim(0);
        nlohmann::json correlation = nlohmann::json::array();
        for (int64_t a = 0; a < H; ++a)
            correlation.push_back(std::vector<float>(corr.data.begin() + a * H, corr.data.begin() + (a + 1) * H));
        for (int64_t h = 0; h < H; ++h) {
            const HeadStats& s = stats[static_cast<size_t>(h)];
            heads.push_back({{"layer", l}, {"head", h}, {"entropy", s.entropy}, {"normalized_entropy", s.normalized_entropy}});
            std::snprintf(line, sizeof line, "%5zu %4lld %8.4f %11.4f\n", l, static_cast<long long>(h), s.entropy, s.normalized_entropy);
            table += line;
        }
        layers.push_back({{"layer", l}, {"correlation", correlation}});
    }
    const LayerResult& first = *in.layers.front();
    nlohmann::json doc = {{"format", "attn-viz/stats@1"},
                          {"num_layers", in.layers.size()},
                          {"num_heads", first.attention.dim(0)},
                          {"num_queries", first.visibility.queries},
                          {"num_keys", first.visibility.keys},
                          {"causal", first.visibility.causal},
                          {"tokens", in.query_tokens},
                          {"heads", heads},
                          {"layers", layers}};
    if (in.layers.size() == 1) doc["correlation"] = layers[0]["correlation"];
    write_json(out.file("stats.json"), doc);

    if (!options.dump_attention.empty()) write_npy(out.external_file(options.dump_attention), stacked_attention(in.layers));
    if (!options.dump_output.empty()) write_npy(out.external_file(options.dump_output), in.layers.back()->output);
    return table;
}

}  // namespace attn_viz
