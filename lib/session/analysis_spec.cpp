#include "analysis_spec.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "analyses.hpp"
#include "error.hpp"
#include "model_run.hpp"
#include "token_reference.hpp"

namespace attn_viz {
namespace {

// One analysis's options object: each read at most once, the rest refused by name.
class SpecOptions {
public:
    SpecOptions(std::string analysis, const nlohmann::json& options, std::vector<std::string> known)
        : analysis_(std::move(analysis)), options_(options), known_(std::move(known)) {
        if (!options_.is_null() && !options_.is_object()) fail("the options are not an object");
        if (!options_.is_object()) return;
        for (const auto& [key, value] : options_.items())
            if (std::find(known_.begin(), known_.end(), key) == known_.end())
                fail(fmt::format("no option '{}'; it takes {}", key,
                                 known_.empty() ? std::string("none") : fmt::format("{}", fmt::join(known_, ", "))));
    }

    bool has(const std::string& key) const { return options_.is_object() && options_.contains(key); }

    std::string text(const std::string& key, const std::string& fallback) const {
        if (!has(key)) return fallback;
        if (!options_[key].is_string()) fail(fmt::format("{} is not a string", key));
        return options_[key].get<std::string>();
    }

    std::vector<int> ids(const std::string& key) const {
        const nlohmann::json& value = options_[key];
        std::vector<int> ids;
        if (!value.is_array()) fail(fmt::format("{} is not a list of token ids", key));
        for (const nlohmann::json& id : value) {
            if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
                fail(fmt::format("{} is not a list of token ids", key));
            ids.push_back(id.get<int>());
        }
        return ids;
    }

    // A token position (a whole number from 0), or none when not given.
    std::optional<int64_t> position(const std::string& key) const {
        if (!has(key) || options_[key].is_null()) return std::nullopt;
        if (!options_[key].is_number_integer() || options_[key].get<int64_t>() < 0)
            fail(fmt::format("{} is not a token position (a whole number from 0)", key));
        return options_[key].get<int64_t>();
    }

    // Runs `parse`, its Error(usage) named after the analysis and `key`.
    template <typename Parse>
    auto parsed(const std::string& key, Parse&& parse) const -> decltype(parse()) {
        try {
            return parse();
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::usage && e.kind() != ErrorKind::bad_input) throw;
            fail(fmt::format("{}: {}", key, e.what()));
        }
    }

    [[noreturn]] void fail(const std::string& message) const {
        throw Error(ErrorKind::usage, fmt::format("{}: {}", analysis_, message));
    }

private:
    std::string analysis_;
    const nlohmann::json& options_;
    std::vector<std::string> known_;
};

AblationOptions ablation_options(const SpecOptions& o, const ModelDescription& c) {
    const std::string heads = o.text("heads", "all"), mode = o.text("mode", "zero");
    return {.heads = o.parsed("heads", [&] { return parse_ablated_heads(heads, c.n_layers, c.n_heads); }),
            .mode = o.parsed("mode", [&] { return parse_ablation_mode(mode); })};
}

LogitAttributionOptions attribution_options(const SpecOptions& o, const nlohmann::json& options,
                                            const ModelDescription& c, const ModelTokenizer& tokenizer) {
    LogitAttributionOptions attribution;
    if (o.has("target")) {
        const nlohmann::json& target = options["target"];
        const std::string reference = target.is_number_integer() ? std::to_string(target.get<int64_t>())
                                      : target.is_string()       ? fmt::format("\"{}\"", target.get<std::string>())
                                                                 : std::string();
        if (reference.empty()) o.fail("target is neither a token id nor a token's text");
        attribution.target =
            o.parsed("target", [&] { return token_reference_id(reference, &tokenizer, c.vocab_size); });
    }
    attribution.target_description = attribution_target_description(attribution.target, tokenizer);
    return attribution;
}

PatchingOptions patching_options(const SpecOptions& o, const ModelDescription& c, const ModelTokenizer& tokenizer) {
    if (o.has("corrupted_text") == o.has("corrupted_ids")) o.fail("give one of corrupted_text or corrupted_ids");
    PatchingOptions patching;
    patching.corrupted = o.has("corrupted_ids") ? o.ids("corrupted_ids") : o.parsed("corrupted_text", [&] {
        return encode_within_context(tokenizer, o.text("corrupted_text", ""), c.max_tokens, "corrupted_text");
    });
    o.parsed("corrupted_ids", [&] { check_model_tokens(patching.corrupted, c.vocab_size, c.max_tokens, "the ids"); });
    const std::string metric = o.text("metric", "loss");
    patching.metric = o.parsed("metric", [&] { return parse_patch_metric(metric, c.vocab_size, &tokenizer); });
    return patching;
}

QkAttributionOptions qk_options(const SpecOptions& o, const ModelDescription& c) {
    if (!o.has("heads")) o.fail("give the heads to attribute (heads: \"L5H1\" or \"L5H1,L4H0-3\")");
    const std::string heads = o.text("heads", "");
    return {.heads = o.parsed("heads", [&] { return parse_ablated_heads(heads, c.n_layers, c.n_heads); }),
            .query_position = o.position("query_position"),
            .key_position = o.position("key_position")};
}

}  // namespace

std::unique_ptr<WholeModelAnalysis> analysis_from_spec(const std::string& name, const nlohmann::json& options,
                                                       const WholeModel& model, const ModelTokenizer& tokenizer) {
    const AnalysisTraits& row = analysis_traits_named(name);
    const ModelDescription& c = model.description();
    const std::string analysis(row.name);
    switch (row.kind) {
        case AnalysisKind::ablation:
            return make_analysis(ablation_options(SpecOptions(analysis, options, {"heads", "mode"}), c));
        case AnalysisKind::logit_attribution:
            return make_analysis(
                attribution_options(SpecOptions(analysis, options, {"target"}), options, c, tokenizer));
        case AnalysisKind::patching:
            return make_analysis(patching_options(
                SpecOptions(analysis, options, {"corrupted_text", "corrupted_ids", "metric"}), c, tokenizer));
        case AnalysisKind::composition:
            SpecOptions(analysis, options, {});
            return make_analysis(CompositionOptions{});
        case AnalysisKind::rollout:
            SpecOptions(analysis, options, {});
            return make_analysis(RolloutOptions{});
        case AnalysisKind::flow:
            SpecOptions(analysis, options, {});
            return make_analysis(FlowOptions{});
        case AnalysisKind::qk_attribution:
            return make_analysis(
                qk_options(SpecOptions(analysis, options, {"heads", "query_position", "key_position"}), c));
    }
    throw Error(ErrorKind::internal, fmt::format("{} has no options reader", analysis));
}

}  // namespace attn_viz
