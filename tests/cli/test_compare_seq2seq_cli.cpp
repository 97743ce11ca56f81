// attn-viz compare on two encoder-decoder folders (random BART and T5 folders of one shape from
// scripts/reference_hf_seq2seq.py, different weights): compare.json's every head of the encoder,
// decoder and cross stacks (JS distance and top-1 agreement of the two maps) and its output
// (KL along the target, both teacher-forced losses, top-1 agreement) against a direct float64
// computation from the two models' own runs; the pictures per stack; --fail-above naming the
// stack; and the refusals (mixed kinds, other shapes, a target for decoders, --diff-pictures).
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "model_tokenizer_file.hpp"
#include "onednn_backend.hpp"
#include "seq2seq_model.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

Seq2SeqRun run_folder(OnednnBackend& backend, const ScratchDir& dir, const std::vector<int>& source,
                      const std::vector<int>& target) {
    Seq2SeqModel model(backend, read_hf_seq2seq_folder(dir.path().string(), read_hf_config(dir / "config.json")));
    return model.run(source, target);
}

// p, q: [Tq, Tk] rows of one head of two maps. Mean over rows of sqrt(JS divergence, base 2), and
// the fraction of rows whose largest key agrees.
std::pair<double, double> js_and_top1(const float* p, const float* q, int64_t rows, int64_t keys) {
    double js_sum = 0, agree = 0;
    for (int64_t i = 0; i < rows; ++i) {
        double js = 0;
        int64_t top_p = 0, top_q = 0;
        for (int64_t j = 0; j < keys; ++j) {
            const double a = p[i * keys + j], b = q[i * keys + j], m = (a + b) / 2;
            if (a > 0) js += 0.5 * a * std::log2(a / m);
            if (b > 0) js += 0.5 * b * std::log2(b / m);
            if (p[i * keys + j] > p[i * keys + top_p]) top_p = j;
            if (q[i * keys + j] > q[i * keys + top_q]) top_q = j;
        }
        js_sum += std::sqrt(std::max(js, 0.0));
        agree += top_p == top_q;
    }
    return {js_sum / static_cast<double>(rows), agree / static_cast<double>(rows)};
}

// row: [V] -> log softmax(row)[v], in double.
double log_probability(const float* row, int64_t vocab, int64_t v) {
    double top = row[0], sum = 0;
    for (int64_t u = 0; u < vocab; ++u) top = std::max(top, double(row[u]));
    for (int64_t u = 0; u < vocab; ++u) sum += std::exp(double(row[u]) - top);
    return double(row[v]) - top - std::log(sum);
}

// Two folders of `arguments`, compared by the CLI, checked against their runs here.
void check_compare(const std::string& arguments) {
    CAPTURE(arguments);
    ScratchDir a, b;
    make_reference_folder(a, "reference_hf_seq2seq.py", arguments);
    make_reference_folder(b, "reference_hf_seq2seq.py", arguments);
    const std::vector<int> source = read_ids(a / "source_ids.txt"), target = read_ids(a / "target_ids.txt");
    const std::string out = a / "out";
    const CommandResult r = run_attn_viz("compare " + a.path().string() + " " + b.path().string() + " --tokens " +
                                         id_list(source) + " --target-tokens " + id_list(target) + " --out " + out);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* text : {"encoder:", "decoder:", "cross:", "output: mean KL(A || B)"})
        CHECK_MESSAGE(r.output.find(text) != std::string::npos, text);
    const nlohmann::json doc = nlohmann::json::parse(read_text(out + "/compare.json"));

    OnednnBackend backend;
    const Seq2SeqRun run_a = run_folder(backend, a, source, target), run_b = run_folder(backend, b, source, target);
    const int64_t S = static_cast<int64_t>(source.size()), T = static_cast<int64_t>(target.size());
    size_t n = 0;
    for (const auto& [stack, layers_a, layers_b] :
         {std::tuple{"encoder", &run_a.encoder, &run_b.encoder}, std::tuple{"decoder", &run_a.decoder, &run_b.decoder},
          std::tuple{"cross", &run_a.cross, &run_b.cross}}) {
        CHECK_MESSAGE(std::filesystem::exists(out + "/" + stack + "/js_distance.png"), stack);
        CHECK_MESSAGE(std::filesystem::exists(out + "/" + stack + "/top1_agreement.png"), stack);
        CHECK(doc["stacks"][stack]["num_layers"] == layers_a->size());
        CHECK(doc["stacks"][stack]["num_keys"] == (std::string(stack) == "decoder" ? T : S));
        for (size_t l = 0; l < layers_a->size(); ++l) {
            const Tensor &p = (*layers_a)[l].attention, &q = (*layers_b)[l].attention;  // [H, Tq, Tk]
            const int64_t H = p.dim(0), rows = p.dim(1), keys = p.dim(2);
            for (int64_t h = 0; h < H; ++h, ++n) {
                REQUIRE(n < doc["heads"].size());
                const nlohmann::json& head = doc["heads"][n];
                CAPTURE(head["name"]);
                CHECK(head["stack"] == stack);
                CHECK(head["layer"] == l);
                CHECK(head["head"] == h);
                const auto [js, top1] = js_and_top1(p.ptr() + h * rows * keys, q.ptr() + h * rows * keys, rows, keys);
                CHECK(head["map_js_distance"].get<double>() == doctest::Approx(js).epsilon(1e-5).scale(1e-3));
                CHECK(head["top1_agreement"].get<double>() == doctest::Approx(top1));
            }
        }
    }
    CHECK(n == doc["heads"].size());

    // The output along the target: row t predicts target token t + 1.
    const int64_t V = run_a.logits.dim(1);
    // Top-1 is among the tokens the tokenizer names (the CLI's choice; the model's rows past them have no label).
    const int64_t choices = read_tokenizer_file(a / "tokenizer.json", V)->vocab_size();
    REQUIRE(choices <= V);
    double kl_sum = 0, loss_a = 0, loss_b = 0, agree = 0;
    for (int64_t t = 0; t < T; ++t) {
        const float *pa = run_a.logits.ptr() + t * V, *pb = run_b.logits.ptr() + t * V;
        for (int64_t v = 0; v < V; ++v) {
            const double lp = log_probability(pa, V, v), lq = log_probability(pb, V, v);
            kl_sum += std::exp(lp) * (lp - lq);
        }
        agree += std::max_element(pa, pa + choices) - pa == std::max_element(pb, pb + choices) - pb;
        if (t + 1 < T) loss_a -= log_probability(pa, V, target[t + 1]), loss_b -= log_probability(pb, V, target[t + 1]);
    }
    const nlohmann::json& output = doc["output"];
    CHECK(output["mean_kl"].get<double>() == doctest::Approx(kl_sum / T).epsilon(1e-5).scale(1e-3));
    CHECK(output["top1_agreement"].get<double>() == doctest::Approx(agree / T));
    if (T == 1) {
        CHECK(output["loss_a"].is_null());
    } else {
        CHECK(output["loss_a"].get<double>() == doctest::Approx(loss_a / (T - 1)).epsilon(1e-5));
        CHECK(output["loss_b"].get<double>() == doctest::Approx(loss_b / (T - 1)).epsilon(1e-5));
    }
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE(
    "compare of two encoder-decoders: each stack's heads and the output along the target equal a direct float64 "
    "computation") {
    check_compare(
        "--model-type bart --d-model 16 --heads 4 --encoder-layers 2 --decoder-layers 3 --ffn 20 --vocab 300 "
        "--tokenizer "
        "--source-tokens 7 --target-tokens 9 --scale-embedding");
    check_compare(
        "--model-type t5 --d-model 12 --heads 3 --head-dim 5 --encoder-layers 1 --decoder-layers 2 --ffn 13 --vocab "
        "300 --tokenizer "
        "--source-tokens 33 --target-tokens 1 --gated");
    check_compare(
        "--model-type t5 --d-model 8 --heads 1 --encoder-layers 2 --decoder-layers 1 --ffn 9 --vocab 300 --tokenizer "
        "--source-tokens 1 --target-tokens 33");
}

