// The run directory's layout and the commands built on the library: pictures, HTML, SVG,
// batches, corpus mode with merge, and the planted-heads sample.
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>

#include "cli_fixtures.hpp"
#include "head_stats.hpp"
#include "npy.hpp"
#include "report_columns.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

std::string run_args(const ScratchDir& dir, const std::string& out) {
    return "run -q --weights " + (dir / "w.json") + " --input " + (dir / "x.json") + " --out " + (dir / out);
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("a run directory holds a PNG per head, the figures, stats.json, CSV tables, and on request SVG and HTML") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 6, true);
    CommandResult r =
        run_attn_viz(run_args(dir, "out") + " --html --svg 2 --colormap magma --log-scale --scale global");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* f : {"head_00.png", "head_01.png", "head_02.png", "head_02.svg", "overview.png", "correlation.png",
                          "js_distance.png", "entropy.png", "stats.json", "heads.csv", "pairs.csv", "report.html"})
        CHECK_MESSAGE(fs::is_regular_file(dir / ("out/" + std::string(f))), f);
    CHECK(!fs::exists(dir / "out/head_03.png"));
    const std::string csv = read_text(dir / "out/heads.csv");
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);  // header + 3 heads
    CHECK(run_attn_viz(run_args(dir, "bad") + " --svg 7").exit_code == 2);
    CHECK(run_attn_viz(run_args(dir, "bad") + " --window 5:1,0:2").exit_code == 2);
    CHECK(!fs::exists(dir / "bad"));
}

TEST_CASE(
    "report.html's tables: heads columns in a meaningful order, pairs naming their heads and whether they are "
    "redundant") {
    const auto order = report_column_order();
    const std::vector<std::string>& heads = order.at("heads");
    REQUIRE(heads.size() ==
            5 + head_stat_count);  // stack (encoder-decoders), layer, head, label, every statistic once, index
    CHECK(std::vector<std::string>(heads.begin(), heads.begin() + 4) ==
          std::vector<std::string>{"stack", "layer", "head", "label"});
    CHECK(heads.back() == "index");
    for (const HeadStatField& f : head_stat_fields())
        CHECK_MESSAGE(std::count(heads.begin(), heads.end(), f.name) == 1, f.name);
    const std::vector<std::string>& pairs = order.at("redundant_pairs");
    CHECK(std::vector<std::string>(pairs.begin(), pairs.begin() + 7) ==
          std::vector<std::string>{"a", "b", "redundant", "js_distance", "attend_alike", "same_layer", "both_sinks"});

    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 6, true);
    REQUIRE(run_attn_viz(run_args(dir, "out") + " --html").exit_code == 0);
    const std::string html = read_text(dir / "out/report.html");
    CHECK(html.find("\"column_order\":" + nlohmann::json(order).dump()) != std::string::npos);
    CHECK(html.find("\"redundant\":") != std::string::npos);
    CHECK(html.find("attend_alike = js_distance at most thresholds.redundancy_js (0.2); redundant = they attend "
                    "alike and write alike, output_cosine (computed within a layer) at least "
                    "thresholds.redundancy_output_cosine (0.9)") != std::string::npos);
}

