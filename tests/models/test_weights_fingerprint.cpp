// Whole-model fingerprints (weights_fingerprint.hpp): the same numbers give the same fingerprint
// whichever files they come from, any change of a tensor value or of the configuration gives
// another, and stories260K keeps the values corpus partials recorded before every family shared
// one weights schema.
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "block_sources.hpp"
#include "hf_reference_folder.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "model_files.hpp"
#include "support.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("models") {

TEST_CASE(
    "a transformer's fingerprint: the same from one file or two shards, another when any tensor or setting changes") {
    for (const std::string type : {"gpt2", "gpt_neox", "bert"}) {
        CAPTURE(type);
        const std::string shape = "--model-type " + type +
                                  " --d-model 16 --heads 2 --layers 2 --ffn 10 --vocab 20 --tokens 2 --seed " +
                                  std::to_string(rng()() % 100000);
        ScratchDir one, two;
        make_reference_folder(one, "reference_hf_transformer.py", shape);
        make_reference_folder(two, "reference_hf_transformer.py", shape + " --shards 2");
        const ModelWeights w = read_hf_transformer_folder(one.path().string());
        const uint64_t fingerprint = model_fingerprint(w);
        CHECK(model_fingerprint(read_hf_transformer_folder(two.path().string())) == fingerprint);

        const std::vector<std::pair<std::string, std::function<void(ModelWeights&)>>> changes = {
            {"architecture", [](ModelWeights& v) { v.config.architecture += "x"; }},
            {"norm_epsilon", [](ModelWeights& v) { v.config.norm_epsilon *= 2; }},
            {"residual layout",
             [](ModelWeights& v) {
                 v.config.residual = v.config.residual == ResidualLayout::parallel ? ResidualLayout::pre_norm
                                                                                   : ResidualLayout::parallel;
             }},
            {"attention w_q", [](ModelWeights& v) { edited_blocks(v)[1].attention.w_q.data[5] += 1e-3f; }},
            {"feed_forward_norm bias",
             [](ModelWeights& v) { edited_blocks(v)[0].feed_forward_norm.bias.data[1] += 1e-3f; }},
            {"w_in", [](ModelWeights& v) { edited_blocks(v)[1].w_in.data[7] += 1e-3f; }},
            {"b_out", [](ModelWeights& v) { edited_blocks(v)[0].b_out.data[0] += 1e-3f; }},
            {"token_embedding", [](ModelWeights& v) { v.token_embedding.data[3] += 1e-3f; }},
        };
        for (const auto& [what, change] : changes) {
            CAPTURE(what);
            ModelWeights v = w;
            change(v);
            CHECK(model_fingerprint(v) != fingerprint);
        }
    }
}

TEST_CASE("stories260K's fingerprints in three formats are the ones saved corpus partials record") {
    const std::string bin = stories260k_dir();
    const std::string gguf = shared_model_dir("stories260K-gguf", {"stories260K.gguf", "stories260K-Q8_0.gguf"});
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (bin.empty() || gguf.empty() || hf.empty()) return;
    CHECK(model_fingerprint(read_model_weights(open_model_files(bin + "/stories260K.bin"))) == 0x3a1dfbad7fe953bcull);
    CHECK(model_fingerprint(read_model_weights(open_model_files(gguf + "/stories260K.gguf"))) ==
          0xb752431d6d21135cull);  // blocks streamed
    CHECK(model_fingerprint(read_model_weights(open_model_files(gguf + "/stories260K-Q8_0.gguf"))) ==
          0x901fdc52ab5236d9ull);
    CHECK(model_fingerprint(read_model_weights(open_model_files(hf))) == 0x879e3020c241b457ull);
}

}  // TEST_SUITE("models")
