// model --generate: the greedy continuation of the prompt, and how it ended, for stdout (its own
// labelled line after the prompt's) and for --json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model_tokenizer.hpp"
#include "whole_model.hpp"

namespace attn_viz {

struct Generation {
    std::vector<int> ids;   // the generated ids only (the prompt's not included)
    std::string text;       // them decoded
    int64_t requested = 0;  // --generate N
    std::string
        stop;  // "length" (N made), "end_of_text" (the model chose an end token), "context_full" (seq_len reached)
    std::string end_token;  // with "end_of_text": the label of the token that ended the text ("<s>", "</s>")
};

// Up to `steps` greedy tokens after `prompt`, chosen among the tokenizer's tokens; on_token as for
// greedy_generate. The model must have logits (logits_obstacle).
Generation generate(WholeModel& model, const ModelTokenizer& tokenizer, const std::vector<int>& prompt, int steps,
                    const StepCallback& on_token);

// "prompt:       ...\ngreedy continuation (8 tokens): ...\n", saying so when the model ended
// the text before its first token or stopped early.
std::string generation_lines(const Generation& generation, const std::string& prompt_text);

// {"prompt", "continuation", "tokens": [ids], "requested", "stop"}.
nlohmann::json generation_json(const Generation& generation, const std::string& prompt_text);

}  // namespace attn_viz
