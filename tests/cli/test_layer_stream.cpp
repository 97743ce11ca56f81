// A model's report written layer by layer (LayerStream, `model --stream-layers`) against the
// whole-run report (write_report) on small random Llama models: every head's statistics, every
// per-head picture (same color range: --scale head), the overview and the attention dump are the
// same, pair matrices are the whole run's within each layer and null across layers; the dump grows
// by one layer's maps per layer while the run goes on, and each layer's result is released before
// the next block runs.
#include <cmath>
#include <filesystem>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attention/random_llama.hpp"
#include "error.hpp"
#include "layer_stream.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

std::vector<int> random_tokens(int64_t T, int64_t vocab) {
    std::uniform_int_distribution<int> token(0, static_cast<int>(vocab) - 1);
    std::vector<int> tokens(static_cast<size_t>(T));
    for (int& id : tokens) id = token(rng());
    return tokens;
}

// Every file under `dir` (relative names), without the run's manifest.
std::vector<std::string> run_files(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
        if (entry.is_regular_file() && entry.path().filename() != ".attn-viz-run")
            files.push_back(fs::relative(entry.path(), dir).string());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("a report streamed layer by layer has the whole run's head statistics, pictures, overview and dump") {
    OnednnBackend backend;
    for (const ModelShape& s : {test_model_shapes[0], test_model_shapes[2]}) {
        for (const ScaleMode scale : {ScaleMode::head, ScaleMode::global}) {
            INFO("layers " << s.layers << " heads " << s.heads << " scale "
                           << (scale == ScaleMode::head ? "head" : "global"));
            const int64_t T = 13;
            WholeModel model(backend, random_model(s, 16));
            const std::vector<int> ids = random_tokens(T, s.vocab);
            const std::vector<int64_t> token_ids(ids.begin(), ids.end());
            std::vector<std::string> labels;
            for (int64_t t = 0; t < T; ++t) labels.push_back(std::to_string(t));
            ScratchDir dir;
            ReportOptions options;
            options.scale = scale;
            options.threads = 1;
            Timings timings;

            // The whole run's report.
            const ModelRun whole = model.run(ids);
            {
                OutputDir out(dir / "whole", false);
                ReportInput in;
                in.backend = &backend;
                for (const LayerResult& r : whole.layers) in.layers.push_back(&r);
                in.weights = model.attention_weights();
                in.query_tokens = in.key_tokens = labels;
                in.layer_folders = true;
                in.token_ids = token_ids;
                options.dump_attention = dir / "whole.npy";
                write_report(out, in, options, timings);
                out.commit();
            }

            // The same, layer by layer; each result dies with its block's pass.
            {
                OutputDir out(dir / "streamed", false);
                options.dump_attention = dir / "streamed.npy";
                LayerStreamInput input{s.layers, s.heads, labels, token_ids, nlohmann::json::object()};
                input.backend = &backend;
                LayerStream stream(out, std::move(input), options, timings);
                const std::string staged_dump = out.external_file(options.dump_attention);
                const uint64_t map_bytes = static_cast<uint64_t>(s.heads * T * T) * sizeof(float);
                uint64_t header = 0;
                model.run_blocks(ids, {}, [&](size_t l, LayerResult& result, Tensor&, const LayerWeights& w) {
                    const uint64_t before = fs::file_size(staged_dump);
                    if (l == 0) header = before;
                    stream.add_layer(static_cast<int64_t>(l), result, w);
                    CHECK(fs::file_size(staged_dump) == header + (l + 1) * map_bytes);
                });
                CHECK_THROWS_AS(stream.add_layer(0, whole.layers[0], *model.attention_weights()[0]),
                                Error);  // out of order
                PictureNotes notes;
                const ModelAnalysis analysis = stream.finish(notes);
                CHECK(notes.maps == s.layers * s.heads);
                CHECK(analysis.num_layers == s.layers);
                out.commit();
            }

            CHECK(read_text(dir / "streamed.npy") == read_text(dir / "whole.npy"));
            const std::vector<std::string> files = run_files(dir / "whole");
            CHECK(run_files(dir / "streamed") == files);
            for (const std::string& file : files) {
                const bool head_picture = file.rfind("layer_", 0) == 0;
                if (!head_picture && file != "overview.png") continue;
                CAPTURE(file);
                // --scale global: each layer's pictures take that layer's range in a streamed report.
                if (head_picture && scale == ScaleMode::global) continue;
                CHECK(read_text(dir / ("streamed/" + file)) == read_text(dir / ("whole/" + file)));
            }
            const nlohmann::json a = nlohmann::json::parse(read_text(dir / "whole/stats.json"));
            const nlohmann::json b = nlohmann::json::parse(read_text(dir / "streamed/stats.json"));
            CHECK(b["heads"] == a["heads"]);
            CHECK(b["pair_scope"] == "layer");
            CHECK(!a.contains("pair_scope"));
            for (const char* metric : {"correlation", "cosine", "js_distance", "output_cosine", "weight_qk_cosine",
                                       "weight_ov_cosine", "output_mi", "output_cka", "choice_mi"}) {
                CAPTURE(metric);
                const int64_t N = s.layers * s.heads;
                for (int64_t i = 0; i < N; ++i)
                    for (int64_t j = 0; j < N; ++j) {
                        const nlohmann::json& streamed = b[metric][static_cast<size_t>(i)][static_cast<size_t>(j)];
                        if (i / s.heads == j / s.heads)
                            CHECK(streamed == a[metric][static_cast<size_t>(i)][static_cast<size_t>(j)]);
                        else
                            CHECK(streamed.is_null());
                    }
            }
        }
    }
}

TEST_CASE("join_layer_analyses refuses analyses that are not one layer of the same heads") {
    ModelAnalysis one;
    one.num_layers = 1, one.num_heads = 2;
    for (HeadMatrix& m : one.matrices) m = HeadMatrix(2, 0.5);
    one.heads.resize(2);
    ModelAnalysis other = one;
    other.num_heads = 3;
    ModelAnalysis no_matrices = one;
    no_matrices.matrices[4] = HeadMatrix();
    CHECK_THROWS_AS(join_layer_analyses({}, LabelThresholds{}), Error);
    CHECK_THROWS_AS(join_layer_analyses({one, other}, LabelThresholds{}), Error);
    CHECK_THROWS_AS(join_layer_analyses({one, no_matrices}, LabelThresholds{}), Error);
    const ModelAnalysis joined = join_layer_analyses({one, one}, LabelThresholds{});
    CHECK(joined.head_ids.size() == 4);
    CHECK(joined.matrix(PairMetric::correlation).at(3, 2) == 0.5);
    CHECK(std::isnan(joined.matrix(PairMetric::correlation).at(1, 2)));
}

}  // TEST_SUITE("model")
