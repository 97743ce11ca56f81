// Two encoder-decoders on one source and target, stack by stack, and at the decoders' outputs.
#include "compare_seq2seq.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "compare_report.hpp"
#include "compare_summary.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "findings.hpp"
#include "hf_seq2seq_checkpoint.hpp"
#include "json_text.hpp"
#include "model_seq2seq.hpp"
#include "model_tokenizer_file.hpp"
#include "provenance.hpp"
#include "ranked_compare.hpp"
#include "seq2seq_model.hpp"
#include "stats_report.hpp"

namespace attn_viz_cli {
namespace {

using attn_viz::Seq2SeqStack;

// Stack k's LayerResults of `run`.
std::vector<const attn_viz::LayerResult*> stack_layers(const attn_viz::Seq2SeqRun& run, Seq2SeqStack stack) {
    const std::vector<attn_viz::LayerResult>& layers = stack == Seq2SeqStack::encoder   ? run.encoder
                                                       : stack == Seq2SeqStack::decoder ? run.decoder
                                                                                        : run.cross;
    std::vector<const attn_viz::LayerResult*> result;
    for (const attn_viz::LayerResult& layer : layers) result.push_back(&layer);
    return result;
}

// Stack k's attention weights of `weights`.
std::vector<const attn_viz::LayerWeights*> stack_weights(const attn_viz::Seq2SeqWeights& weights, Seq2SeqStack stack) {
    std::vector<const attn_viz::LayerWeights*> result;
    for (const attn_viz::BlockWeights& b : weights.encoder)
        if (stack == Seq2SeqStack::encoder) result.push_back(&b.attention);
    for (const attn_viz::DecoderBlockWeights& b : weights.decoder)
        if (stack != Seq2SeqStack::encoder)
            result.push_back(stack == Seq2SeqStack::decoder ? &b.block.attention : &b.cross_attention);
    return result;
}

// "cross L1H0".
std::string stack_head_name(const StackComparison& s, size_t n) {
    return fmt::format("{} {}", s.stack, attn_viz::head_tag(s.heads.first.head_ids[n]));
}

}  // namespace

bool is_seq2seq_folder(const std::string& path, const attn_viz::LoadLimits& limits) {
    const attn_viz::ModelFiles files = attn_viz::open_model_files(path, limits);
    return files.format == attn_viz::ModelFormat::hf_folder && attn_viz::is_seq2seq_model_type(files.config.model_type);
}

Seq2SeqComparison compare_seq2seq_models(const std::string& a, const std::string& b, const ModelCompareInput& input,
                                         const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    if (input.generate > 0)
        throw Error(ErrorKind::usage,
                    "compare: --generate is not built for encoder-decoders: give the target both decoders read "
                    "(--target-text or --target-tokens)");
    if (input.target_text.empty() && !input.target_token_ids)
        throw Error(
            ErrorKind::usage,
            "compare of two encoder-decoder models needs the decoder's input: --target-text or --target-tokens");
    // Step 1: both folders of one shape, the tokenizer, the source and target ids.
    const ModelFiles files_a = open_model_files(a, limits), files_b = open_model_files(b, limits);
    Seq2SeqWeights weights_a = read_hf_seq2seq_folder(files_a.path, files_a.config, limits);
    Seq2SeqWeights weights_b = read_hf_seq2seq_folder(files_b.path, files_b.config, limits);
    const ModelConfig &ca = weights_a.config.blocks, &cb = weights_b.config.blocks;
    if (ca.d_model != cb.d_model || ca.n_layers != cb.n_layers ||
        weights_a.config.n_decoder_layers != weights_b.config.n_decoder_layers || ca.n_heads != cb.n_heads ||
        ca.head_dim != cb.head_dim || ca.vocab_size != cb.vocab_size)
        fail_input(b, fmt::format("a different architecture from {} (d_model, encoder or decoder layers, heads, head "
                                  "size or vocabulary)",
                                  a));
    const std::unique_ptr<ModelTokenizer> tokenizer =
        read_model_tokenizer(files_a, input.tokenizer, ca.vocab_size, limits);
    const int64_t max_tokens = std::min(ca.max_tokens, cb.max_tokens);
    const std::vector<int> source =
        seq2seq_ids(input.text, input.token_ids, *tokenizer, ca.vocab_size, max_tokens, "--text", "--tokens");
    const std::vector<int> target = seq2seq_ids(input.target_text, input.target_token_ids, *tokenizer, ca.vocab_size,
                                                max_tokens, "--target-text", "--target-tokens");

    // Step 2: both forward passes; each stack's heads compared, then the decoders' outputs.
    Seq2SeqModel model_a(*options.backend, std::move(weights_a)), model_b(*options.backend, std::move(weights_b));
    const Seq2SeqRun run_a = model_a.run(source, target), run_b = model_b.run(source, target);
    Seq2SeqComparison result;
    for (Seq2SeqStack stack : seq2seq_stacks) {
        // Token ids feed the duplicate-token and induction scores: self-attention only, as the report does.
        const std::vector<int>& ids = stack == Seq2SeqStack::encoder ? source : target;
        const std::vector<int64_t> tokens =
            stack == Seq2SeqStack::cross ? std::vector<int64_t>{} : std::vector<int64_t>(ids.begin(), ids.end());
        StackComparison s{seq2seq_stack_name(stack), {}, {}};
        s.heads = compare_runs(stack_layers(run_a, stack), stack_weights(model_a.weights(), stack),
                               stack_layers(run_b, stack), stack_weights(model_b.weights(), stack), tokens, options);
        s.top1 = top1_agreement(stack_layers(run_a, stack), stack_layers(run_b, stack));
        result.stacks.push_back(std::move(s));
    }
    result.output = compare_outputs(run_a.logits, run_b.logits, target, tokenizer->vocab_size());
    return result;
}

int report_seq2seq_comparison(const Seq2SeqComparison& m, const Seq2SeqCompareOutput& request) {
    using namespace attn_viz;
    std::vector<std::vector<double>> metrics;
    std::vector<CompareSummary> summaries;
    const attn_viz::ComparedNames names = attn_viz::compared_names(request.inputs[0], request.inputs[1]);
    for (const StackComparison& s : m.stacks) {
        metrics.push_back(comparison_metric(s.heads, request.metric));
        summaries.push_back(summarize_comparison(s.heads, metrics.back(), request.metric, s.top1, request.fail_above));
    }
    if (!request.output.out.empty()) {
        OutputDir out(request.output.out, request.output.force);
        out.protect_inputs(request.inputs);
        nlohmann::json doc = {
            {"format", compare_format}, {"heads", nlohmann::json::array()}, {"stacks", nlohmann::json::object()}};
        for (size_t k = 0; k < m.stacks.size(); ++k) {
            const StackComparison& s = m.stacks[k];
            nlohmann::json stack = comparison_json(s.heads);
            for (size_t n = 0; n < stack["heads"].size(); ++n) {
                nlohmann::json head = stack["heads"][n];
                head["stack"] = s.stack;
                head["top1_agreement"] = json_number(s.top1[n]);
                doc["heads"].push_back(std::move(head));
            }
            stack.erase("heads");
            stack.erase("format");
            stack["summary"] = compare_summary_json(summaries[k], s.heads, metrics[k], s.top1);
            doc["stacks"][s.stack] = std::move(stack);
            write_comparison_pictures(out, s.heads, s.top1, names, fmt::format(" ({})", s.stack),
                                      fmt::format("{}/", s.stack));
        }
        doc["output"] = output_comparison_json(m.output, nullptr);
        doc["provenance"] = run_provenance();
        write_file_atomically(out.file("compare.json"), json_file_text(doc, 1));
        out.commit();
    }
    if (!request.output.quiet) {
        for (size_t k = 0; k < m.stacks.size(); ++k) {
            const StackComparison& s = m.stacks[k];
            std::fputs(
                fmt::format("{}:\n{}{}\n", s.stack, compare_summary_text(summaries[k], s.heads, metrics[k], s.top1),
                            ranked_comparison_table(s.heads, s.top1))
                    .c_str(),
                stdout);
        }
        std::fputs(attn_viz::output_comparison_line(m.output).c_str(), stdout);
    }
    int status = 0;
    for (size_t k = 0; k < m.stacks.size(); ++k)
        for (int64_t n : summaries[k].failing) {
            std::fprintf(stderr, "attn-viz: %s: %s %.6g exceeds %g\n",
                         stack_head_name(m.stacks[k], static_cast<size_t>(n)).c_str(), request.metric.c_str(),
                         metrics[k][static_cast<size_t>(n)], request.fail_above);
            status = 1;
        }
    return status;
}

}  // namespace attn_viz_cli
