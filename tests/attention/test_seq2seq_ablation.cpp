// Encoder-decoder head ablation (seq2seq_ablation.hpp): one head of each stack zeroed equals the
// float64 forward of scripts/reference_hf_seq2seq.py with that head's context zeroed
// (--zero-head), for BART and T5 at several shapes; the clean loss is the reference logits'
// teacher-forced loss; mean ablation over one token changes nothing; the stack-named head lists.
#include <cmath>

#include <doctest/doctest.h>

#include "error.hpp"
#include "expect_error.hpp"
#include "hf_reference_folder.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "seq2seq_ablation.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The folder's config has `encoder_layers` and `decoder_layers` layers of `heads` heads; one head
// of `stack`, chosen at random, is zeroed by the script and by ablate_seq2seq_heads.
void check_zeroed_head(const std::string& arguments, Seq2SeqStack stack, int64_t encoder_layers, int64_t decoder_layers,
                       int64_t heads) {
    const int64_t layers = stack == Seq2SeqStack::encoder ? encoder_layers : decoder_layers;
    const Seq2SeqHead id{stack, static_cast<int64_t>(rng()() % layers), static_cast<int64_t>(rng()() % heads)};
    const std::string zero =
        std::string(seq2seq_stack_name(stack)) + ":" + std::to_string(id.layer) + ":" + std::to_string(id.head);
    CAPTURE(arguments);
    CAPTURE(zero);
    ScratchDir dir;
    make_reference_folder(dir, "reference_hf_seq2seq.py", arguments + " --zero-head " + zero);
    OnednnBackend backend;
    Seq2SeqModel model(backend, read_hf_seq2seq_folder(dir.path().string(), read_hf_config(dir / "config.json")));
    const Seq2SeqRun clean = model.run(read_ids(dir / "source_ids.txt"), read_ids(dir / "target_ids.txt"));
    const Tensor expected_clean = read_npy(dir / "expected_logits.npy"),
                 expected_zeroed = read_npy(dir / "expected_logits_zeroed.npy");

    // The rerun's logits with the head replaced by zeros against the reference's.
    const ReplacedHead replaced{id, false};
    const Tensor zeroed = model.run(clean.source, clean.target, false, &replaced).logits;
    CHECK(max_abs_diff(zeroed, expected_zeroed) < 1e-5 * magnitude(expected_zeroed));
    CHECK(max_abs_diff(expected_zeroed, expected_clean) > 1e-4);  // the head matters: the check above can fail

    // The report: loss, delta and KL from the reference's logits, in double.
    const std::array<AblationReport, 3> reports = ablate_seq2seq_heads(model, clean, {id}, AblationMode::zero);
    const AblationReport& report = reports[static_cast<size_t>(stack)];
    REQUIRE(report.heads.size() == 1);
    for (const AblationReport& other : reports)
        if (&other != &report) CHECK(other.heads.empty());
    CHECK(report.heads[0].id == AblatedHead{id.layer, id.head});
    const double clean_loss = next_token_loss(expected_clean, clean.target),
                 loss = next_token_loss(expected_zeroed, clean.target);
    if (clean.target.size() == 1) {
        CHECK(std::isnan(report.clean_loss));
        CHECK(std::isnan(report.heads[0].loss));
    } else {
        CHECK(report.clean_loss == doctest::Approx(clean_loss).epsilon(1e-5));
        CHECK(report.heads[0].loss == doctest::Approx(loss).epsilon(1e-5));
        CHECK(report.heads[0].delta_loss == doctest::Approx(loss - clean_loss).epsilon(1e-4).scale(1.0));
    }
    CHECK(report.heads[0].kl ==
          doctest::Approx(mean_next_token_kl(expected_clean, expected_zeroed)).epsilon(1e-4).scale(1e-3));
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "encoder-decoder ablation: a zeroed encoder, decoder or cross head equals transformers' head mask in float64 "
    "(BART, T5)") {
    const std::string bart =
        "--model-type bart --d-model 24 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 37 --vocab 53 ";
    const std::string t5 =
        "--model-type t5 --d-model 20 --heads 5 --head-dim 3 --encoder-layers 3 --decoder-layers 2 --ffn 19 --vocab "
        "41 ";
    for (Seq2SeqStack stack : seq2seq_stacks) {
        check_zeroed_head(bart + "--source-tokens 7 --target-tokens 9 --scale-embedding", stack, 2, 3, 4);
        check_zeroed_head(bart + "--source-tokens 33 --target-tokens 1", stack, 2, 3, 4);
        check_zeroed_head(t5 + "--source-tokens 1 --target-tokens 33", stack, 3, 2, 5);
        check_zeroed_head(t5 + "--source-tokens 9 --target-tokens 7 --gated", stack, 3, 2, 5);
    }
    check_zeroed_head(
        "--model-type t5 --d-model 8 --heads 1 --encoder-layers 1 --decoder-layers 1 --ffn 5 --vocab 13 "
        "--source-tokens 3 --target-tokens 2",
        Seq2SeqStack::cross, 1, 1, 1);
}

