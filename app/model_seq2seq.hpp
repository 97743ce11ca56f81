// attn-viz model over an encoder-decoder folder (BART, T5): the source (--text or --tokens)
// through the encoder, the target (--target-text or --target-tokens, the decoder input as given,
// or --generate N's greedy continuation from the decoder start token) through the decoder, and
// the three kinds of attention drawn and analysed (seq2seq_report.hpp), or with --stream-layers
// (or by itself when the whole run exceeds the memory budget) layer by layer (seq2seq_stream.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model_options.hpp"
#include "model_session.hpp"
#include "model_stream.hpp"
#include "output_options.hpp"
#include "report.hpp"

namespace attn_viz_cli {

// The ids of a text option (encoded by `tokenizer`) or of its ids option ("1,2,3"; given: it
// wins), checked against the model's vocab_size and max_tokens: Error(bad_input) naming the
// option that gave them ("--target-tokens: token 1 is id 260, outside the vocabulary (0..259)").
std::vector<int> seq2seq_ids(const std::string& text, const std::optional<std::string>& ids,
                             const attn_viz::ModelTokenizer& tokenizer, int64_t vocab_size, int64_t max_tokens,
                             const char* text_option, const char* ids_option);

// An option an encoder-decoder run does not take: its name, whether it was given, and why not.
struct RefusedOption {
    std::string option;
    bool given = false;
    std::string why;
};

// Error(usage) "OPTION does not apply to an encoder-decoder model (TYPE): WHY" for the first of
// `options` that was given.
void refuse_for_encoder_decoder(const std::string& model_type, const std::vector<RefusedOption>& options);

// Error(usage) naming --target-text / --target-tokens when given for a model that is not an
// encoder-decoder.
void refuse_target_for_decoder(const std::string& model_type, bool target_given);

// The maps' memory of a run over S source and T target tokens (`c`: the blocks' configuration,
// n_layers the encoder's): the three stacks' at once, and the largest attention layer's.
attn_viz::RunBytes seq2seq_run_bytes(const attn_viz::ModelConfig& c, int64_t decoder_layers, int64_t S, int64_t T);

// Refuses (Error bad_input) a run over S source and T target tokens whose three stacks' maps
// exceed the memory budget.
void check_seq2seq_run_memory(const attn_viz::ModelConfig& c, int64_t decoder_layers, int64_t S, int64_t T,
                              const attn_viz::LoadLimits& limits);

// The run of `session` (an encoder-decoder model_type, not loaded yet), with `o` resolved
// (prepare_run); returns the exit code.
int run_seq2seq_model(const ModelOptions& o, attn_viz::ModelSession& session, const attn_viz::LoadLimits& limits);

}  // namespace attn_viz_cli
