// Corpus mode of attn-viz model over an encoder-decoder folder (BART, T5): every line of --inputs
// ({"text", "target_text"} or {"tokens", "target_tokens"}; the target is the decoder input as
// given) through the model, one at a time, each stack's statistics and the cross heads' alignment
// into running moments (seq2seq_corpus.hpp); stats.json with every head's mean and std and its
// "stack", each stack's files in its folder, --shard and --save-partial as for decoder models.
#pragma once

#include <string>

#include "model_options.hpp"
#include "model_session.hpp"

namespace attn_viz_cli {

// The corpus run of `session` (an encoder-decoder model_type, not loaded yet), with `o` resolved
// (prepare_run); returns the exit code.
int run_seq2seq_corpus(const ModelOptions& o, attn_viz::ModelSession& session, const attn_viz::LoadLimits& limits);

}  // namespace attn_viz_cli
