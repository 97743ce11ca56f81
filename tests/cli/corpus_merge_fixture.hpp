// Corpus runs split into shards and merged, checked against the single run over the whole corpus
// (decoder models in test_corpus_shards_cli.cpp, encoder-decoders in test_model_seq2seq_corpus_cli.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"

namespace test_support {

// Every number of two stats.json documents equal to 1e-9 relative (1e-15 absolute near zero),
// everything else exactly.
inline void check_same_statistics(const nlohmann::json& a, const nlohmann::json& b, const std::string& path = "") {
    if (a.is_number() && b.is_number()) {
        const double x = a.get<double>(), y = b.get<double>();
        CHECK_MESSAGE(std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)) + 1e-15,
                      path << ": " << x << " vs " << y);
    } else if (a.is_object() && b.is_object()) {
        CHECK_MESSAGE(a.size() == b.size(), path);
        for (const auto& [key, value] : a.items()) {
            REQUIRE_MESSAGE(b.contains(key), path << "." << key);
            check_same_statistics(value, b[key], path + "." + key);
        }
    } else if (a.is_array() && b.is_array()) {
        REQUIRE_MESSAGE(a.size() == b.size(), path);
        for (size_t i = 0; i < a.size(); ++i) check_same_statistics(a[i], b[i], path + "[" + std::to_string(i) + "]");
    } else {
        CHECK_MESSAGE(a == b, path << ": " << a.dump() << " vs " << b.dump());
    }
}

// DIR/stats.json without its provenance (the command line and inputs of a run and of a merge
// differ by design; the statistics must not).
inline nlohmann::json read_stats(const std::string& dir) {
    nlohmann::json stats = nlohmann::json::parse(read_text(dir + "/stats.json"));
    stats.erase("provenance");
    return stats;
}

// Runs `command` (ending in "--inputs C") over the whole corpus into DIR/single, and as `shards`
// shards (partials DIR/pI.json) whose partials merge into DIR/merged; the two reports must agree.
inline void check_shards_merge_to_single_run(const ScratchDir& dir, const std::string& command, int64_t shards,
                                             int64_t corpus_size) {
    CommandResult r = run_attn_viz(command + " --out " + (dir / "single"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    std::string partials;
    for (int64_t i = 0; i < shards; ++i) {
        const std::string shard = std::to_string(i) + "/" + std::to_string(shards),
                          name = std::string("p").append(std::to_string(i));
        const std::string partial = dir / (name + ".json");
        r = run_attn_viz(command + " --shard " + shard + " --out " + (dir / name) + " --save-partial " + partial);
        REQUIRE_MESSAGE(r.exit_code == 0, r.output);
        CHECK(r.output.find("(shard " + shard + "; the corpus holds " + std::to_string(corpus_size) + ")") !=
              std::string::npos);
        partials += " " + partial;
    }
    r = run_attn_viz("merge " + partials + " --out " + (dir / "merged"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK_MESSAGE(r.output.find("coverage: " + std::to_string(shards) + " of " + std::to_string(shards) +
                                " shards of ") != std::string::npos,
                  r.output);
    nlohmann::json single = read_stats(dir / "single"), merged = read_stats(dir / "merged");
    CHECK(single["num_sequences"] == corpus_size);
    // What each covers: the whole corpus as 1 shard, and as `shards` shards.
    CHECK(single["corpora"][0]["num_shards"] == 1);
    REQUIRE(merged["corpora"].size() == 1);
    CHECK(merged["corpora"][0]["num_shards"] == shards);
    CHECK(merged["corpora"][0]["shards"].size() == static_cast<size_t>(shards));
    CHECK(merged["corpora"][0]["num_sequences"] == corpus_size);
    CHECK(merged["corpora"][0]["fingerprint"] == single["corpora"][0]["fingerprint"]);
    single.erase("corpora"), merged.erase("corpora");
    check_same_statistics(single, merged);
    // The mean maps' pictures too: merge draws them as the single run does.
    for (const char* picture :
         {"offsets.png", "overview.png", "head_00.png", "layer_00/head_00.png", "layer_01/head_01.png"}) {
        const std::string a = dir / (std::string("single/") + picture), b = dir / (std::string("merged/") + picture);
        CHECK_MESSAGE(std::filesystem::exists(a) == std::filesystem::exists(b), picture);
        if (std::filesystem::exists(a) && std::filesystem::exists(b))
            CHECK_MESSAGE(read_text(a) == read_text(b), picture);
    }
}

}  // namespace test_support
