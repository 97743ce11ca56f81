// The analysis catalog: one row per whole-model analysis, found by its name or key; a request's
// analyses kept in catalog order; each row's obstacles on a random decoder.
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "analyses.hpp"
#include "attention/random_llama.hpp"
#include "expect_error.hpp"

using namespace attn_viz;
using test_support::expect_error;
using test_support::random_model;

TEST_CASE("every analysis is one row, found by its kind, its name and its key") {
    std::set<std::string_view> names, keys;
    for (const AnalysisTraits& row : analysis_catalog()) {
        CHECK(names.insert(row.name).second);
        CHECK(keys.insert(row.key).second);
        CHECK(&analysis_traits(row.kind) == &row);
        CHECK(&analysis_traits_named(std::string(row.key)) == &row);
        CHECK(&analysis_traits_named(std::string(row.name)) == &row);
        // What runs beside a layer stream reads no whole run.
        if (row.with_layer_stream) CHECK(row.input == AnalysisInput::weights);
        if (row.reads_logits) CHECK(row.input == AnalysisInput::whole_run);
    }
    CHECK(analysis_catalog().size() >= 6);
    const std::string message = expect_error(ErrorKind::usage, [] { analysis_traits_named("ablate heads"); },
                                             {"(the analyses: ablation, logit_attribution, patching, composition"});
    CHECK(message.find("no analysis is called 'ablate heads'") == 0);
}

TEST_CASE("a request's analyses run in catalog order, each once") {
    AnalysisSet set;
    CHECK(set.empty());
    CHECK_FALSE(set.reads_logits());
    set.add(make_analysis(FlowOptions{}));
    set.add(make_analysis(CompositionOptions{}));
    set.add(make_analysis(AblationOptions{.heads = {{0, 1}}, .mode = AblationMode::mean}));
    REQUIRE(set.all().size() == 3);
    CHECK(set.all()[0]->traits().kind == AnalysisKind::ablation);
    CHECK(set.all()[1]->traits().kind == AnalysisKind::composition);
    CHECK(set.all()[2]->traits().kind == AnalysisKind::flow);
    CHECK(set.reads_logits());
    CHECK(set.asks(AnalysisKind::flow));
    CHECK_FALSE(set.asks(AnalysisKind::rollout));
    const auto stream_blockers = set.kinds_where([](const AnalysisTraits& t) { return !t.with_layer_stream; });
    CHECK(stream_blockers == std::vector<AnalysisKind>{AnalysisKind::ablation, AnalysisKind::flow});
    expect_error(ErrorKind::internal, [&] { set.add(make_analysis(FlowOptions{})); }, {"flow asked for twice"});
}

TEST_CASE("each analysis says why it cannot run, after its name") {
    OnednnBackend backend;
    const WholeModel model(backend, random_model(16, 24, 2, 2, 1, 40, 12));
    const std::vector<int> ids = {1, 7, 3, 9, 4};
    CHECK(logits_obstacle(model).empty());
    CHECK(make_analysis(LogitAttributionOptions{})->obstacle(model, ids).empty());
    CHECK(make_analysis(CompositionOptions{})->obstacle(model, ids).empty());
    CHECK(make_analysis(AblationOptions{})->corpus_obstacle(model).empty());
    PatchingOptions patching;
    patching.corrupted = {2, 5, 8};
    CHECK(make_analysis(patching)->obstacle(model, ids) ==
          ": the corrupted input has 3 tokens, the clean input 5; patching needs the same number of tokens");
    patching.corrupted = {2, 5, 8, 1, 1};
    CHECK(make_analysis(patching)->obstacle(model, ids).empty());
}
