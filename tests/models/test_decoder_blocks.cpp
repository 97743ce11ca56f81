// decoder_blocks.hpp's block sources over a Hugging Face folder: the blocks streamed from the
// mapped safetensors (StreamedDecoderBlocks) equal the blocks read whole (HeldBlocks), on a small
// random decoder (one file and two shards) and on stories260K's folder; a streamed source holds
// no block; a truncated shard is refused naming it.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf_builder.hpp"
#include "gguf_llama.hpp"
#include "hf_folder_fixture.hpp"
#include "model_files.hpp"
#include "support.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

ModelWeights read_folder(const std::string& folder, BlockLoading loading) {
    ModelFiles files = open_model_files(folder);
    files.blocks = loading;
    return read_model_weights(files);
}

// Every tensor of two blocks, bit for bit.
void check_same_block(const BlockWeights& a, const BlockWeights& b) {
    for (const auto& [x, y] : {std::pair{&a.attention.w_q, &b.attention.w_q},
                               {&a.attention.w_k, &b.attention.w_k},
                               {&a.attention.w_v, &b.attention.w_v},
                               {&a.attention.w_o, &b.attention.w_o},
                               {&a.attention_norm.weight, &b.attention_norm.weight},
                               {&a.feed_forward_norm.weight, &b.feed_forward_norm.weight},
                               {&a.w_in, &b.w_in},
                               {&a.w_up, &b.w_up},
                               {&a.w_out, &b.w_out}}) {
        CHECK(x->shape == y->shape);
        CHECK(x->data == y->data);
    }
    CHECK(a.attention.rope == b.attention.rope);
    CHECK(a.attention.num_kv_heads == b.attention.num_kv_heads);
}

// `folder` read whole and streamed: the same blocks and outside tensors, the same fingerprint;
// the streamed source holds no block, the held one every block.
void check_streamed_as_held(const std::string& folder) {
    const ModelWeights held = read_folder(folder, BlockLoading::held);
    const ModelWeights streamed = read_folder(folder, BlockLoading::streamed);
    CHECK_FALSE(held.blocks->streams());
    CHECK(streamed.blocks->streams());
    REQUIRE(streamed.blocks->n_layers() == held.config.n_layers);
    REQUIRE(held.blocks->n_layers() == held.config.n_layers);
    CHECK(streamed.token_embedding.data == held.token_embedding.data);
    CHECK(streamed.classifier_matrix().data == held.classifier_matrix().data);
    BlockWeights refilled;
    for (int64_t l = held.config.n_layers - 1; l >= 0; --l) {  // out of order, into one BlockWeights
        CAPTURE(l);
        CHECK(streamed.blocks->held(l) == nullptr);
        REQUIRE(held.blocks->held(l) != nullptr);
        check_same_block(streamed.blocks->load(l), *held.blocks->held(l));
        streamed.blocks->load_into(l, refilled);
        check_same_block(refilled, *held.blocks->held(l));
    }
    CHECK(model_fingerprint(streamed) == model_fingerprint(held));
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("a folder's decoder blocks streamed from its mapped safetensors are the blocks read whole") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    for (const fs::path& folder : {folders.single, folders.sharded}) {
        CAPTURE(folder);
        check_streamed_as_held(folder.string());
    }
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (hf.empty()) return;
    check_streamed_as_held(hf);
}

TEST_CASE("a truncated shard of a streamed folder is refused naming the file, before any block is read") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    const fs::path shard = folders.sharded / "model-00002-of-00002.safetensors";
    fs::resize_file(shard, fs::file_size(shard) - 7);
    for (BlockLoading loading : {BlockLoading::streamed, BlockLoading::held}) {
        CAPTURE(static_cast<int>(loading));
        expect_error(ErrorKind::bad_input, [&] { read_folder(folders.sharded.string(), loading); },
                     {shard.string(), "past the data buffer", "file truncated?"});
    }
}

}  // TEST_SUITE("models")
