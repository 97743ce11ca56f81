// An encoder's findings (Clark et al. 2019, issue 44 item 2) through the CLI on random BERT folders
// (scripts/reference_hf_transformer.py): the special-token masses as the dumped maps give them, in
// stats.json and heads.csv; each of Clark's labels and thresholds; --ablate's change of the final
// hidden states against the float64 reference's, zero and mean; a layer run without a tokenizer
// has no roles and keeps the decoder's labels.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

// A random BERT folder with the small WordPiece tokenizer ([CLS] 2, [SEP] 3, "." 10, "," 11).
void make_bert(const ScratchDir& dir, const std::string& extra = "") {
    make_reference_folder(dir, "reference_hf_transformer.py",
                          "--model-type bert --d-model 18 --heads 3 --layers 2 --ffn 20 --vocab 70 --tokens 5 "
                          "--tokenizer " +
                              extra);
}

// Per head of the dump [L, H, T, T], the mean over rows of the mass on the tokens `in_role` picks.
template <typename Pick>
std::vector<double> role_masses(const Tensor& maps, Pick in_role) {
    const int64_t L = maps.dim(0), H = maps.dim(1), T = maps.dim(2);
    std::vector<double> masses;
    for (int64_t n = 0; n < L * H; ++n) {
        double total = 0;
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j)
                if (in_role(j)) total += maps.data[static_cast<size_t>((n * T + i) * T + j)];
        masses.push_back(total / static_cast<double>(T));
    }
    return masses;
}

// The heads' labels of a run with `thresholds`.
std::vector<std::string> labels_with(const ScratchDir& dir, const std::string& run, const std::string& thresholds,
                                     nlohmann::json* stats_out = nullptr) {
    const CommandResult r = run_attn_viz(run + thresholds + " --stats-only --force --out " + (dir / "labels"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "labels/stats.json"));
    std::vector<std::string> labels;
    for (const auto& head : stats["heads"]) labels.push_back(head["label"]);
    if (stats_out) *stats_out = stats;
    return labels;
}

// The sentence of the finding of `kind` in stats.json, or "".
std::string finding(const nlohmann::json& stats, const std::string& kind) {
    for (const auto& f : stats["findings"])
        if (f["kind"] == kind) return f["sentence"];
    return "";
}

