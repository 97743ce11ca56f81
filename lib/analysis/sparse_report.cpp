#include "sparse_report.hpp"

#include <fmt/format.h>

#include "stats_report.hpp"

namespace attn_viz {

namespace {

nlohmann::json number_list(const std::vector<double>& values) {
    nlohmann::json list = nlohmann::json::array();
    for (double v : values) list.push_back(json_number(v));
    return list;
}

}  // namespace

nlohmann::json sparse_attention_json(const ModelAnalysis& a) {
    if (a.sparse.empty()) return nullptr;
    nlohmann::json heads = nlohmann::json::array();
    for (size_t n = 0; n < a.sparse.size(); ++n) {
        const SparseHeadError& e = a.sparse[n];
        heads.push_back({{"index", n},
                         {"layer", a.head_ids[n].layer},
                         {"head", a.head_ids[n].head},
                         {"top_k_mass_dropped", number_list(e.top_k_mass_dropped)},
                         {"top_k_error", number_list(e.top_k_error)},
                         {"window_mass_dropped", number_list(e.window_mass_dropped)},
                         {"window_error", number_list(e.window_error)}});
    }
    return {
        {"tolerance", a.thresholds.sparse_tolerance}, {"sizes", sparse_sizes(a.num_keys)}, {"heads", std::move(heads)}};
}

std::string sparse_csv(const ModelAnalysis& a) {
    if (a.sparse.empty()) return "";
    const std::vector<int64_t> sizes = sparse_sizes(a.num_keys);
    std::string csv = "index,layer,head,pattern,size,mass_dropped,relative_error\n";
    for (size_t n = 0; n < a.sparse.size(); ++n) {
        const SparseHeadError& e = a.sparse[n];
        const std::string head = fmt::format("{},{},{},", n, a.head_ids[n].layer, a.head_ids[n].head);
        for (const bool top : {true, false}) {
            const std::vector<double>& mass = top ? e.top_k_mass_dropped : e.window_mass_dropped;
            const std::vector<double>& error = top ? e.top_k_error : e.window_error;
            for (size_t m = 0; m < mass.size(); ++m)
                csv += fmt::format("{}{}{},{},{}\n", head, top ? "top_k," : "window,", sizes[m], csv_number(mass[m]),
                                   csv_number(error[m]));
        }
    }
    return csv;
}

}  // namespace attn_viz
