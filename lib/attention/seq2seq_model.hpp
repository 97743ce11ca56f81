// An encoder-decoder transformer (seq2seq_weights.hpp: BART, T5) run on oneDNN: the encoder over
// the source ids, the decoder over the target ids as given (teacher forced: the caller chooses
// the decoder input, e.g. the decoder start token then the target; nothing is shifted here),
// each decoder block's cross-attention reading the encoder's output. Every block of both stacks
// is run by its residual layout, with N its norm:
//   pre_norm  (T5)   x = x + sublayer(N(x))      post_norm (BART)   x = N(x + sublayer(x))
// for the sublayers self-attention, cross-attention (decoder), feed-forward; embeddings
// x scale (+ learned positions) [-> embedding norm]; after each stack its final norm (T5); logits
// = (decoder output x classifier_scale) classifier (+ classifier bias).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "attention.hpp"
#include "layer_result.hpp"
#include "onednn_backend.hpp"
#include "seq2seq_weights.hpp"

namespace attn_viz {

struct Seq2SeqRun {
    std::vector<int> source;           // the S encoder ids
    std::vector<int> target;           // the T decoder ids
    std::vector<LayerResult> encoder;  // per encoder block: self-attention, attention [H, S, S]
    std::vector<LayerResult> decoder;  // per decoder block: causal self-attention, attention [H, T, T]
    std::vector<LayerResult> cross;    // per decoder block: cross-attention, attention [H, T, S]
    Tensor encoder_output;             // [S, D] after the encoder (and its final norm)
    Tensor logits;                     // [T, V]: row t predicts the target token after target[t]
};

// The three kinds of attention, in the order of their folders and of stats.json's "stack".
enum class Seq2SeqStack { encoder, decoder, cross };
inline constexpr Seq2SeqStack seq2seq_stacks[3] = {Seq2SeqStack::encoder, Seq2SeqStack::decoder, Seq2SeqStack::cross};
const char* seq2seq_stack_name(Seq2SeqStack stack);  // "encoder", "decoder", "cross"

struct Seq2SeqHead {
    Seq2SeqStack stack = Seq2SeqStack::encoder;
    int64_t layer = 0, head = 0;
    bool operator==(const Seq2SeqHead&) const = default;
};

// A head whose output z_h a run replaces (true ablation): by zeros, or by its mean over the
// tokens; the layer's output becomes Z' W_O + b_O, z_h's columns of Z replaced (head_replacement.hpp), and
// everything after it sees the change (an encoder head reaches every cross-attention).
struct ReplacedHead {
    Seq2SeqHead id;
    bool by_mean = false;
};

// Told of each attention layer of a pass as soon as it is done (Seq2SeqModel::run_layers), in the
// order they run: every encoder layer, then per decoder layer its self- and its cross-attention.
// result: the layer's maps ([H, S, S], [H, T, T] or [H, T, S]) and outputs; weights: its attention
// weights. The pass keeps neither after the visitor returns.
using Seq2SeqLayerVisitor =
    std::function<void(Seq2SeqStack stack, int64_t layer, LayerResult& result, const LayerWeights& weights)>;

class Seq2SeqModel {
public:
    // Builds one AttentionLayer per attention module (weights repacked once). `backend` must
    // outlive the model.
    Seq2SeqModel(OnednnBackend& backend, Seq2SeqWeights weights);

    const Seq2SeqWeights& weights() const { return weights_; }

    // source: S ids, target: T ids, each 1..max_tokens ids below the vocabulary size
    // (Error(bad_input) naming `source` / `target` otherwise). with_contributions: fill each
    // LayerResult's per-head output shares. replaced (optional): that head's output replaced; the
    // maps of its layer are the clean ones (only what follows the head changes).
    Seq2SeqRun run(const std::vector<int>& source, const std::vector<int>& target, bool with_contributions = true,
                   const ReplacedHead* replaced = nullptr);

    // As run, but each attention layer's result goes to `visit` as soon as the layer is done instead
    // of into the run: the returned run has the ids, the encoder's output and the logits, and no
    // layers. Memory holds one attention layer's maps at a time (--stream-layers, model_seq2seq.hpp);
    // the decoder needs only the encoder's output.
    Seq2SeqRun run_layers(const std::vector<int>& source, const std::vector<int>& target, bool with_contributions,
                          const Seq2SeqLayerVisitor& visit);

    // Greedy decoding: the decoder start token followed by up to `steps` argmax tokens (over the
    // ids below `choices` when it is positive), stopping after one of `end_ids` or at max_tokens.
    // Returns the decoder's ids, the start token first.
    std::vector<int> generate(const std::vector<int>& source, int steps, const std::vector<int>& end_ids,
                              int64_t choices = 0);

private:
    // What a pass computes and where its layers' results go.
    struct Pass {
        bool with_contributions = true;
        const ReplacedHead* replaced = nullptr;      // a head whose output is replaced, or none
        const Seq2SeqLayerVisitor* visit = nullptr;  // where each layer's result goes; none: into the run
    };
    // Checks the source and target ids (Error(bad_input)), then runs the encoder and the decoder.
    Seq2SeqRun run_pass(const std::vector<int>& source, const std::vector<int>& target, const Pass& pass);
    // The encoder over run.source: fills run.encoder (unless visited) and run.encoder_output.
    void encode(Seq2SeqRun& run, const Pass& pass);
    // The decoder over run.target against run.encoder_output: fills run.decoder, run.cross (unless
    // visited) and run.logits.
    void decode(Seq2SeqRun& run, const Pass& pass);
    // input: [T, D] (queries; keys and values too without context), context: [S, D] or null,
    // bias: [H, T, S] or empty -> the layer's output [T, D] (with pass.replaced's head replaced when
    // it names this stack and layer, `where`); its result handed to pass.visit or appended to `results`.
    Tensor attended(AttentionLayer& layer, const Tensor& input, const Tensor* context, const Tensor& bias,
                    const Pass& pass, std::vector<LayerResult>& results, Seq2SeqHead where);
    // The stack's relative position bias [H, T, T] (T5), or empty (no relative positions).
    Tensor position_bias(const StackWeights& stack, int64_t T, bool bidirectional) const;
    // tokens: T ids -> the stack's embedded tokens [T, D]
    Tensor embedded(const std::vector<int>& tokens, const StackWeights& stack) const;
    // x: [T, D] -> the sublayer's output added in the residual layout around `norm`, in place;
    // sublayer: [T, D] -> [T, D].
    template <typename Sublayer>
    void add_sublayer(Tensor& x, const NormWeights& norm, Sublayer sublayer) const;
    // x: [T, D] -> normalized by the model's norm kind and epsilon
    Tensor normalized_by(const Tensor& x, const NormWeights& norm) const;

    OnednnBackend& backend_;
    Seq2SeqWeights weights_;
    std::vector<std::unique_ptr<AttentionLayer>> encoder_attention_, decoder_attention_, cross_attention_;
};

}  // namespace attn_viz