TEST_CASE("several --input files are a batch: one folder and one dump per sequence") {
    ScratchDir dir;
    write_layer_fixture(dir, 8, 2, 5);
    fs::copy_file(dir / "x.json", dir / "y.json");
    CommandResult r =
        run_attn_viz(run_args(dir, "out") + " --input " + (dir / "y.json") + " --dump-attention " + (dir / "a.npy"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(fs::exists(dir / "out/seq_00/head_01.png"));
    CHECK(fs::exists(dir / "out/seq_01/stats.json"));
    // The same sequence twice gives the same maps.
    CHECK(max_abs_diff(read_npy(dir / "a.seq_00.npy"), read_npy(dir / "a.seq_01.npy")) == 0.0);
}

TEST_CASE("corpus mode: a JSONL run equals the merge of its two halves' partial results") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 4);
    std::string all, first, second;
    for (int n = 0; n < 12; ++n) {
        const std::string line = random_sequence_line(2 + static_cast<int64_t>(rng()() % 9), 12) + "\n";
        all += line;
        (n < 5 ? first : second) += line;
    }
    write_text(dir / "all.jsonl", all);
    write_text(dir / "a.jsonl", "\n" + first);  // a blank line is skipped
    write_text(dir / "b.jsonl", second);
    const std::string w = " --weights " + (dir / "w.json");
    REQUIRE(run_attn_viz("run -q" + w + " --inputs " + (dir / "all.jsonl") + " --out " + (dir / "all")).exit_code == 0);
    REQUIRE(run_attn_viz("run -q" + w + " --inputs " + (dir / "a.jsonl") + " --out " + (dir / "ra") +
                         " --save-partial " + (dir / "pa.json"))
                .exit_code == 0);
    REQUIRE(run_attn_viz("run -q" + w + " --inputs " + (dir / "b.jsonl") + " --out " + (dir / "rb") +
                         " --save-partial " + (dir / "pb.json"))
                .exit_code == 0);
    REQUIRE(run_attn_viz("merge -q " + (dir / "pa.json") + " " + (dir / "pb.json") + " --out " + (dir / "merged"))
                .exit_code == 0);
    const nlohmann::json one = nlohmann::json::parse(read_text(dir / "all/stats.json"));
    const nlohmann::json merged = nlohmann::json::parse(read_text(dir / "merged/stats.json"));
    CHECK(one["num_sequences"] == 12);
    REQUIRE(one["heads"].size() == merged["heads"].size());
    for (size_t h = 0; h < one["heads"].size(); ++h)
        for (const auto& [key, value] : one["heads"][h].items())
            if (value.is_number_float())
                CHECK(std::fabs(value.get<double>() - merged["heads"][h][key].get<double>()) <=
                      1e-9 * std::fabs(value.get<double>()) + 1e-300);
    CHECK(fs::exists(dir / "merged/correlation.png"));

    // The same partial twice and another layer of the same shape are refused; corpora that share
    // sequences (a.jsonl is part of all.jsonl) are different corpora, each sequence counted at its own position.
    REQUIRE(run_attn_viz("run -q --force" + w + " --inputs " + (dir / "all.jsonl") + " --out " + (dir / "all") +
                         " --save-partial " + (dir / "pall.json"))
                .exit_code == 0);
    write_layer_fixture(dir, 12, 3, 4);  // new random weights, same shape
    REQUIRE(run_attn_viz("run -q --weights " + (dir / "w.json") + " --inputs " + (dir / "b.jsonl") + " --out " +
                         (dir / "rc") + " --save-partial " + (dir / "pc.json"))
                .exit_code == 0);
    // Each merged after pa.json.
    // (The same partial twice is caught first as its shard 0/1 of a.jsonl given twice.)
    const std::pair<std::string, std::string> refusals[] = {
        {"pa.json", "shard 0/1 of " + (dir / "a.jsonl") + " is already merged"}, {"pc.json", "other weights"}};
    for (const auto& [second, why] : refusals) {
        const CommandResult r =
            run_attn_viz("merge --out " + (dir / "refused") + " " + (dir / "pa.json") + " " + (dir / second));
        INFO(r.output);
        CHECK(r.exit_code == 3);
        CHECK(r.output.find(why) != std::string::npos);
        CHECK(!fs::exists(dir / "refused"));
    }

    const CommandResult union_run =
        run_attn_viz("merge -q --out " + (dir / "union") + " " + (dir / "pa.json") + " " + (dir / "pall.json"));
    CHECK_MESSAGE(union_run.exit_code == 0, union_run.output);
    CHECK(nlohmann::json::parse(read_text(dir / "union/stats.json"))["num_sequences"] == 17);

    write_text(dir / "broken.jsonl", first + "{\"embeddings\": [[1, 2]]}\n");
    CommandResult bad =
        run_attn_viz("run -q" + w + " --inputs " + (dir / "broken.jsonl") + " --out " + (dir / "broken"));
    CHECK(bad.exit_code == 3);
    CHECK(bad.output.find("broken.jsonl:6") != std::string::npos);
    CHECK(!fs::exists(dir / "broken"));
}