TEST_CASE("encoder-decoder mean ablation over one source and one target token leaves the logits unchanged") {
    ScratchDir dir;
    make_reference_folder(
        dir, "reference_hf_seq2seq.py",
        "--model-type bart --d-model 12 --heads 3 --encoder-layers 2 --decoder-layers 2 --ffn 9 --vocab 17 "
        "--source-tokens 1 --target-tokens 1");
    OnednnBackend backend;
    Seq2SeqModel model(backend, read_hf_seq2seq_folder(dir.path().string(), read_hf_config(dir / "config.json")));
    const Seq2SeqRun clean = model.run(read_ids(dir / "source_ids.txt"), read_ids(dir / "target_ids.txt"));
    const std::vector<Seq2SeqHead> heads = parse_seq2seq_ablated_heads("all", 2, 2, 3);
    const std::array<AblationReport, 3> mean = ablate_seq2seq_heads(model, clean, heads, AblationMode::mean);
    const std::array<AblationReport, 3> zero = ablate_seq2seq_heads(model, clean, heads, AblationMode::zero);
    double largest_zero_kl = 0;
    for (size_t k = 0; k < 3; ++k) {
        REQUIRE(mean[k].heads.size() == 6);
        for (size_t n = 0; n < 6; ++n) {
            CHECK(mean[k].heads[n].kl < 1e-9);
            largest_zero_kl = std::max(largest_zero_kl, zero[k].heads[n].kl);
        }
    }
    CHECK(largest_zero_kl > 1e-4);  // zeroing does change the prediction
}

TEST_CASE("encoder-decoder ablated head lists: all, heads named by stack, one-line usage errors") {
    const std::vector<Seq2SeqHead> all = parse_seq2seq_ablated_heads("all", 2, 1, 3);
    REQUIRE(all.size() == 12);
    CHECK(all[5] == Seq2SeqHead{Seq2SeqStack::encoder, 1, 2});
    CHECK(all[6] == Seq2SeqHead{Seq2SeqStack::decoder, 0, 0});
    CHECK(all[11] == Seq2SeqHead{Seq2SeqStack::cross, 0, 2});
    CHECK(parse_seq2seq_ablated_heads("cross/L0H1,encoder/1:2,cross/L0H0", 2, 1, 3) ==
          std::vector<Seq2SeqHead>{
              {Seq2SeqStack::encoder, 1, 2}, {Seq2SeqStack::cross, 0, 1}, {Seq2SeqStack::cross, 0, 0}});
    CHECK(parse_seq2seq_ablated_heads("decoder/all", 2, 1, 3).size() == 3);
    for (const char* bad : {"", "L0H1", "encoder", "encoder/", "cross/L1H0", "encoder/L0H3", "decoder/L0H1,decoder/0:1",
                            "self/L0H0", "encoder/L0H1,", "all,encoder/L0H1"}) {
        INFO(bad);
        expect_error(ErrorKind::usage, [&] { parse_seq2seq_ablated_heads(bad, 2, 1, 3); }, {"heads '"});
    }
}

}  // TEST_SUITE("model")