TEST_CASE("compare of two encoder-decoders: --fail-above names the stack; same folder twice agrees; refusals say why") {
    const std::string bart =
        "--model-type bart --d-model 12 --heads 3 --encoder-layers 1 --decoder-layers 1 --ffn 9 --vocab 300 "
        "--tokenizer "
        "--source-tokens 4 --target-tokens 3";
    ScratchDir a, b, other;
    make_reference_folder(a, "reference_hf_seq2seq.py", bart);
    make_reference_folder(b, "reference_hf_seq2seq.py", bart);
    make_reference_folder(other, "reference_hf_seq2seq.py",
                          "--model-type bart --d-model 12 --heads 2 --encoder-layers 1 --decoder-layers 1 --ffn 9 "
                          "--vocab 300 --tokenizer "
                          "--source-tokens 4 --target-tokens 3");
    const std::string ids = " --tokens 1,2,3,4 --target-tokens 2,0,5 ";
    const CommandResult failing =
        run_attn_viz("compare " + a.path().string() + " " + b.path().string() + ids + "--fail-above 1e-6 -q");
    CHECK(failing.exit_code == 1);
    for (const char* name : {"attn-viz: encoder L0H0: js_distance", "attn-viz: decoder L0H2: js_distance",
                             "attn-viz: cross L0H1: js_distance"})
        CHECK_MESSAGE(failing.output.find(name) != std::string::npos, failing.output);
    const CommandResult same = run_attn_viz("compare " + a.path().string() + " " + a.path().string() + ids +
                                            "--fail-above 1e-6 --out " + (a / "same"));
    CHECK_MESSAGE(same.exit_code == 0, same.output);
    const nlohmann::json doc = nlohmann::json::parse(read_text(a / "same/compare.json"));
    CHECK(doc["output"]["mean_kl"].get<double>() < 1e-9);
    CHECK(doc["heads"].size() == 9);
    CHECK(doc["stacks"]["cross"]["summary"]["num_heads"] == 3);

    ScratchDir llama;
    make_reference_folder(
        llama, "reference_hf_llama.py",
        "--model-type llama --d-model 8 --heads 2 --kv-heads 1 --layers 1 --ffn 9 --vocab 300 --tokenizer --tokens 3");
    for (const auto& [command, needle] : std::vector<std::pair<std::string, std::string>>{
             {a.path().string() + " " + other.path().string() + ids, "a different architecture from"},
             {a.path().string() + " " + llama.path().string() + ids, "not an encoder-decoder folder, while"},
             {llama.path().string() + " " + llama.path().string() + ids, "has no decoder input"},
             {a.path().string() + " " + b.path().string() + ids + "--generate 2",
              "--generate is not built for encoder-decoders"},
             {a.path().string() + " " + b.path().string() + ids + "--diff-pictures 2 --out " + (a / "o"),
              "--diff-pictures is not built for encoder-decoders"},
         }) {
        CAPTURE(command);
        const CommandResult r = run_attn_viz("compare " + command);
        CHECK(r.exit_code != 0);
        CHECK(r.exit_code != 1);
        CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
        CHECK(std::count(r.output.begin(), r.output.end(), '\n') <= 2);
    }
}

}  // TEST_SUITE("model")
