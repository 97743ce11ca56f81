// True ablation of attention heads in a whole model: a head's output is removed (zeroed, or
// replaced by its mean over the tokens) and the model reruns from that layer on; the change of the
// next-token loss and the KL divergence of the next-token distributions measure the head's effect,
// and in an encoder (no next-token logits) the change of the final hidden states.
// The replacement of one head's output and the rerun (logits_with_head_replaced) serve activation
// patching too (activation_patching.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "head_replacement.hpp"
#include "whole_model.hpp"

namespace attn_viz {

enum class AblationMode { zero, mean };

// "zero" or "mean"; throws Error(usage) otherwise.
AblationMode parse_ablation_mode(const std::string& text);
const char* ablation_mode_name(AblationMode mode);

struct AblatedHead {
    int64_t layer = 0, head = 0;
    bool operator==(const AblatedHead&) const = default;
};

// "all" (every head of the model) or a list of heads in the one head notation, "L1H3,2:0,L4H0-7"
// (head_names.hpp; each within layers x heads, no repeats); throws Error(usage, "heads '...': ...")
// otherwise.
std::vector<AblatedHead> parse_ablated_heads(const std::string& text, int64_t layers, int64_t heads);

struct HeadAblationEffect {
    AblatedHead id;
    double loss = 0;        // next-token loss with the head ablated (NaN when T = 1)
    double delta_loss = 0;  // loss - clean loss
    double kl = 0;          // mean_t KL(p_clean,t || p_ablated,t) over all T positions, nats
};

// The measures of HeadAblationEffect by name, in its order: what a corpus aggregates per head
// (corpus_ablation.hpp) and its tables name.
struct AblationMeasure {
    const char* name;
    double HeadAblationEffect::*member;
};
const std::vector<AblationMeasure>& ablation_measures();

struct AblationReport {
    AblationMode mode = AblationMode::zero;
    double clean_loss = 0;                  // the clean run's next-token loss (NaN when T = 1)
    std::vector<HeadAblationEffect> heads;  // in the order asked
};

// logits: [T, V]; tokens: the T ids run. Mean cross-entropy of the actual next tokens,
// mean_{t < T-1} -log softmax(logits_t)[tokens_{t+1}], in double; NaN when T = 1.
double next_token_loss(const Tensor& logits, const std::vector<int>& tokens);

// p_logits, q_logits: [T, V]. Per position t, KL(softmax(p_t) || softmax(q_t)) in nats, in double: [T].
std::vector<double> next_token_kl(const Tensor& p_logits, const Tensor& q_logits);

// clean, ablated: [T, V] logits. mean_t KL(softmax(clean_t) || softmax(ablated_t)), in double.
double mean_next_token_kl(const Tensor& clean, const Tensor& ablated);

// clean, ablated: [T, V] logits over `tokens`. The ablated run's loss, its change from
// clean_loss, and mean_next_token_kl(clean, ablated).
HeadAblationEffect ablation_effect(const AblatedHead& id, const Tensor& clean, const Tensor& ablated,
                                   const std::vector<int>& tokens, double clean_loss);

// replacement: [T, d_h]. The logits [T, V] when head `id`'s output z_h (clean.layers[l].context)
// is replaced by `replacement`: the layer output becomes Z' W_O + b_O (head_replacement.hpp) and the
// model reruns from block l on `clean`'s residual stream (one partial forward). Ablation and
// activation patching (activation_patching.hpp) both replace a head this way. The model must
// have logits (a decoder).
Tensor logits_with_head_replaced(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                                 const AblatedHead& id, const Tensor& replacement);

// Head h of layer l, ablated: its output z_h replaced by 0 (zero) or by mean_t z_h (mean), by
// logits_with_head_replaced: one partial forward per head. on_head (optional): told after each head.
AblationReport ablate_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                            const std::vector<AblatedHead>& heads, AblationMode mode, const StepCallback& on_head = {});

// What removing a head does to an encoder's final hidden states H [T, D] (ablated: H'), and with
// a masked-LM head to its loss of predicting each input token at its own position.
struct HiddenStateEffect {
    AblatedHead id;
    double cosine_distance = 0;   // mean_t (1 - cos(H_t, H'_t)); a zero row on either side counts as 1
    double relative_l2 = 0;       // ||H' - H||_F / ||H||_F (NaN when ||H||_F = 0)
    double mlm_loss = NAN;        // masked_lm_loss of the ablated run; NaN without a masked-LM head
    double delta_mlm_loss = NAN;  // mlm_loss - the clean run's
};

struct EncoderAblationReport {
    AblationMode mode = AblationMode::zero;
    double clean_mlm_loss = NAN;           // the clean run's masked_lm_loss; NaN without a masked-LM head
    std::vector<HiddenStateEffect> heads;  // in the order asked
};

// logits: [T, V] a masked-LM head's; tokens: the T ids run. The mean cross-entropy of each input
// token at its own position, unmasked, mean_t -log softmax(logits_t)[tokens_t], in double.
double masked_lm_loss(const Tensor& logits, const std::vector<int>& tokens);

// clean, ablated: [T, D] final hidden states -> the two measures above, in double.
HiddenStateEffect hidden_state_effect(const AblatedHead& id, const Tensor& clean, const Tensor& ablated);

// As ablate_heads for a model without logits (an encoder): each head's output replaced as there,
// the model rerun from its layer to the final hidden states (WholeModel::hidden_states_from),
// compared with clean.hidden_states; with a masked-LM head (has_masked_lm) also its loss.
EncoderAblationReport ablate_encoder_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                                           const std::vector<AblatedHead>& heads, AblationMode mode,
                                           const StepCallback& on_head = {});

}  // namespace attn_viz
