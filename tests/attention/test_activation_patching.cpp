// Activation patching per head on small random Llama models: each head patched from a corrupted
// input against the double reference forward with that head's output replaced position by
// position; planted cases (a head that writes nothing, an input that is its own corruption, the
// only live head); and the --patch-metric parser.
#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "activation_patching.hpp"
#include "block_sources.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "random_llama.hpp"
#include "reference_llama.hpp"
#include "token_reference.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The scale of a logit difference's bound: the logits it subtracts. The difference is only as
// accurate as they are (float32 rounding of logits near 1 is about 1e-7, as large as a small
// difference's own 1e-4 share), so a bound relative to the difference alone fails by chance.
double logit_scale(const double* last) { return std::max(1e-3, std::fabs(last[1]) + std::fabs(last[2])); }

}  // namespace

TEST_SUITE("model") {
TEST_CASE("patching a head from a corrupted run equals the double reference rerun with that head's corrupted outputs") {
    for_each_test_model([&](const ModelShape& s, WholeModel& model, OnednnBackend& backend) {
        const std::vector<AblatedHead> heads = parse_ablated_heads("all", s.layers, s.heads);
        const int64_t hs = s.dim / s.heads;
        for (int T : {1, 6}) {
            INFO("dim " << s.dim << " heads " << s.heads << " T " << T);
            const std::vector<int> clean_ids = random_ids(T, s.vocab), corrupted_ids = random_ids(T, s.vocab);
            const ModelRun clean = model.run(clean_ids), corrupted = model.run(corrupted_ids);
            const ReferenceRun reference_corrupted = reference_forward(model.weights(), corrupted_ids);
            const ReferenceRun reference_clean = reference_forward(model.weights(), clean_ids);
            for (const PatchMetric& metric : {PatchMetric{}, PatchMetric{PatchMetric::Kind::logit_diff, 1, 2}}) {
                const PatchingReport report = patch_heads(model, backend, clean, corrupted, heads, metric);
                REQUIRE(report.heads.size() == heads.size());
                for (const HeadPatchEffect& e : report.heads) {
                    const ReferenceRun patched = reference_forward(
                        model.weights(), clean_ids,
                        {e.id.layer, e.id.head,
                         reference_head_rows(reference_corrupted, e.id.layer, e.id.head, hs, s.dim, T)});
                    const double* last = patched.logits.data() + (T - 1) * s.vocab;
                    const double expected = metric.kind == PatchMetric::Kind::loss
                                                ? reference_next_token_loss(patched.logits, clean_ids, s.vocab)
                                                : last[1] - last[2];
                    if (std::isnan(expected))
                        CHECK(std::isnan(e.value));
                    else
                        CHECK(e.value == doctest::Approx(expected).epsilon(1e-4).scale(
                                             metric.kind == PatchMetric::Kind::loss ? 1e-3 : logit_scale(last)));
                }
                if (metric.kind == PatchMetric::Kind::logit_diff) {
                    const double* last = reference_clean.logits.data() + (T - 1) * s.vocab;
                    CHECK(report.clean == doctest::Approx(last[1] - last[2]).epsilon(1e-4).scale(logit_scale(last)));
                }
            }
        }
    });
}

TEST_CASE(
    "planted patching: a head that writes nothing, a corruption equal to the input, the only live head of one "
    "layer") {
    OnednnBackend backend;
    ModelWeights weights = random_model(16, 24, 1, 4, 4, 30, 16);
    BlockWeights& block = edited_blocks(weights)[0];
    Tensor& w_o = block.attention.w_o;  // [H*d_h, D]: heads 1..3 write nothing
    std::fill(w_o.data.begin() + 4 * 16, w_o.data.end(), 0.0f);
    // No feed-forward, so the one layer's head 0 is all that reads the context.
    std::fill(block.w_out.data.begin(), block.w_out.data.end(), 0.0f);
    WholeModel model(backend, std::move(weights));
    std::vector<int> clean_ids = random_ids(8, 30), corrupted_ids = clean_ids;
    corrupted_ids[0] = (clean_ids[0] + 1) % 30;  // only the first token differs
    const ModelRun clean = model.run(clean_ids), corrupted = model.run(corrupted_ids);
    const PatchingReport report = patch_heads(model, backend, clean, corrupted, parse_ablated_heads("all", 1, 4), {});
    for (int h = 1; h < 4; ++h) CHECK(report.heads[h].delta == 0.0);
    // Head 0 carries every effect of the first token on later positions: patched, the later
    // positions' logits are the corrupted run's, so the loss moves most of the way.
    CHECK(std::abs(report.heads[0].delta) > 1e-4);
    CHECK(report.heads[0].kl > 1e-5);
    // Patching from the clean input itself changes nothing.
    const PatchingReport same = patch_heads(model, backend, clean, clean, parse_ablated_heads("all", 1, 4), {});
    for (const HeadPatchEffect& e : same.heads) {
        CHECK(e.delta == 0.0);
        CHECK(std::isnan(e.fraction));
    }
}

TEST_CASE("--patch-metric: loss or logit-diff:A,B within the vocabulary, one-line usage errors otherwise") {
    CHECK(parse_patch_metric("loss", 10).kind == PatchMetric::Kind::loss);
    const PatchMetric diff = parse_patch_metric("logit-diff:3,7", 10);
    CHECK((diff.kind == PatchMetric::Kind::logit_diff && diff.correct == 3 && diff.wrong == 7));
    CHECK(patch_metric_name(diff) == "logit-diff:3,7");
    CHECK(parse_patch_metric("logit-diff:3, 7", 10) == diff);
    // Quoted token texts (a comma or an escaped quote inside belongs to the text) need a tokenizer.
    CHECK(split_token_references(R"(" a,b", 3,"\",",7)") ==
          std::vector<std::string>{R"(" a,b")", "3", R"("\",")", "7"});
    for (const char* bad : {"", "kl", "logit-diff:", "logit-diff:3", "logit-diff:3,7,8", "logit-diff:3,10",
                            "logit-diff:a,b", "logit-diff:-1,2", "logit-diff:\"a\",3", "logit-diff:\"a,b\""}) {
        INFO(bad);
        CHECK(expect_error(ErrorKind::usage, [&] { parse_patch_metric(bad, 10); }, {}).rfind("patch metric '", 0) == 0);
    }
}

}  // TEST_SUITE("model")
