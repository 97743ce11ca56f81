// model --inputs on a streamed (GGUF) model runs layer-major: --timings says how (batches, the
// budget), and stats.json's heads and matrices are the sequence-major run's (the one
// --logit-attribution forces), shards merged included.
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "synthetic_gguf.hpp"

using namespace test_support;

namespace {

// stats.json's per-head numbers and pair matrices (what does not depend on the analyses asked).
nlohmann::json head_statistics(const std::string& stats_path) {
    nlohmann::json stats = nlohmann::json::parse(read_text(stats_path));
    for (const char* other : {"provenance", "logit_attribution", "findings"}) stats.erase(other);
    return stats;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("model --inputs on a GGUF model runs layer-major, with the sequence-major run's stats.json") {
    ScratchDir dir;
    const std::string model = dir / "m.gguf";
    make_synthetic_gguf(model, "Q8_0", {64, 2, 4, 2, 96, 300}, 11);
    write_text(dir / "c.jsonl",
               "{\"tokens\": [1, 260, 7, 9]}\n{\"tokens\": [1]}\n{\"text\": \"abc de\"}\n"
               "{\"tokens\": [1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]}\n{\"tokens\": [2, 3]}\n");
    const std::string run = "model -q --model " + model + " --inputs " + (dir / "c.jsonl") + " --stats-only";

    // Layer-major by default: --timings reports the batches against the budget.
    const CommandResult by_layer = run_attn_viz(run + " --timings --max-memory 4G --out " + (dir / "layer"));
    REQUIRE_MESSAGE(by_layer.exit_code == 0, by_layer.output);
    CHECK(by_layer.output.find("layer-major       1 batch of at most 5 sequences") != std::string::npos);
    CHECK(by_layer.output.find("of 4096.0 MB budgeted") != std::string::npos);
    CHECK(by_layer.output.find("block loads") != std::string::npos);

    // --logit-attribution needs whole runs: sequence by sequence, and the same statistics.
    const CommandResult by_sequence = run_attn_viz(run + " --timings --logit-attribution --out " + (dir / "sequence"));
    REQUIRE_MESSAGE(by_sequence.exit_code == 0, by_sequence.output);
    CHECK(by_sequence.output.find("layer-major") == std::string::npos);
    const nlohmann::json expected = head_statistics(dir / "sequence/stats.json");
    CHECK(head_statistics(dir / "layer/stats.json") == expected);

    // Shards of two merged, layer-major or (with --logit-attribution) not: the same statistics.
    for (const std::string& way : {std::string("layer"), std::string("sequence")}) {
        for (const std::string shard : {"0", "1"}) {
            const CommandResult part = run_attn_viz(
                run + (way == "sequence" ? " --logit-attribution" : "") + " --shard " + shard + "/2 --save-partial " +
                (dir / (way + shard + ".json")) + " --out " + (dir / (way + shard)));
            REQUIRE_MESSAGE(part.exit_code == 0, part.output);
        }
        const CommandResult merged = run_attn_viz("merge -q " + (dir / (way + "0.json")) + " " +
                                                  (dir / (way + "1.json")) + " --out " + (dir / (way + "_merged")));
        REQUIRE_MESSAGE(merged.exit_code == 0, merged.output);
    }
    const nlohmann::json merged = head_statistics(dir / "layer_merged/stats.json");
    CHECK(merged["num_sequences"] == 5);
    CHECK(merged == head_statistics(dir / "sequence_merged/stats.json"));
}

}  // TEST_SUITE("model")
