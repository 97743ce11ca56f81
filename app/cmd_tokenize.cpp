// attn-viz tokenize: how a model's tokenizer cuts texts into tokens (ids and the text of each),
// the first thing to look at with a new model, and what scripts compare against other tokenizers.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "input_limits.hpp"
#include "model_tokenizer.hpp"
#include "model_tokenizer_file.hpp"
#include "option_checks.hpp"
#include "tokenized_texts.hpp"

namespace attn_viz_cli {
namespace {

struct TokenizeOptions {
    std::string model, tokenizer, text, inputs;
    std::optional<std::string> text_pair;
    bool json = false;
    InputLimitValues limit_values;  // --max-memory only
};

void declare_tokenize_options(CLI::App* cmd, TokenizeOptions& o) {
    cmd->description(
        "Show how a model's tokenizer encodes texts: each token's id and its text, as the model takes them "
        "(with the BOS or [CLS] ... [SEP] its tokenizer adds). No weights are read.");
    auto* model =
        cmd->add_option(
               "--model,--checkpoint", o.model,
               "Model whose own tokenizer to use: a Hugging Face folder or a GGUF model (a llama2.c checkpoint "
               "needs --tokenizer)")
            ->check(CLI::ExistingPath);
    auto* tokenizer =
        cmd->add_option("--tokenizer", o.tokenizer,
                        "Tokenizer: a Hugging Face tokenizer.json or folder (tokenizer.json, vocab.json + merges.txt, "
                        "encoder.json + vocab.bpe or vocab.txt), a llama2.c tokenizer.bin, or a GGUF file "
                        "(a vocabulary-only one too); overrides --model's")
            ->check(CLI::ExistingPath);
    auto* text = cmd->add_option("--text", o.text, "Text to tokenize")->check(refuse_empty("is an empty text"));
    auto* inputs =
        cmd->add_option("--inputs", o.inputs,
                        "File of texts: one per line, or a .jsonl file of {\"text\": \"...\"} (or {\"tokens\": [ids]}, "
                        "shown with their text) per line, as model mode's --inputs; blank lines are skipped")
            ->check(CLI::ExistingFile);
    auto* text_pair = cmd->add_option("--text-pair", o.text_pair,
                                      "A text pair's second text: --text and this encoded as the tokenizer encodes a "
                                      "pair ([CLS] A [SEP] B [SEP]), each token's type shown");
    text_pair->needs(text);
    text->excludes(inputs);
    cmd->add_flag("--json", o.json,
                  "Print one JSON object per text, {\"text\": ..., \"ids\": [...], \"tokens\": [...]}, one per line");
    add_memory_budget_option(cmd, o.limit_values, "a text (an --inputs line)");
    cmd->parse_complete_callback([&o, model, tokenizer, text, inputs] {
        if (!*model && !*tokenizer) throw CLI::RequiredError("--model or --tokenizer");
        if (!*text && !*inputs) throw CLI::RequiredError("--text or --inputs");
        if (o.text_pair && o.text_pair->empty())
            throw CLI::ValidationError("--text-pair", "'' is no text: give the pair's second text or leave it out");
    });
}

int tokenize(const TokenizeOptions& o) {
    using namespace attn_viz;
    const LoadLimits limits = load_limits(o.limit_values);
    const std::unique_ptr<ModelTokenizer> tokenizer =
        o.tokenizer.empty() ? read_model_tokenizer(open_model_files(o.model, limits), "", 0, limits)
                            : read_tokenizer_file(o.tokenizer, 0, limits);
    bool first = true;
    auto print = [&](const TokenizedText& tokenized, const std::string& where) {
        if (o.json) {
            std::printf("%s\n", tokenized_json(tokenized).dump().c_str());
            return;
        }
        std::printf("%s%s%s%s", first ? "" : "\n", where.c_str(), where.empty() ? "" : ": ",
                    token_table(tokenized).c_str());
        first = false;
    };
    if (o.inputs.empty()) {
        check_tokenizing_memory(o.text.size() + o.text_pair.value_or("").size(), limits.memory_budget, "--text");
        print(o.text_pair ? tokenize_pair(*tokenizer, o.text, *o.text_pair) : tokenize_text(*tokenizer, o.text), "");
    } else {
        for_each_tokenized_input(o.inputs, *tokenizer, limits, print);
    }
    return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "tokenize", declare_tokenize_options, tokenize);
}

}  // namespace attn_viz_cli
