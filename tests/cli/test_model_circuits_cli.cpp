// attn-viz model's circuit analyses on the trained stories260K: --logit-attribution (with and
// without --target), activation patching (--patch-from, --patch-from-tokens, --patch-metric),
// composition scores (--composition, streamed too), their files, stats.json entries and findings, and their
// usage errors (skipped with a message where ../shared is absent).
#include <cctype>
#include <cstdio>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "logit_attribution_csv.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

namespace {

std::string model_files(const std::string& model) {
    return " --checkpoint " + model + "/stories260K.bin --tokenizer " + model + "/tok512.bin";
}

// Each of `arguments` (after "model -q") is a one-line usage error (exit 2) that writes nothing.
void check_usage_errors(const std::vector<std::string>& arguments, const ScratchDir& dir) {
    for (const std::string& bad : arguments) {
        INFO(bad);
        const CommandResult refused = run_attn_viz("model -q" + bad + " --out " + (dir / "bad"));
        CHECK(refused.exit_code == 2);
        CHECK(std::count(refused.output.begin(), refused.output.end(), '\n') <= 2);
        CHECK(!fs::exists(dir / "bad"));
    }
}

// "<tr><td>a</td><td>b</td>...": the start of a report.html table row.
std::string table_row(const std::vector<std::string>& cells) {
    std::string row = "<tr>";
    for (const std::string& cell : cells) row += "<td>" + cell + "</td>";
    return row;
}

std::string head_text(const nlohmann::json& layer, const nlohmann::json& head) {
    return "L" + std::to_string(layer.get<int>()) + "H" + std::to_string(head.get<int>());
}

// A number as the report's tables print it: "%+.4f" (signed), or "%.4f".
std::string signed4(const nlohmann::json& x, const char* format = "%+.4f") {
    char text[32];
    std::snprintf(text, sizeof text, format, x.get<double>());
    return text;
}

}  // namespace