// The number in column `name` of heads.csv's row `row` (0 = first head).
double csv_value(const std::string& csv, const std::string& name, size_t row) {
    std::istringstream lines(csv);
    std::string header, line;
    std::getline(lines, header);
    for (size_t n = 0; n <= row; ++n) std::getline(lines, line);
    const auto split = [](const std::string& text) {
        std::vector<std::string> fields;
        std::stringstream s(text);
        for (std::string field; std::getline(s, field, ',');) fields.push_back(field);
        return fields;
    };
    const std::vector<std::string> names = split(header), values = split(line);
    for (size_t k = 0; k < names.size(); ++k)
        if (names[k] == name) return values.at(k).empty() ? NAN : std::stod(values[k]);
    FAIL("no column " << name);
    return NAN;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model on a BERT folder: special-token masses of the maps, in stats.json and heads.csv") {
    ScratchDir dir;
    make_bert(dir);
    const CommandResult r = run_attn_viz("model -q --model " + dir.path().string() +
                                         " --text \"the cat sat, on the mat.\" --text-pair \"the mat.\" --out " +
                                         (dir / "out") + " --stats-only --dump-attention " + (dir / "maps.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const std::vector<std::string> tokens = stats["tokens"];
    REQUIRE(tokens == std::vector<std::string>{"[CLS]", "the", "cat", "sat", ",", "on", "the", "mat", ".", "[SEP]",
                                               "the", "mat", ".", "[SEP]"});
    const auto is = [&](const char* text) { return [&, text](int64_t j) { return tokens[size_t(j)] == text; }; };
    const Tensor maps = read_npy(dir / "maps.npy");
    const std::vector<double> cls = role_masses(maps, is("[CLS]")), sep = role_masses(maps, is("[SEP]")),
                              last_sep = role_masses(maps, [](int64_t j) { return j == 13; }),
                              punctuation = role_masses(maps, [&](int64_t j) {
                                  return tokens[size_t(j)] == "," || tokens[size_t(j)] == ".";
                              });
    const std::string csv = read_text(dir / "out/heads.csv");
    REQUIRE(stats["heads"].size() == 6);
    for (size_t n = 0; n < 6; ++n) {
        CAPTURE(n);
        const nlohmann::json& head = stats["heads"][n];
        const nlohmann::json& masses = head["special_token_mass"];
        CHECK(masses["cls"].get<double>() == doctest::Approx(cls[n]).epsilon(1e-5));
        CHECK(masses["sep"].get<double>() == doctest::Approx(sep[n]).epsilon(1e-5));
        CHECK(masses["last_sep"].get<double>() == doctest::Approx(last_sep[n]).epsilon(1e-5));
        CHECK(masses["punctuation"].get<double>() == doctest::Approx(punctuation[n]).epsilon(1e-5));
        CHECK(last_sep[n] < sep[n]);
        for (const char* name : {"cls", "sep", "last_sep", "punctuation"}) {
            const std::string flat = std::string(name) + "_mass";
            CHECK(head[flat] == masses[name]);
            CHECK(csv_value(csv, flat, n) == doctest::Approx(masses[name].get<double>()).epsilon(1e-6));
        }
    }
    for (const char* name : {"sep", "delimiter", "broad"}) CHECK(stats["thresholds"].contains(name));
}

TEST_CASE("model on a BERT folder: [SEP], delimiter, [CLS], broad and local by their thresholds, and the findings") {
    ScratchDir dir;
    make_bert(dir);
    const std::string run = "model -q --model " + dir.path().string() +
                            " --text \"the cat sat, on the mat.\" --text-pair \"the mat.\"" +
                            " --threshold induction=2 --threshold previous_token=2 --threshold next_token=2"
                            " --threshold self=2";
    const auto all = [](const std::vector<std::string>& labels, const std::string& label) {
        return std::all_of(labels.begin(), labels.end(), [&](const std::string& l) { return l == label; });
    };
    nlohmann::json stats;
    CHECK(all(labels_with(dir, run, " --threshold sep=0", &stats), "[SEP]"));
    CHECK(finding(stats, "[SEP]").rfind("[SEP] heads (sep_mass >= 0.00): L", 0) == 0);
    CHECK(finding(stats, "sink").empty());  // an encoder's sink heads are [CLS] heads
    CHECK(all(labels_with(dir, run, " --threshold sep=2 --threshold delimiter=0"), "delimiter"));
    CHECK(all(labels_with(dir, run, " --threshold sep=2 --threshold delimiter=2 --threshold sink=0", &stats), "[CLS]"));
    const std::string cls = finding(stats, "[CLS]");
    CHECK(cls.rfind("[CLS] heads (cls_mass >= 0.00): ", 0) == 0);
    CHECK(cls.find("an encoder's sink heads") != std::string::npos);
    const std::string none = " --threshold sep=2 --threshold delimiter=2 --threshold sink=2";
    CHECK(all(labels_with(dir, run, none + " --threshold broad=0", &stats), "broad"));
    CHECK(finding(stats, "broad").rfind("broad heads (normalized_entropy >= 0.00): ", 0) == 0);
    CHECK(finding(stats, "diffuse").empty());
    CHECK(all(labels_with(dir, run, none + " --threshold broad=2 --threshold local_distance=100"), "local"));
    // The default thresholds on the same text: every label one of the encoder's.
    for (const std::string& label : labels_with(dir,
                                                "model -q --model " + dir.path().string() +
                                                    " --text \"the cat sat, on the mat.\" --text-pair \"the mat.\"",
                                                "")) {
        CAPTURE(label);
        CHECK(label != "diffuse");
    }
}

TEST_CASE(
    "model --ablate on a BERT folder: the final hidden states' change and the masked-LM loss, as the float64 "
    "reference's") {
    struct Case {
        const char* mode;
        bool masked_lm;
    };
    for (const Case c : {Case{"zero", false}, Case{"zero", true}, Case{"mean", true}}) {
        const std::string mode = c.mode;
        CAPTURE(mode);
        CAPTURE(c.masked_lm);
        ScratchDir dir;
        make_bert(dir,
                  "--ablate 1:2" + std::string(mode == "mean" ? ":mean" : "") + (c.masked_lm ? " --mlm-head" : ""));
        const std::vector<int> ids = read_ids(dir / "ids.txt");
        std::string list;
        for (int id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
        const CommandResult r =
            run_attn_viz("model -q --model " + dir.path().string() + " --tokens " + list + " --ablate L1H2,L0H0" +
                         " --ablate-mode " + mode + " --out " + (dir / "out"));
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const Tensor clean = read_npy(dir / "expected_hidden.npy"),
                     ablated = read_npy(dir / "expected_ablated_hidden.npy");
        const int64_t T = clean.dim(0), D = clean.dim(1);
        double cosine = 0, difference = 0, norm = 0;
        for (int64_t t = 0; t < T; ++t) {
            double dot = 0, hh = 0, gg = 0;
            for (int64_t d = 0; d < D; ++d) {
                const double h = clean.data[size_t(t * D + d)], g = ablated.data[size_t(t * D + d)];
                dot += h * g, hh += h * h, gg += g * g, difference += (g - h) * (g - h);
            }
            norm += hh;
            cosine += 1 - dot / std::sqrt(hh * gg);
        }
        const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
        const nlohmann::json& ablation = stats["ablation"];
        CHECK(ablation["mode"] == mode);
        CHECK(ablation["measured_on"] == "final_hidden_states");
        CHECK(!ablation.contains("clean_loss"));
        REQUIRE(ablation["heads"].size() == 2);
        const nlohmann::json* head = nullptr;
        for (const auto& h : ablation["heads"])
            if (h["layer"] == 1 && h["head"] == 2) head = &h;
        REQUIRE(head);
        CHECK((*head)["relative_l2"].get<double>() == doctest::Approx(std::sqrt(difference / norm)).epsilon(1e-4));
        CHECK((*head)["cosine_distance"].get<double>() == doctest::Approx(cosine / double(T)).epsilon(1e-3));
        CHECK((*head)["relative_l2"].get<double>() > 1e-3);
        CHECK(ablation["heads"][0]["cosine_distance"] >= ablation["heads"][1]["cosine_distance"]);
        CHECK(ablation["findings"][0].get<std::string>().find("changes the final hidden states most") !=
              std::string::npos);
        CHECK(fs::exists(dir / "out/ablation_cosine_distance.png"));
        CHECK(fs::exists(dir / "out/ablation_relative_l2.png"));
        const std::string csv = read_text(dir / "out/ablation.csv");
        CHECK(fs::exists(dir / "out/ablation_delta_mlm_loss.png") == c.masked_lm);
        if (!c.masked_lm) {
            CHECK(csv.rfind("rank,index,layer,head,cosine_distance,relative_l2\n", 0) == 0);
            CHECK(!ablation.contains("clean_mlm_loss"));
            CHECK(ablation["findings"][1].get<std::string>().find("no masked-LM head") != std::string::npos);
            continue;
        }
        CHECK(csv.rfind("rank,index,layer,head,cosine_distance,relative_l2,delta_mlm_loss,mlm_loss\n", 0) == 0);
        const double clean_loss = read_npy(dir / "expected_mlm_loss.npy").data.at(0),
                     ablated_loss = read_npy(dir / "expected_ablated_mlm_loss.npy").data.at(0);
        CHECK(ablation["clean_mlm_loss"].get<double>() == doctest::Approx(clean_loss).epsilon(1e-5));
        CHECK((*head)["mlm_loss"].get<double>() == doctest::Approx(ablated_loss).epsilon(1e-5));
        CHECK((*head)["delta_mlm_loss"].get<double>() ==
              doctest::Approx(ablated_loss - clean_loss).epsilon(1e-3).scale(clean_loss));
        CHECK(ablation["findings"][2].get<std::string>().find("masked-LM loss") != std::string::npos);
    }
}

TEST_CASE("model --ablate on a BERT folder prints the hidden states' columns; over a corpus it is refused by name") {
    ScratchDir dir;
    make_bert(dir);
    const CommandResult printed =
        run_attn_viz("model --model " + dir.path().string() +
                     " --text \"the cat sat, on the mat.\" --ablate L0H0,L1H1 --html --out " + (dir / "one"));
    REQUIRE_MESSAGE(printed.exit_code == 0, printed.output);
    CHECK_MESSAGE(printed.output.find("ablation (zero, 2 heads): on the final hidden states; the heads that change "
                                      "them most:") != std::string::npos,
                  printed.output);
    CHECK(printed.output.find("cosine distance") != std::string::npos);
    CHECK(printed.output.find("relative L2") != std::string::npos);
    CHECK(printed.output.find("next-token loss") == std::string::npos);
    CHECK(read_text(dir / "one/report.html").find("<th>relative L2</th>") != std::string::npos);
    write_text(dir / "corpus.txt", "the cat.\na dog, a cat.\n");
    const CommandResult r = run_attn_viz("model -q --model " + dir.path().string() + " --inputs " +
                                         (dir / "corpus.txt") + " --ablate all --out " + (dir / "out"));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(
        r.output.find("--ablate over a corpus (--inputs) needs a model that predicts next tokens") != std::string::npos,
        r.output);
    CHECK(!fs::exists(dir / "out/stats.json"));
}

TEST_CASE("a layer run without a tokenizer has no token roles: the masses are null and the labels a decoder's") {
    ScratchDir dir;
    const CommandResult r = run_attn_viz("run -q --weights " + source_dir() + "/data/demo/weights.json --input " +
                                         source_dir() + "/data/demo/input.json --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["causal"] == false);
    for (const auto& head : stats["heads"])
        for (const char* name : {"cls", "sep", "last_sep", "punctuation"})
            CHECK(head["special_token_mass"][name].is_null());
    CHECK(stats["heads"][2]["label"] == "diffuse");
}

}  // TEST_SUITE("model")
