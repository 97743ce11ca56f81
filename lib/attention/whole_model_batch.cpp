// A batch of sequences through a whole model layer by layer (WholeModel::run_batch_blocks): the
// corpus mode of a streamed model, which then reads and decodes each block once per batch.
#include "whole_model.hpp"

namespace attn_viz {

void WholeModel::run_batch_blocks(const std::vector<EncodedText>& batch, bool with_contributions, bool with_value_norms,
                                  const BatchBlockVisitor& visit, Timings* timings) {
    const ModelConfig& c = weights_.config;
    // Step 1: every sequence checked and embedded: the batch's residual streams, [T_i, D] each.
    std::vector<Tensor> streams;
    for (const EncodedText& input : batch) check_model_tokens(input.ids, c.vocab_size, c.max_tokens);
    for (const EncodedText& input : batch) streams.push_back(embedded(input.ids, input.type_ids));

    // Step 2: block by block. A streamed model loads the block here, once, then the block runs on
    // each sequence's stream in turn.
    for (size_t l = 0; l < static_cast<size_t>(c.n_layers); ++l) {
        if (timings) {
            Timings::Scope t(*timings, "block loads");
            block(l);
        }
        for (size_t i = 0; i < streams.size(); ++i) {
            LayerResult result = run_block(l, streams[i], with_contributions, with_value_norms);
            visit(i, l, result, block(l).attention);
        }
    }
}

LayerResult WholeModel::run_block(size_t l, Tensor& x, bool with_contributions, bool with_value_norms) {
    const Tensor input = attention_input(l, x);
    AttentionRequest request;
    request.input = &input;
    request.with_contributions = with_contributions;
    request.with_value_norms = with_value_norms;
    LayerResult result = attention_layer(l).run(request);
    finish_block(l, x, result.output);
    return result;
}

}  // namespace attn_viz
