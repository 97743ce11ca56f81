// Encoder-decoder head ablation: the chosen heads by stack, one rerun with each head replaced.
#include "seq2seq_ablation.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

std::vector<Seq2SeqHead> parse_seq2seq_ablated_heads(const std::string& text, int64_t encoder_layers,
                                                     int64_t decoder_layers, int64_t heads) {
    std::string lists[3];  // per stack, its items joined again by commas
    bool named_stacks[3] = {
        false};  // the stacks named at all (an empty item after the slash is parse_ablated_heads' to refuse)
    size_t begin = 0;
    while (begin <= text.size()) {
        const size_t end = std::min(text.find(',', begin), text.size());
        const std::string item = text.substr(begin, end - begin);
        const size_t slash = item.find('/');
        bool named = false;
        for (Seq2SeqStack stack : seq2seq_stacks)
            if (text == "all" || (slash != std::string::npos && item.substr(0, slash) == seq2seq_stack_name(stack))) {
                std::string& list = lists[static_cast<int>(stack)];
                list += fmt::format("{}{}", named_stacks[static_cast<int>(stack)] ? "," : "",
                                    text == "all" ? text : item.substr(slash + 1));
                named = named_stacks[static_cast<int>(stack)] = true;
            }
        if (!named)
            throw Error(ErrorKind::usage,
                        fmt::format("heads '{}': '{}' names no stack: an encoder-decoder's heads are all, or "
                                    "encoder/HEADS, decoder/HEADS or cross/HEADS (e.g. encoder/L0H1,cross/all)",
                                    text, item));
        begin = end + 1;
    }
    std::vector<Seq2SeqHead> chosen;
    for (Seq2SeqStack stack : seq2seq_stacks) {
        if (!named_stacks[static_cast<int>(stack)]) continue;
        const std::string& list = lists[static_cast<int>(stack)];
        const int64_t layers = stack == Seq2SeqStack::encoder ? encoder_layers : decoder_layers;
        try {
            for (const AblatedHead& id : parse_ablated_heads(list, layers, heads))
                chosen.push_back({stack, id.layer, id.head});
        } catch (const Error& e) {
            throw Error(ErrorKind::usage, fmt::format("{} {}", seq2seq_stack_name(stack), e.what()));
        }
    }
    return chosen;
}

std::array<AblationReport, 3> ablate_seq2seq_heads(Seq2SeqModel& model, const Seq2SeqRun& clean,
                                                   const std::vector<Seq2SeqHead>& heads, AblationMode mode,
                                                   const StepCallback& on_head) {
    std::array<AblationReport, 3> reports;
    for (AblationReport& report : reports) {
        report.mode = mode;
        report.clean_loss = next_token_loss(clean.logits, clean.target);
    }
    int64_t done = 0;
    for (const Seq2SeqHead& id : heads) {
        const ReplacedHead replaced{id, mode == AblationMode::mean};
        const Tensor logits = model.run(clean.source, clean.target, false, &replaced).logits;
        AblationReport& report = reports[static_cast<size_t>(id.stack)];
        report.heads.push_back(
            ablation_effect({id.layer, id.head}, clean.logits, logits, clean.target, report.clean_loss));
        if (on_head) on_head(++done, static_cast<int64_t>(heads.size()));
    }
    return reports;
}

}  // namespace attn_viz