TEST_CASE("the demo sample's planted heads are labelled as planted") {
    ScratchDir dir;
    CommandResult r = run_attn_viz("run -q --weights " + source_dir() + "/data/demo/weights.json --input " +
                                   source_dir() + "/data/demo/input.json --out " + (dir / "out"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    const char* planted[] = {"previous-token", "sink", "diffuse", "self", "next-token", "next-token"};
    REQUIRE(stats["heads"].size() == 6);
    for (size_t h = 0; h < 6; ++h) CHECK(stats["heads"][h]["label"] == planted[h]);
    CHECK(stats["correlation"][4][5].get<double>() == doctest::Approx(1.0).epsilon(1e-6));
    REQUIRE(stats["redundant_groups"].size() == 1);
    CHECK(stats["redundant_groups"][0].size() == 2);
    CHECK(stats["redundant_groups"][0][0]["head"] == 4);
    CHECK(stats["redundant_groups"][0][1]["head"] == 5);
}

TEST_CASE(
    "a run writes the dependence matrices and, with --sparse-error, the sparse-attention table; the tolerance is a "
    "threshold") {
    ScratchDir dir;
    write_layer_fixture(dir, 12, 3, 9, true);
    CommandResult r = run_attn_viz(run_args(dir, "plain"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(fs::is_regular_file(dir / "plain/choice_mi.png"));
    CHECK(!fs::exists(dir / "plain/sparse.csv"));  // the sparse-attention error is on request
    CHECK(!nlohmann::json::parse(read_text(dir / "plain/stats.json")).contains("sparse_attention"));
    r = run_attn_viz(run_args(dir, "out") + " --sparse-error --threshold sparse_tolerance=0.2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    for (const char* f : {"output_mi.png", "output_cka.png", "choice_mi.png", "keys_needed.png", "sparse.csv"})
        CHECK_MESSAGE(fs::is_regular_file(dir / ("out/" + std::string(f))), f);
    const nlohmann::json stats = nlohmann::json::parse(read_text(dir / "out/stats.json"));
    CHECK(stats["thresholds"]["sparse_tolerance"] == 0.2);
    const nlohmann::json& sparse = stats["sparse_attention"];
    CHECK(sparse["tolerance"] == 0.2);
    CHECK(sparse["sizes"] == nlohmann::json({1, 2, 4, 8, 9}));
    REQUIRE(sparse["heads"].size() == 3);
    for (size_t h = 0; h < 3; ++h) {
        const nlohmann::json& head = stats["heads"][h];
        CHECK(sparse["heads"][h]["top_k_error"].size() == 5);
        CHECK(sparse["heads"][h]["top_k_error"][4] == 0.0);  // every key kept
        CHECK(head["top1_error"] == sparse["heads"][h]["top_k_error"][0]);
        CHECK(head["top1_bound_holds"] == 1.0);
        CHECK(stats["output_cka"][h][h].get<double>() == doctest::Approx(1.0));
        // The diagonal (the head's corrected entropy) bounds its row; equal up to rounding when two heads'
        // choices determine each other (seed 20914382968387 gave 0.585262 on both sides, an ulp apart).
        CHECK(stats["choice_mi"][h][h].get<double>() >= stats["choice_mi"][h][(h + 1) % 3].get<double>() - 1e-12);
    }
    const std::string csv = read_text(dir / "out/sparse.csv");
    CHECK(csv.substr(0, csv.find('\n')) == "index,layer,head,pattern,size,mass_dropped,relative_error");
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * 2 * 5);
    CHECK(run_attn_viz(run_args(dir, "bad") + " --threshold sparse_tolerance=x").exit_code == 2);
}

}  // TEST_SUITE("cli")
