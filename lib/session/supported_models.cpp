#include "supported_models.hpp"

#include "family_table.hpp"
#include "gguf_transformer.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "hf_transformer_checkpoint.hpp"

namespace attn_viz {

std::vector<std::string> supported_model_types() {
    std::vector<std::string> types = hf_decoder_model_types();
    for (const auto* more : {&hf_transformer_model_types(), &hf_seq2seq_model_types()})
        types.insert(types.end(), more->begin(), more->end());
    return types;
}

std::vector<std::string> supported_gguf_architectures() {
    std::vector<std::string> architectures = gguf_decoder_architectures();
    const std::vector<std::string>& others = gguf_transformer_architectures();
    architectures.insert(architectures.end(), others.begin(), others.end());
    return architectures;
}

std::string listed_with_or(const std::vector<std::string>& names) {
    std::string text;
    for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return text;
}

}  // namespace attn_viz
