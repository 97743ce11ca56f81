// Greedy decoding over any whole model with logits.
#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "whole_model.hpp"

namespace attn_viz {

std::vector<int> greedy_generate(WholeModel& model, const std::vector<int>& prompt, int steps,
                                 const StepCallback& on_token, const std::vector<int>& end_ids, int64_t choices) {
    if (prompt.empty()) fail_input("prompt", "greedy generation needs at least one prompt token (e.g. BOS)");
    const int64_t seq_len = model.description().max_tokens, vocab = model.description().vocab_size;
    if (!model.has_logits())
        throw Error(ErrorKind::internal, fmt::format("greedy_generate: a {} model has no next-token logits",
                                                     model.description().architecture));
    if (static_cast<int64_t>(prompt.size()) > seq_len)
        fail_input("prompt", fmt::format("{} tokens exceed the model's sequence length {}", prompt.size(), seq_len));
    const int64_t length = std::min<int64_t>(seq_len, static_cast<int64_t>(prompt.size()) + std::max(steps, 0));

    // Every step runs the full forward over one fixed length: positions past the current one hold
    // filler ids that the causal mask hides from earlier positions, so the logits at the current
    // position are exact while oneDNN reuses one set of primitives instead of compiling a new
    // shape per step.
    std::vector<int> sequence = prompt;
    std::vector<int> padded(static_cast<size_t>(length), prompt.back());
    std::copy(prompt.begin(), prompt.end(), padded.begin());
    while (static_cast<int64_t>(sequence.size()) < length) {
        const ModelRun run = model.run(padded, {.contributions = false});
        const float* row = run.logits.ptr() + (static_cast<int64_t>(sequence.size()) - 1) * vocab;
        const int next =
            static_cast<int>(std::max_element(row, row + (choices > 0 ? std::min(choices, vocab) : vocab)) - row);
        if (std::find(end_ids.begin(), end_ids.end(), next) != end_ids.end()) break;
        padded[sequence.size()] = next;
        sequence.push_back(next);
        if (on_token)
            on_token(static_cast<int64_t>(sequence.size() - prompt.size()),
                     length - static_cast<int64_t>(prompt.size()));
    }
    return sequence;
}

}  // namespace attn_viz
