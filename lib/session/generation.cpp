#include "generation.hpp"

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

Generation generate(WholeModel& model, const ModelTokenizer& tokenizer, const std::vector<int>& prompt, int steps,
                    const StepCallback& on_token) {
    const std::vector<int> end_ids = tokenizer.end_ids();
    const std::vector<int> all = greedy_generate(model, prompt, steps, on_token, end_ids, tokenizer.vocab_size());
    Generation g;
    g.ids.assign(all.begin() + static_cast<std::ptrdiff_t>(prompt.size()), all.end());
    // Decoded after the prompt's last token, so that a leading space is the one the text has.
    const std::string with_last = tokenizer.decode({prompt.back()});
    std::vector<int> last_and_new{prompt.back()};
    last_and_new.insert(last_and_new.end(), g.ids.begin(), g.ids.end());
    g.text = tokenizer.decode(last_and_new).substr(with_last.size());
    g.requested = steps;
    const bool short_of_steps = static_cast<int64_t>(g.ids.size()) < steps;
    g.stop = !short_of_steps                                                      ? "length"
             : static_cast<int64_t>(all.size()) >= model.description().max_tokens ? "context_full"
                                                                                  : "end_of_text";
    if (g.stop == "end_of_text" && !end_ids.empty()) g.end_token = tokenizer.labels({end_ids.front()}).front();
    return g;
}

std::string generation_lines(const Generation& g, const std::string& prompt_text) {
    const std::string lines = fmt::format("prompt: {}\n", prompt_text);
    const std::string count = fmt::format("{}{}", g.ids.size(), g.ids.size() == 1 ? " token" : " tokens");
    if (g.ids.empty() && g.stop == "end_of_text")
        return fmt::format(
            "{}greedy continuation: none: the model ended the text at once (its first choice was the "
            "end-of-text token {})\n",
            lines, g.end_token);
    if (g.ids.empty())
        return fmt::format("{}greedy continuation: none: the prompt already fills the model's context\n", lines);
    std::string how = count;
    if (g.stop == "end_of_text")
        how += fmt::format(" of {}, then the model ended the text ({})", g.requested, g.end_token);
    if (g.stop == "context_full") how += fmt::format(" of {}, then the model's context was full", g.requested);
    const size_t start = g.text.find_first_not_of(' ');  // the space between prompt and continuation
    return fmt::format("{}greedy continuation ({}): {}\n", lines, how,
                       start == std::string::npos ? g.text : g.text.substr(start));
}

nlohmann::json generation_json(const Generation& g, const std::string& prompt_text) {
    return {{"prompt", prompt_text},
            {"continuation", g.text},
            {"tokens", g.ids},
            {"requested", g.requested},
            {"stop", g.stop}};
}

}  // namespace attn_viz