TEST_SUITE("model") {
TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --logit-attribution: every component at every position sums to the logit of the next token; --target; "
    "errors") {
    if (model.empty()) return;
    const std::vector<int> ids = {1, 403, 407, 261, 300, 403, 407, 261, 290};
    const std::string files = model_files(model) + " --tokens 1,403,407,261,300,403,407,261,290";
    const CommandResult r =
        run_attn_viz("model" + files + " --logit-attribution --html --heads L0H0 --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const nlohmann::json& a = stats["logit_attribution"];
    CHECK(a["target"] == "next token");
    const size_t T = ids.size();
    REQUIRE(a["positions"].size() == T);
    for (size_t t = 0; t + 1 < T; ++t) CHECK(a["positions"][t]["target_id"] == ids[t + 1]);
    REQUIRE(a["heads"].size() == 40);
    for (size_t n = 1; n < 40; ++n) CHECK(a["heads"][n - 1]["mean"] >= a["heads"][n]["mean"]);
    REQUIRE(a["layers"].size() == 5);
    // 1 embedding + 5 layers x (8 heads + bias + feed-forward) + the norm's bias, per position.
    const std::string csv = read_text(dir / "out/logit_attribution.csv");
    CHECK(csv.rfind("position,target_id,component,layer,head,contribution,target\n0,403,embedding,", 0) == 0);
    CHECK(csv.find(",\" Once\"\n1,407,embedding,") != std::string::npos);  // each row ends with its target's text
    CHECK(std::count(csv.begin(), csv.end(), '\n') == static_cast<long>(1 + T * (2 + 5 * 10)));
    for (const auto& [position, sum] : logit_attribution_sums(csv))
        CHECK(sum == doctest::Approx(a["positions"][position]["logit"].get<double>()).epsilon(1e-4));
    CHECK(fs::exists(dir / "out/logit_attribution_heads.png"));
    CHECK(fs::exists(dir / "out/logit_attribution_last.png"));
    // The top head named in the findings, on stdout and in report.html.
    REQUIRE(a["findings"].size() == 2);
    const std::string first = a["findings"][0];
    CHECK(first.find("L" + std::to_string(a["heads"][0]["layer"].get<int>()) + "H" +
                     std::to_string(a["heads"][0]["head"].get<int>())) != std::string::npos);
    CHECK(r.output.find("  " + first + "\n") != std::string::npos);
    const std::string html = read_text(dir / "out/report.html");
    CHECK(html.find("<section class=\"analysis\" id=\"logit_attribution\">") != std::string::npos);
    // The table of the top heads: rank, head, mean and last-position contribution.
    CHECK(html.find("<th>mean contribution</th><th>last position</th>") != std::string::npos);
    for (size_t n = 0; n < 10; ++n) {
        const nlohmann::json& head = a["heads"][n];
        CHECK(html.find(table_row({std::to_string(n + 1), head_text(head["layer"], head["head"]), signed4(head["mean"]),
                                   signed4(head["last"])})) != std::string::npos);
    }
    CHECK(html.find(table_row({"11", head_text(a["heads"][10]["layer"], a["heads"][10]["head"])})) ==
          std::string::npos);

    // --target: one token's logit everywhere.
    REQUIRE(
        run_attn_viz("model -q" + files + " --logit-attribution --target 300 --stats-only --out " + (dir / "target"))
            .exit_code == 0);
    const nlohmann::json target = nlohmann::json::parse(read_text(dir / "target/stats.json"))["logit_attribution"];
    CHECK(target["target"].get<std::string>().rfind("token 300 '", 0) == 0);
    for (const auto& position : target["positions"]) CHECK(position["target_id"] == 300);
    CHECK(!fs::exists(dir / "target/logit_attribution_heads.png"));

    // --target by its text, as tokenize and the CSV show the token (SentencePiece's "▁Once" is " Once"), or
    // as text that encodes to it: the same attribution as by its id.
    for (const std::string& named : {std::string("403"), std::string("'\" Once\"'"), std::string("'\"Once\"'")}) {
        INFO(named);
        const CommandResult by = run_attn_viz("model -q" + files + " --logit-attribution --target " + named +
                                              " --stats-only --force --out " + (dir / "named"));
        REQUIRE_MESSAGE(by.exit_code == 0, by.output);
        const nlohmann::json a403 = nlohmann::json::parse(read_text(dir / "named/stats.json"))["logit_attribution"];
        CHECK(a403["target"] == "token 403 ' Once'");
        for (const auto& position : a403["positions"]) CHECK(position["target"] == " Once");
    }
    const CommandResult pieces =
        run_attn_viz("model -q" + files + " --logit-attribution --target '\" ball\"' --out " + (dir / "bad"));
    CHECK(pieces.output ==
          "attn-viz: error: --target: \" ball\" is 3 tokens, not one: it encodes to 410 \" \", 268 "
          "\" b\", 388 \"all\"\n");
    check_usage_errors({files + " --target 3", files + " --logit-attribution --target 512",
                        files + " --logit-attribution --target x", files + " --logit-attribution --target '\"x'"},
                       dir);
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --patch-from-tokens ranks every head by how far patching it moves the loss; logit-diff; --patch-from "
    "text; errors") {
    if (model.empty()) return;
    // A sentence seen twice; the corrupted input changes the first copy, so the second is no repeat.
    const std::string clean = " --tokens 1,403,407,261,300,290,403,407,261,300,290";
    const std::string files =
        model_files(model) + clean + " --patch-from-tokens 1,350,380,270,310,295,403,407,261,300,290";
    const CommandResult r = run_attn_viz("model -q" + files + " --heads L0H0 --html --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const nlohmann::json& p = stats["activation_patching"];
    const std::string html = read_text(dir / "out/report.html");  // the ranking's table: the first 10 heads
    CHECK(html.find("<th>delta</th><th>fraction</th><th>KL (nats)</th>") != std::string::npos);
    for (size_t n = 0; n < 10; ++n) {
        const nlohmann::json& head = p["heads"][n];
        CHECK(html.find(table_row({std::to_string(n + 1), head_text(head["layer"], head["head"]),
                                   signed4(head["delta"]), signed4(head["fraction"]), signed4(head["kl"])})) !=
              std::string::npos);
    }
    CHECK(p["metric"] == "loss");
    CHECK(p["corrupted_tokens"].size() == 11);
    REQUIRE(p["heads"].size() == 40);
    const double clean_loss = p["clean"], effect = p["corrupted"].get<double>() - clean_loss;
    CHECK(effect != 0.0);
    for (size_t n = 0; n < 40; ++n) {
        const nlohmann::json& head = p["heads"][n];
        if (n > 0) CHECK(std::abs(p["heads"][n - 1]["delta"].get<double>()) >= std::abs(head["delta"].get<double>()));
        CHECK(head["value"].get<double>() == doctest::Approx(clean_loss + head["delta"].get<double>()));
        CHECK(head["fraction"].get<double>() == doctest::Approx(head["delta"].get<double>() / effect));
    }
    const std::string csv = read_text(dir / "out/patching.csv");
    CHECK(csv.rfind("rank,index,layer,head,delta,fraction,kl,value\n1,", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 41);
    CHECK(fs::exists(dir / "out/patching_delta.png"));
    CHECK(fs::exists(dir / "out/patching_kl.png"));
    REQUIRE(p["findings"].size() == 2);
    CHECK(p["findings"][0].get<std::string>().rfind("activation patching (loss): patching L", 0) == 0);

    // A logit difference at the last position; the corrupted input as text.
    const CommandResult diff =
        run_attn_viz("model -q" + files + " --patch-metric logit-diff:290,300 --stats-only --out " + (dir / "diff"));
    REQUIRE_MESSAGE(diff.exit_code == 0, diff.output);
    const nlohmann::json d = nlohmann::json::parse(read_text(dir / "diff/stats.json"))["activation_patching"];
    CHECK(d["metric"] == "logit-diff:290,300");
    CHECK(d["clean"] != d["corrupted"]);
    // The tokens by their texts (a comma inside the quotes is the token's): the same metric, named by its ids,
    // with the texts beside them and in the findings.
    const std::string by_ids = "model -q" + files + " --stats-only --out ";
    REQUIRE(run_attn_viz(by_ids + (dir / "ids") + " --patch-metric logit-diff:432,426").exit_code == 0);
    const CommandResult texts = run_attn_viz(by_ids + (dir / "texts") + " --patch-metric 'logit-diff:\",\",\".\"'");
    REQUIRE_MESSAGE(texts.exit_code == 0, texts.output);
    nlohmann::json t = nlohmann::json::parse(read_text(dir / "texts/stats.json"))["activation_patching"];
    CHECK(t["metric"] == "logit-diff:432,426");
    CHECK(t["metric_tokens"] == nlohmann::json{",", "."});
    CHECK(t["findings"][0].get<std::string>().find("moves logit(token 432 ',') - logit(token 426 '.') at the last "
                                                   "position most") != std::string::npos);
    CHECK(t == nlohmann::json::parse(read_text(dir / "ids/stats.json"))["activation_patching"]);
    const std::string text = model_files(model) + " --text \"Lily saw a ball.\"";
    const CommandResult same =
        run_attn_viz("model -q" + text + " --patch-from \"Lily saw a ball.\" --stats-only --out " + (dir / "same"));
    REQUIRE_MESSAGE(same.exit_code == 0, same.output);
    const nlohmann::json same_stats = nlohmann::json::parse(read_text(dir / "same/stats.json"));  // outlives the loop
    for (const auto& head : same_stats["activation_patching"]["heads"]) CHECK(head["delta"] == 0.0);

    const CommandResult longer =
        run_attn_viz("model -q" + text + " --patch-from \"Lily saw a big red ball.\" --out " + (dir / "bad"));
    CHECK(longer.exit_code == 2);
    CHECK(longer.output.find("--patch-from: the corrupted input has ") != std::string::npos);
    const CommandResult pieces =
        run_attn_viz("model -q" + files + " --patch-metric 'logit-diff:\" ball\",290' --out " + (dir / "bad"));
    CHECK(pieces.output ==
          "attn-viz: error: --patch-metric: patch metric 'logit-diff:\" ball\",290': \" ball\" is 3 tokens, not one: "
          "it encodes to 410 \" \", 268 \" b\", 388 \"all\"\n");
    check_usage_errors({text + " --patch-metric logit-diff:1,2", text + " --patch-from x --patch-from-tokens 1,2",
                        files + " --patch-metric logit-diff:1", files + " --patch-metric logit-diff:1,512",
                        files + " --patch-metric 'logit-diff:\"a,b\"'", files + " --patch-metric 'logit-diff:\"\",1'",
                        model_files(model) + clean + " --patch-from-tokens 1,2"},
                       dir);
}

TEST_CASE_FIXTURE(
    Stories260kFixture,
    "model --composition scores every earlier head against every later head, three kinds, with pictures and "
    "findings") {
    if (model.empty()) return;
    const CommandResult r = run_attn_viz(
        "model" + model_files(model) + " --tokens 1,403,407 --composition --heads L0H0 --html --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json c = nlohmann::json::parse(read_text(dir / "out/stats.json"))["composition"];
    const std::string html = read_text(dir / "out/report.html");  // the 5 strongest pairs of each kind
    CHECK(html.find("<th>kind</th><th>earlier head</th><th>later head</th><th>score</th>") != std::string::npos);
    for (const char* kind : {"q", "k", "v"})
        for (size_t n = 0; n < 6; ++n) {
            const nlohmann::json& pair = c[kind]["top"][n];
            const std::string row =
                table_row({std::string(1, static_cast<char>(std::toupper(kind[0]))),
                           head_text(pair["earlier_layer"], pair["earlier_head"]),
                           head_text(pair["later_layer"], pair["later_head"]), signed4(pair["score"], "%.4f")});
            CHECK((html.find(row) != std::string::npos) == (n < 5));
        }
    CHECK(c["norm_folding"] == "RMSNorm weights folded into W_Q, W_K, W_V");
    // 8 x 8 heads for each of the 10 pairs of layers.
    const std::string csv = read_text(dir / "out/composition.csv");
    CHECK(csv.rfind("kind,earlier_layer,earlier_head,later_layer,later_head,score\n", 0) == 0);
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * 640);
    REQUIRE(c["findings"].size() == 3);
    for (const char* kind : {"q", "k", "v"}) {
        INFO(kind);
        const nlohmann::json& top = c[kind]["top"];
        REQUIRE(top.size() == 10);
        for (size_t n = 0; n < top.size(); ++n) {
            CHECK(top[n]["later_layer"] > top[n]["earlier_layer"]);
            CHECK(top[n]["score"].get<double>() > 0);
            CHECK(top[n]["score"].get<double>() <= 1);
            if (n > 0) CHECK(top[n - 1]["score"] >= top[n]["score"]);
        }
        CHECK(c[kind]["mean"].get<double>() < top[0]["score"].get<double>());
        // Read against what random weights score: 1/sqrt(D) for D = 64, near this model's mean.
        CHECK(c[kind]["chance"] == 0.125);
        CHECK(std::abs(c[kind]["mean"].get<double>() - 0.125) < 0.03);
        CHECK(fs::exists(dir / ("out/composition_" + std::string(kind) + ".png")));
    }
    CHECK(r.output.find("  " + c["findings"][1].get<std::string>() + "\n") != std::string::npos);
    CHECK(c["findings"][1].get<std::string>().rfind("K-composition: strongest L", 0) == 0);
    CHECK(c["findings"][1].get<std::string>().ends_with(" pairs; random weights score 0.125)"));

    // Streamed layer by layer: the weights' scores are the same, to the byte.
    const CommandResult streamed = run_attn_viz("model -q --stream-layers" + model_files(model) +
                                                " --tokens 1,403,407 --composition --out " + (dir / "streamed"));
    REQUIRE_MESSAGE(streamed.exit_code == 0, streamed.output);
    CHECK(read_text(dir / "streamed/composition.csv") == csv);
    CHECK(nlohmann::json::parse(read_text(dir / "streamed/stats.json"))["composition"] == c);
    for (const char* kind : {"q", "k", "v"})
        CHECK(fs::exists(dir / ("streamed/composition_" + std::string(kind) + ".png")));
}

}  // TEST_SUITE("model")
