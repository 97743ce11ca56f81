// head_png (one head's picture as PNG bytes, what the Python package's Result.head_png returns)
// against write_report's head_NN.png files, under either scale and either map, with the shared
// range made once by head_png_range.
#include <random>

#include <doctest/doctest.h>

#include "attention/random_llama.hpp"
#include "error.hpp"
#include "report.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE("head_png draws every head as write_report does, --scale head and global, --map weights and norm") {
    OnednnBackend backend;
    const ModelShape& s = test_model_shapes[2];
    WholeModel model(backend, random_model(s, 16));
    std::uniform_int_distribution<int> token(0, static_cast<int>(s.vocab) - 1), length(1, 11);
    std::vector<int> ids(static_cast<size_t>(length(rng())));
    for (int& id : ids) id = token(rng());
    const ModelRun run = model.run(ids, {.value_norms = true});
    ReportInput in;
    in.backend = &backend;
    for (const LayerResult& r : run.layers) in.layers.push_back(&r);
    in.weights = model.attention_weights();
    for (size_t t = 0; t < ids.size(); ++t) in.query_tokens.push_back("t" + std::to_string(t));
    in.key_tokens = in.query_tokens;
    in.layer_folders = true;
    in.token_ids.assign(ids.begin(), ids.end());
    for (const ScaleMode scale : {ScaleMode::head, ScaleMode::global})
        for (const PictureMap map : {PictureMap::weights, PictureMap::norm}) {
            INFO("T " << ids.size() << " scale " << (scale == ScaleMode::head ? "head" : "global") << " map "
                      << (map == PictureMap::norm ? "norm" : "weights"));
            ScratchDir dir;
            ReportOptions options;
            options.scale = scale, options.map = map, options.threads = 1;
            Timings timings;
            OutputDir out(dir / "run", false);
            const ModelAnalysis analysis = write_report(out, in, options, timings);
            out.commit();
            const std::optional<ValueRange> range = head_png_range(in, options, analysis);
            CHECK(range.has_value() == (scale == ScaleMode::global));
            for (int64_t l = 0; l < s.layers; ++l)
                for (int64_t h = 0; h < s.heads; ++h) {
                    char file[64];
                    std::snprintf(file, sizeof file, "run/layer_%02lld/head_%02lld.png", static_cast<long long>(l),
                                  static_cast<long long>(h));
                    CAPTURE(file);
                    const std::vector<uint8_t> png = head_png(in, options, analysis, {l, h}, range);
                    CHECK(std::string(png.begin(), png.end()) == read_text(dir / file));
                }
            if (scale == ScaleMode::global)
                CHECK_THROWS_AS(head_png(in, options, analysis, {0, 0}, std::nullopt), Error);
        }
}

}  // TEST_SUITE("model")
