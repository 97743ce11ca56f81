// Hugging Face decoder folders (read_hf_llama_folder's families) against the float64 forward of
// the Python reference that wrote them.
#pragma once

#include <string>
#include <vector>

#include "hf_llama_checkpoint.hpp"
#include "hf_reference_folder.hpp"
#include "npy.hpp"
#include "onednn_backend.hpp"
#include "whole_model.hpp"

namespace test_support {

// Writes a folder with scripts/`script` for each of `cases`, runs it through read_hf_llama_folder
// and checks attention (1e-5) and logits (1e-5 of their scale) against the script's float64
// forward; each sliding layer's visibility must carry its window.
inline void check_decoder_folders(const std::string& script, const std::vector<std::string>& cases) {
    attn_viz::OnednnBackend backend;
    for (const std::string& arguments : cases) {
        CAPTURE(arguments);
        ScratchDir dir;
        make_reference_folder(dir, script, arguments);
        const attn_viz::ModelWeights weights = attn_viz::read_hf_llama_folder(dir.path().string());
        attn_viz::WholeModel model(backend, weights);
        const attn_viz::ModelRun run = model.run(read_ids(dir / "ids.txt"));
        double attention_error = 0;
        for (size_t l = 0; l < run.layers.size(); ++l) {
            attention_error =
                std::max(attention_error,
                         max_abs_diff(run.layers[l].attention,
                                      attn_viz::read_npy(dir / ("expected_attention_" + std::to_string(l) + ".npy"))));
            CHECK(run.layers[l].visibility.window ==
                  weights.blocks->held(static_cast<int64_t>(l))->attention.sliding_window);
        }
        const attn_viz::Tensor expected_logits = attn_viz::read_npy(dir / "expected_logits.npy");
        const double logit_scale = magnitude(expected_logits);
        const double logit_error = max_abs_diff(run.logits, expected_logits);
        MESSAGE(arguments << ": max attention error " << attention_error << ", max logit error " << logit_error
                          << " of " << logit_scale);
        CHECK(attention_error < 1e-5);
        CHECK(logit_error < 1e-5 * logit_scale);
    }
}

}  // namespace test_support
