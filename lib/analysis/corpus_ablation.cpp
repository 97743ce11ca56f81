#include "corpus_ablation.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "head_names.hpp"
#include "partial_json.hpp"

namespace attn_viz {
namespace {

size_t measure_count() { return ablation_measures().size(); }

std::string heads_text(const std::vector<AblatedHead>& heads) {
    std::string text;
    for (const AblatedHead& id : heads) text += (text.empty() ? "" : ",") + head_name(id.layer, id.head);
    return text;
}

}  // namespace

CorpusAblation::CorpusAblation(int64_t layers, int64_t heads, AblationMode mode, std::vector<AblatedHead> ablated)
    : layers_(layers),
      heads_(heads),
      mode_(mode),
      ablated_(std::move(ablated)),
      moments_(ablated_.size() * measure_count()) {}

const RunningMoments& CorpusAblation::moments(size_t k, size_t measure) const {
    return moments_.at(k * measure_count() + measure);
}

void CorpusAblation::add(const AblationReport& report) {
    if (report.mode != mode_ || report.heads.size() != ablated_.size())
        throw Error(ErrorKind::internal, "CorpusAblation::add: a report of other heads or another mode");
    const std::vector<AblationMeasure>& measures = ablation_measures();
    for (size_t k = 0; k < ablated_.size(); ++k) {
        if (!(report.heads[k].id == ablated_[k]))
            throw Error(ErrorKind::internal, "CorpusAblation::add: the heads in another order");
        for (size_t m = 0; m < measures.size(); ++m)
            moments_[k * measures.size() + m].add(report.heads[k].*measures[m].member);
    }
    clean_loss_.add(report.clean_loss);
    ++sequences_;
}

void CorpusAblation::merge(const CorpusAblation& other, const std::string& where) {
    if (other.layers_ != layers_ || other.heads_ != heads_) fail_input(where, "its ablation has another layout");
    if (other.mode_ != mode_)
        fail_input(where, fmt::format("ablates heads by {}, the corpus so far by {}: partials of different "
                                      "ablation modes cannot be merged",
                                      ablation_mode_name(other.mode_), ablation_mode_name(mode_)));
    if (other.ablated_ != ablated_)
        fail_input(where, fmt::format("ablates the heads {}, the corpus so far {}: partials ablating other heads "
                                      "cannot be merged",
                                      heads_text(other.ablated_), heads_text(ablated_)));
    for (size_t k = 0; k < moments_.size(); ++k) moments_[k].merge(other.moments_[k]);
    clean_loss_.merge(other.clean_loss_);
    sequences_ += other.sequences_;
}

nlohmann::json CorpusAblation::partial_json() const {
    nlohmann::json measures = nlohmann::json::array(), heads = nlohmann::json::array();
    for (const AblationMeasure& m : ablation_measures()) measures.push_back(m.name);
    for (const AblatedHead& id : ablated_) heads.push_back(head_name(id.layer, id.head));
    return {{"mode", ablation_mode_name(mode_)},
            {"num_layers", layers_},
            {"num_heads", heads_},
            {"heads", std::move(heads)},
            {"measures", std::move(measures)},
            {"sequences", sequences_},
            {"moments", moments_json(moments_)},
            {"clean_loss", moments_json({clean_loss_})}};
}

CorpusAblation CorpusAblation::from_partial_json(const nlohmann::json& j, int64_t layers, int64_t heads,
                                                 const std::string& where) {
    const std::string in = fmt::format("{} ablation", where);
    check_block_layout(j, layers, heads, in);
    const nlohmann::json& mode = member(j, "mode", in);
    if (!mode.is_string() || (mode != "zero" && mode != "mean"))
        fail_input(in, "\"mode\" must be \"zero\" or \"mean\"");
    nlohmann::json names = nlohmann::json::array();
    for (const AblationMeasure& m : ablation_measures()) names.push_back(m.name);
    if (member(j, "measures", in) != names)
        fail_input(in, fmt::format("\"measures\" must be this version's, {}", names.dump()));
    const nlohmann::json& listed = member(j, "heads", in);
    if (!listed.is_array() || listed.empty() || static_cast<int64_t>(listed.size()) > layers * heads)
        fail_input(in, "\"heads\" must list the ablated heads");
    std::vector<AblatedHead> ablated;
    for (const nlohmann::json& name : listed) {
        if (!name.is_string()) fail_input(in, "\"heads\" must hold head names (\"L0H1\")");
        try {
            const std::vector<AblatedHead> one = parse_ablated_heads(name.get<std::string>(), layers, heads);
            if (one.size() != 1) fail_input(in, fmt::format("\"heads\": {} is not one head", name.dump()));
            ablated.push_back(one.front());
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::usage) throw;
            fail_input(in, e.what());
        }
    }
    CorpusAblation a(layers, heads, parse_ablation_mode(mode.get<std::string>()), std::move(ablated));
    a.sequences_ = whole_number(j, "sequences", 0, max_partial_sequences, in);
    a.moments_ = read_moments(member(j, "moments", in), a.moments_.size(), a.sequences_, in);
    a.clean_loss_ = read_moments(member(j, "clean_loss", in), 1, a.sequences_, in).front();
    return a;
}

}  // namespace attn_viz
