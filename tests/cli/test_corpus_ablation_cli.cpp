// model --inputs --ablate: head ablation over a corpus, each measure's mean and std over the
// sequences checked against the single runs of each sequence, and its shards merged.
#include <cmath>
#include <filesystem>
#include <map>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "corpus_merge_fixture.hpp"
#include "reliability_fixtures.hpp"
#include "support.hpp"

using namespace test_support;
namespace fs = std::filesystem;

TEST_SUITE("cli") {

TEST_CASE("model --inputs --ablate: each head's mean and std are the single runs'; shards merge to the single run") {
    ScratchDir dir;
    const std::string model = write_small_llama2c_model(dir);
    const std::vector<std::string> sequences = {"1,259,260,259,261", "1,262,259", "1,260,261,262,262,259,260", "1"};
    std::string corpus;
    for (const std::string& ids : sequences) corpus += "{\"tokens\": [" + ids + "]}\n";
    write_text(dir / "c.jsonl", corpus);
    const std::string ablate = " --ablate L0H1,L1H0,L1H1 --ablate-mode mean";

    CommandResult r = run_attn_viz(model + " --inputs " + (dir / "c.jsonl") + ablate + " --out " + (dir / "corpus"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK_MESSAGE(r.output.find("over 4 sequences, ablation (mean): removing ") != std::string::npos, r.output);
    CHECK(r.output.find("(means over 4 sequences)") != std::string::npos);
    const nlohmann::json ablation = read_stats(dir / "corpus")["ablation"];
    CHECK(ablation["mode"] == "mean");
    CHECK(ablation["sequences"] == 4);
    REQUIRE(ablation["heads"].size() == 3);
    const std::string csv = read_text(dir / "corpus/ablation.csv");
    CHECK_MESSAGE(
        csv.find("loss_mean,loss_std,delta_loss_mean,delta_loss_std,kl_mean,kl_std,sequences\n") != std::string::npos,
        csv.substr(0, 200));
    CHECK(fs::exists(dir / "corpus/ablation_delta_loss.png"));
    CHECK(fs::exists(dir / "corpus/ablation_kl.png"));

    // The single runs: per head, its measures over the sequences (the one-token sequence has no loss).
    std::map<std::pair<int64_t, int64_t>, std::map<std::string, std::vector<double>>> single;
    std::vector<double> clean;
    for (size_t s = 0; s < sequences.size(); ++s) {
        const std::string out = dir / ("s" + std::to_string(s));
        r = run_attn_viz(model + " -q --tokens " + sequences[s] + ablate + " --out " + out);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        const nlohmann::json one = read_stats(out)["ablation"];
        clean.push_back(one["clean_loss"].is_null() ? NAN : one["clean_loss"].get<double>());
        for (const nlohmann::json& h : one["heads"])
            for (const char* measure : {"loss", "delta_loss", "kl"})
                single[{h["layer"], h["head"]}][measure].push_back(h[measure].is_null() ? NAN
                                                                                        : h[measure].get<double>());
    }
    const auto moments = [](const std::vector<double>& values) {
        double sum = 0, n = 0, squares = 0;
        for (double v : values)
            if (!std::isnan(v)) sum += v, ++n;
        for (double v : values)
            if (!std::isnan(v)) squares += (v - sum / n) * (v - sum / n);
        return std::pair{sum / n, std::sqrt(squares / n)};
    };
    for (const nlohmann::json& h : ablation["heads"]) {
        const auto& measures = single[{h["layer"], h["head"]}];
        for (const char* measure : {"loss", "delta_loss", "kl"}) {
            const auto [mean, std] = moments(measures.at(measure));
            CAPTURE(measure);
            CHECK(h[std::string(measure) + "_mean"].get<double>() == doctest::Approx(mean).epsilon(1e-6));
            CHECK(h[std::string(measure) + "_std"].get<double>() == doctest::Approx(std).epsilon(1e-5));
        }
        CHECK(h["sequences"] == 4);
    }
    CHECK(ablation["clean_loss"]["mean"].get<double>() == doctest::Approx(moments(clean).first).epsilon(1e-6));

    check_shards_merge_to_single_run(dir, model + " --inputs " + (dir / "c.jsonl") + ablate, 2, 4);
    // A partial without the ablation does not merge with one that has it.
    r = run_attn_viz(model + " -q --inputs " + (dir / "c.jsonl") + " --shard 0/2 --out " + (dir / "plain") +
                     " --save-partial " + (dir / "plain.json"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    r = run_attn_viz("merge -q " + (dir / "p1.json") + " " + (dir / "plain.json") + " --out " + (dir / "mixed"));
    CHECK(r.exit_code == 3);
    CHECK_MESSAGE(r.output.find("partials with and without head ablation cannot be merged") != std::string::npos,
                  r.output);
}

}  // TEST_SUITE("cli")
