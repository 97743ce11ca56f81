// Llama-like decoders' weights from a GGUF file, by the family table (family_table.hpp) and the
// one decoder block reader (decoder_blocks.hpp).
#include "gguf_llama.hpp"

#include <utility>

#include "decoder_blocks.hpp"
#include "gguf_decoder_config.hpp"

namespace attn_viz {

ModelConfig gguf_llama_config(const GgufFile& file) { return gguf_decoder_config(file).config; }

ModelWeights read_gguf_llama(const GgufFile& file) {
    const DecoderLayout layout = gguf_decoder_config(file);
    ModelWeights w;
    w.config = layout.config;
    read_decoder_outside_blocks(file, layout, w);
    w.blocks = read_decoder_blocks(file, layout);
    return w;
}

ModelWeights read_gguf_llama_streaming(std::shared_ptr<const GgufFile> file) {
    const DecoderLayout layout = gguf_decoder_config(*file);
    ModelWeights w;
    w.config = layout.config;
    read_decoder_outside_blocks(*file, layout, w);
    w.blocks = std::make_shared<StreamedDecoderBlocks>(std::move(file), layout);
    return w;
}

}  // namespace attn_viz
