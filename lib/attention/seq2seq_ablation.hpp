// True head ablation in an encoder-decoder (seq2seq_model.hpp): each chosen head of the encoder
// self-attention, the decoder self-attention or the cross attention has its output removed
// (zeroed, or replaced by its mean over the tokens) and the model reruns; the change of the
// teacher-forced target loss and the KL divergence of the decoder's next-token distributions
// measure the head's effect, as head_ablation.hpp measures a decoder's.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "head_ablation.hpp"
#include "seq2seq_model.hpp"

namespace attn_viz {

// "all" (every head of the three stacks) or heads named by stack, comma separated:
// "encoder/L0H1,cross/L1H0-3,decoder/all" (after the slash: all, or the one head notation of
// parse_ablated_heads, within that stack's layers); throws Error(usage, "heads '...': ...") otherwise.
std::vector<Seq2SeqHead> parse_seq2seq_ablated_heads(const std::string& text, int64_t encoder_layers,
                                                     int64_t decoder_layers, int64_t heads);

// Per stack (encoder, decoder, cross: seq2seq_stacks' order) the ablation of its chosen heads (in
// the order asked; none when none was chosen), every report's clean_loss the clean run's
// teacher-forced target loss next_token_loss(clean.logits, clean.target). One whole rerun per head.
std::array<AblationReport, 3> ablate_seq2seq_heads(Seq2SeqModel& model, const Seq2SeqRun& clean,
                                                   const std::vector<Seq2SeqHead>& heads, AblationMode mode,
                                                   const StepCallback& on_head = {});

}  // namespace attn_viz
