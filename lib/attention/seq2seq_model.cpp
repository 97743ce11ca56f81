// The encoder-decoder forward pass: the encoder once, then the decoder with its cross-attention.
#include "seq2seq_model.hpp"

#include <algorithm>

#include "block_ops.hpp"
#include "dense_ops.hpp"
#include "head_replacement.hpp"
#include "model_run.hpp"
#include "relative_position_bias.hpp"

namespace attn_viz {

const char* seq2seq_stack_name(Seq2SeqStack stack) {
    return stack == Seq2SeqStack::encoder ? "encoder" : stack == Seq2SeqStack::decoder ? "decoder" : "cross";
}

Seq2SeqModel::Seq2SeqModel(OnednnBackend& backend, Seq2SeqWeights weights)
    : backend_(backend), weights_(std::move(weights)) {
    for (const BlockWeights& b : weights_.encoder)
        encoder_attention_.push_back(std::make_unique<AttentionLayer>(backend_, b.attention));
    for (const DecoderBlockWeights& b : weights_.decoder) {
        decoder_attention_.push_back(std::make_unique<AttentionLayer>(backend_, b.block.attention));
        cross_attention_.push_back(std::make_unique<AttentionLayer>(backend_, b.cross_attention));
    }
}

Seq2SeqRun Seq2SeqModel::run(const std::vector<int>& source, const std::vector<int>& target, bool with_contributions,
                             const ReplacedHead* replaced) {
    return run_pass(source, target, {with_contributions, replaced, nullptr});
}

Seq2SeqRun Seq2SeqModel::run_layers(const std::vector<int>& source, const std::vector<int>& target,
                                    bool with_contributions, const Seq2SeqLayerVisitor& visit) {
    return run_pass(source, target, {with_contributions, nullptr, &visit});
}

Seq2SeqRun Seq2SeqModel::run_pass(const std::vector<int>& source, const std::vector<int>& target, const Pass& pass) {
    const ModelConfig& c = weights_.config.blocks;
    check_model_tokens(source, c.vocab_size, c.max_tokens, "the source");
    check_model_tokens(target, c.vocab_size, c.max_tokens, "the target");
    Seq2SeqRun run;
    run.source = source;
    run.target = target;
    encode(run, pass);
    decode(run, pass);
    return run;
}

std::vector<int> Seq2SeqModel::generate(const std::vector<int>& source, int steps, const std::vector<int>& end_ids,
                                        int64_t choices) {
    const ModelConfig& c = weights_.config.blocks;
    Seq2SeqRun run = this->run(source, {weights_.config.decoder_start_token_id}, false);
    const int64_t V = c.vocab_size, limit = choices > 0 ? std::min(choices, V) : V;
    for (int step = 0; step < steps && static_cast<int64_t>(run.target.size()) < c.max_tokens; ++step) {
        const float* last = run.logits.ptr() + (static_cast<int64_t>(run.target.size()) - 1) * V;
        const int next = static_cast<int>(std::max_element(last, last + limit) - last);
        run.target.push_back(next);
        if (std::find(end_ids.begin(), end_ids.end(), next) != end_ids.end()) break;
        run.decoder.clear(), run.cross.clear();
        decode(run, {false, nullptr, nullptr});
    }
    return run.target;
}

template <typename Sublayer>
void Seq2SeqModel::add_sublayer(Tensor& x, const NormWeights& norm, Sublayer sublayer) const {
    if (weights_.config.blocks.residual == ResidualLayout::post_norm) {
        add_in_place(x, sublayer(x));
        x = normalized_by(x, norm);
    } else {
        add_in_place(x, sublayer(normalized_by(x, norm)));
    }
}

Tensor Seq2SeqModel::attended(AttentionLayer& layer, const Tensor& input, const Tensor* context, const Tensor& bias,
                              const Pass& pass, std::vector<LayerResult>& results, Seq2SeqHead where) {
    AttentionRequest request;
    request.input = &input;
    request.context = context;
    request.score_bias = bias.empty() ? nullptr : &bias;
    request.with_contributions = pass.with_contributions;
    LayerResult result = layer.run(request);
    const ReplacedHead* replaced = pass.replaced;
    Tensor output;
    if (replaced && replaced->id.stack == where.stack && replaced->id.layer == where.layer) {
        const Tensor z = head_output(result.context, replaced->id.head, layer.weights().d_head);
        output = output_with_head_replaced(backend_, layer.weights(), result, replaced->id.head,
                                           ablation_replacement(z, replaced->by_mean));
    } else {
        output = result.output;
    }
    if (pass.visit)
        (*pass.visit)(where.stack, where.layer, result, layer.weights());
    else
        results.push_back(std::move(result));
    return output;
}

Tensor Seq2SeqModel::position_bias(const StackWeights& stack, int64_t T, bool bidirectional) const {
    const RelativePositionTable& positions = stack.relative_positions;
    return positions.table.empty()
               ? Tensor{}
               : relative_position_bias(positions.table, T, T, bidirectional, positions.max_distance);
}

void Seq2SeqModel::encode(Seq2SeqRun& run, const Pass& pass) {
    const StackWeights& stack = weights_.encoder_stack;
    Tensor x = embedded(run.source, stack);
    const Tensor bias = position_bias(stack, static_cast<int64_t>(run.source.size()), true);
    for (size_t l = 0; l < weights_.encoder.size(); ++l) {
        const BlockWeights& b = weights_.encoder[l];
        add_sublayer(x, b.attention_norm, [&](const Tensor& input) {
            return attended(*encoder_attention_[l], input, nullptr, bias, pass, run.encoder,
                            {Seq2SeqStack::encoder, static_cast<int64_t>(l)});
        });
        add_sublayer(x, b.feed_forward_norm,
                     [&](const Tensor& input) { return feed_forward(backend_, input, b, weights_.config.blocks); });
    }
    run.encoder_output = stack.final_norm.weight.empty() ? std::move(x) : normalized_by(x, stack.final_norm);
}

void Seq2SeqModel::decode(Seq2SeqRun& run, const Pass& pass) {
    const StackWeights& stack = weights_.decoder_stack;
    Tensor x = embedded(run.target, stack);
    const Tensor bias = position_bias(stack, static_cast<int64_t>(run.target.size()), false);
    for (size_t l = 0; l < weights_.decoder.size(); ++l) {
        const DecoderBlockWeights& b = weights_.decoder[l];
        add_sublayer(x, b.block.attention_norm, [&](const Tensor& input) {
            return attended(*decoder_attention_[l], input, nullptr, bias, pass, run.decoder,
                            {Seq2SeqStack::decoder, static_cast<int64_t>(l)});
        });
        add_sublayer(x, b.cross_attention_norm, [&](const Tensor& input) {
            return attended(*cross_attention_[l], input, &run.encoder_output, Tensor{}, pass, run.cross,
                            {Seq2SeqStack::cross, static_cast<int64_t>(l)});
        });
        add_sublayer(x, b.block.feed_forward_norm, [&](const Tensor& input) {
            return feed_forward(backend_, input, b.block, weights_.config.blocks);
        });
    }
    if (!stack.final_norm.weight.empty()) x = normalized_by(x, stack.final_norm);
    if (weights_.config.classifier_scale != 1.0f)
        for (float& v : x.data) v *= weights_.config.classifier_scale;
    run.logits = linear_out_in(backend_, x, weights_.classifier, weights_.classifier_bias);
}

Tensor Seq2SeqModel::embedded(const std::vector<int>& tokens, const StackWeights& stack) const {
    Tensor x = embedding_rows(weights_.token_embedding, tokens);
    const float scale = weights_.config.blocks.embedding_scale;
    if (scale != 1.0f)
        for (float& v : x.data) v *= scale;
    if (!stack.positions.empty())  // rows 0..T-1 of [max_tokens, D]: the same layout as x
        for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += stack.positions.data[i];
    return stack.embedding_norm.weight.empty() ? x : normalized_by(x, stack.embedding_norm);
}

Tensor Seq2SeqModel::normalized_by(const Tensor& x, const NormWeights& norm) const {
    return normalized(x, norm, weights_.config.blocks.norm, weights_.config.blocks.norm_epsilon);
}

}  // namespace attn_viz
