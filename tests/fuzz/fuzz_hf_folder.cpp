// libFuzzer target: Hugging Face model folders (read_hf_llama_folder, read_hf_transformer_folder)
// whose config.json and model.safetensors.index.json are untrusted, beside fixed weights written
// at start-up (tests/hf_folder_fixture.hpp): the input is config.json and, after a NUL byte, the
// index, which sends it to the sharded folder. Whatever loads must agree with its config.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hf_config.hpp"
#include "hf_folder_fixture.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_transformer_checkpoint.hpp"

namespace fs = std::filesystem;

namespace {

// <scratch>/attn-viz-fuzz-<pid>-folder/{single,sharded}/ with the weights; removed at exit.
const test_support::HfFixtureFolders& folders() {
    static const test_support::HfFixtureFolders made = [] {
        static const fs::path root = fs::path(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") /
                                     ("attn-viz-fuzz-" + std::to_string(getpid()) + "-folder");
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(root, ec);
        });
        return test_support::write_hf_fixture_folders(root);
    }();
    return made;
}

// A layer the loader accepted must pass the attention layer's own checks.
void expect_valid(const attn_viz::LayerWeights& layer) {
    try {
        attn_viz::validate_layer(layer, "fuzz");
    } catch (const attn_viz::Error&) {
        __builtin_trap();
    }
}

void read_folder(const fs::path& folder) {
    const attn_viz::HfConfig config = attn_viz::read_hf_config((folder / "config.json").string());
    const auto& llama_types = attn_viz::hf_llama_model_types();
    if (std::find(llama_types.begin(), llama_types.end(), config.model_type) == llama_types.end()) {
        const attn_viz::ModelWeights w = attn_viz::read_hf_transformer_folder(folder.string(), attn_viz_fuzz::limits());
        if (w.blocks->n_layers() != config.num_layers.value_or(-1)) __builtin_trap();
        for (int64_t l = 0; l < w.blocks->n_layers(); ++l) expect_valid(w.blocks->held(l)->attention);
        return;
    }
    const attn_viz::ModelWeights w = attn_viz::read_hf_llama_folder(folder.string(), attn_viz_fuzz::limits());
    const attn_viz::ModelConfig& c = w.config;
    if (w.token_embedding.shape != std::vector<int64_t>{c.vocab_size, c.d_model} ||
        w.classifier_matrix().shape != std::vector<int64_t>{c.vocab_size, c.d_model})
        __builtin_trap();
    if (w.blocks->n_layers() != c.n_layers) __builtin_trap();
    for (int64_t l = 0; l < c.n_layers; ++l) expect_valid(w.blocks->held(l)->attention);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    folders();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ATTN_VIZ_FUZZ_EXPECT_CLEAN(read_folder(test_support::place_hf_fixture_input(folders(), data, size)));
    return 0;
}
