#include "corpus_patching_run.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "head_ablation.hpp"

namespace attn_viz {

CorpusPatchingRun::CorpusPatchingRun(const std::string& path, CorpusShard shard, const LoadLimits& limits,
                                     const ModelTokenizer& tokenizer)
    : path_(path), limits_(limits), documents_(path, limits, shard, CorpusLines::json_or_text), tokenizer_(tokenizer) {}

void CorpusPatchingRun::add(CorpusPatching& patching, WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                            const std::string& clean_where, Timings& timings) {
    nlohmann::json doc;
    std::string where;
    if (!documents_.next(doc, where))
        fail_input(path_,
                   fmt::format("the corrupted corpus ends before the clean one: no partner for {}", clean_where));
    const ModelDescription& c = model.description();
    const EncodedText input = model_sequence_ids(doc, tokenizer_, c.max_tokens, limits_, where);
    const std::vector<int>& ids = input.ids;
    if (ids.size() != clean.tokens.size())
        fail_input(where, fmt::format("{} tokens, its clean partner {} {}; patching needs the same number of tokens",
                                      ids.size(), clean_where, clean.tokens.size()));
    ModelRun corrupted;
    try {
        check_model_tokens(ids, c.vocab_size, c.max_tokens);
        Timings::Scope t(timings, "forward");
        corrupted = model.run(ids, {.contributions = false, .token_types = input.type_ids});
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        fail_input(where, e.what());
    }
    Timings::Scope t(timings, "patching");
    patching.add(patch_heads(model, backend, clean, corrupted, parse_ablated_heads("all", c.n_layers, c.n_heads),
                             patching.metric()));
}

void CorpusPatchingRun::finish(CorpusPatching& patching, int64_t clean_sequences) {
    nlohmann::json doc;
    std::string where;
    if (documents_.next(doc, where)) fail_input(where, "the corrupted corpus has more sequences than the clean one");
    if (documents_.corpus_sequences() != clean_sequences)
        fail_input(path_,
                   fmt::format("the corrupted corpus holds {} sequences, the clean one {}; each needs its partner",
                               documents_.corpus_sequences(), clean_sequences));
    patching.set_corrupted_corpus(documents_.corpus_fingerprint());
}

}  // namespace attn_viz
