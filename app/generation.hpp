// model --generate: the greedy continuation of the prompt, and how it ended, for stdout (its own
// labelled line after the prompt's) and for --json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llama_model.hpp"
#include "model_tokenizer.hpp"

namespace attn_viz_cli {

struct Generation {
    std::vector<int> ids;      // the generated ids only (the prompt's not included)
    std::string text;          // them decoded
    int64_t requested = 0;     // --generate N
    std::string stop;          // "length" (N made), "end_of_text" (the model chose an end token), "context_full" (seq_len reached)
    std::string end_token;     // with "end_of_text": the label of the token that ended the text ("<s>", "</s>")
};

// Up to `steps` greedy tokens after `prompt`; on_token as for greedy_generate.
Generation generate(attn_viz::LlamaModel& model, const attn_viz::ModelTokenizer& tokenizer, const std::vector<int>& prompt,
                    int steps, const attn_viz::StepCallback& on_token);

// "prompt:       ...\ngreedy continuation (8 tokens): ...\n", saying so when the model ended
// the text before its first token or stopped early.
std::string generation_lines(const Generation& generation, const std::string& prompt_text);

// {"prompt", "continuation", "tokens": [ids], "requested", "stop"}.
nlohmann::json generation_json(const Generation& generation, const std::string& prompt_text);

}  // namespace attn_viz_cli
