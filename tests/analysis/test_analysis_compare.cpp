// compare: two checkpoints head by head, in the library and on the command line.
#include <cmath>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "attention.hpp"
#include "error.hpp"
#include "head_compare.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "synth_layer.hpp"
#include "token_ids.hpp"
#include "weights_file.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

OnednnBackend& compare_backend() {
    static OnednnBackend backend;
    return backend;
}

LayerResult run_layer(const LayerWeights& w, const Tensor& x) {
    AttentionLayer layer(compare_backend(), w);
    AttentionRequest request;
    request.input = &x;
    return layer.run(request);
}

// The planted layer with head 3 (self) made uniform by zeroing its query columns.
LayerWeights with_head3_uniform(LayerWeights w) {
    for (int64_t r = 0; r < w.d_model; ++r)
        for (int64_t c = 3 * w.d_head; c < 4 * w.d_head; ++c) w.w_q.data[r * w.d_model + c] = 0;
    return w;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("compare finds the one head that changed between two checkpoints") {
    const PlantedLayer p = make_planted_layer(planted_demo_tokens(), rng()());
    const LayerWeights changed = with_head3_uniform(p.weights);
    const LayerResult a = run_layer(p.weights, p.embeddings), b = run_layer(changed, p.embeddings);
    const std::vector<int64_t> tokens = token_ids_from_labels(p.tokens);
    const HeadComparison c =
        compare_runs({&a}, {&p.weights}, {&b}, {&changed}, tokens, analysis_fixtures::default_options());
    REQUIRE(c.change.size() == 6);
    CHECK(c.first.labels[3] == "self");
    CHECK(c.second.labels[3] == "diffuse");
    for (int64_t h = 0; h < 6; ++h) {
        INFO("head " << h);
        for (const HeadStatField& f : head_stat_fields()) {
            const double want = c.second.heads[h].*f.member - c.first.heads[h].*f.member;
            if (std::isnan(want))
                CHECK(std::isnan(c.change[h].*f.member));
            else
                CHECK(c.change[h].*f.member == want);
        }
        if (h == 3) {
            CHECK(c.maps.js_distance[h] > 0.5);
        } else {
            CHECK(c.maps.js_distance[h] < 1e-3);
            CHECK(c.maps.correlation[h] == doctest::Approx(1.0).epsilon(1e-6));
        }
    }
    CHECK(heads_above(comparison_metric(c, "js_distance"), 0.5) == std::vector<int64_t>{3});
    CHECK(heads_above(comparison_metric(c, "correlation_distance"), 0.5) == std::vector<int64_t>{3});
    CHECK(heads_above(comparison_metric(c, "entropy"), 1.0) == std::vector<int64_t>{3});
    CHECK_THROWS_AS(comparison_metric(c, "nonsense"), Error);
    const nlohmann::json j = comparison_json(c);
    CHECK(j["format"] == "attn-viz/compare@1");
    CHECK(j["heads"][3]["label_b"] == "diffuse");
    CHECK(j["heads"][3]["change"]["entropy"].get<double>() == doctest::Approx(std::log(12.0)).epsilon(1e-4));
    CHECK(comparison_table(c).find("diffuse") != std::string::npos);
}

TEST_CASE("attn-viz compare exits 1 above --fail-above and 0 for identical checkpoints") {
    ScratchDir dir;
    const PlantedLayer p = make_planted_layer(planted_demo_tokens(), 5);
    write_planted_layer(dir / "a.json", dir / "x.json", p);
    write_weights_file(dir / "b.json", with_head3_uniform(p.weights));
    CommandResult r = run_attn_viz("compare " + (dir / "a.json") + " " + (dir / "b.json") + " --input " +
                                   (dir / "x.json") + " --fail-above 0.5 --out " + (dir / "cmp"));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("attn-viz: L0H3: js_distance") != std::string::npos);
    const auto j = nlohmann::json::parse(read_text(dir / "cmp/compare.json"));
    CHECK(j["heads"].size() == 6);
    r = run_attn_viz("compare " + (dir / "a.json") + " " + (dir / "a.json") + " --input " + (dir / "x.json") +
                     " --fail-above 0.001 -q");
    CHECK(r.exit_code == 0);
    CHECK(r.output.empty());
    CHECK(run_attn_viz("compare " + (dir / "a.json") + " " + (dir / "b.json") + " --input " + (dir / "x.json") +
                       " --fail-metric bogus")
              .exit_code == 2);
    LayerWeights other = p.weights;
    other.num_heads = other.num_kv_heads = 3, other.d_head = 16;
    write_weights_file(dir / "c.json", other);
    CHECK(run_attn_viz("compare " + (dir / "a.json") + " " + (dir / "c.json") + " --input " + (dir / "x.json"))
              .exit_code == 3);
}

}  // TEST_SUITE("analysis")
