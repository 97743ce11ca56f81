// Opening any supported model as a whole model (model_files.hpp decides what a path holds).
#include "model_files.hpp"
#include "whole_model.hpp"

namespace attn_viz {

std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const ModelFiles& files,
                                             const LoadLimits& limits) {
    return std::make_unique<WholeModel>(backend, read_model_weights(files, limits));
}

std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const std::string& path,
                                             const LoadLimits& limits) {
    return open_whole_model(backend, open_model_files(path, limits), limits);
}

}  // namespace attn_viz
