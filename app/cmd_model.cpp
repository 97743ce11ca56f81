// attn-viz model: a whole model (WholeModel: Llama family, GPT-2, GPT-NeoX, BERT) forward over a text, every
// layer's heads drawn and analysed: load the model and the token ids, check the run fits the
// memory budget, run the forward pass, write the report, commit, print. Or over a corpus of texts
// (--inputs), every statistic aggregated.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "corpus_options.hpp"
#include "error.hpp"
#include "generation.hpp"
#include "head_selection_options.hpp"
#include "input_limits.hpp"
#include "model_analyses.hpp"
#include "model_analyses_summary.hpp"
#include "model_options.hpp"
#include "model_request.hpp"
#include "model_seq2seq.hpp"
#include "model_seq2seq_corpus.hpp"
#include "model_session.hpp"
#include "model_stream.hpp"
#include "option_checks.hpp"
#include "output_options.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "report_options.hpp"
#include "run_output.hpp"
#include "run_steps.hpp"
#include "supported_models.hpp"
#include "token_file.hpp"

namespace attn_viz_cli {
namespace {

void declare_model_options(CLI::App* cmd, ModelOptions& o) {
    cmd->description(
        "Run a whole model (Hugging Face folder of the Llama, GPT-2, GPT-NeoX/Pythia or BERT family, GGUF or llama2.c "
        "checkpoint) over a text and draw and analyse every layer's "
        "heads (layer_NN/head_NN.png, stats.json over all heads); or over a corpus (--inputs), every "
        "statistic aggregated.");
    cmd->add_option("--checkpoint,--model", o.checkpoint,
                    fmt::format("Hugging Face model folder (config.json model_type {}; model.safetensors or its "
                                "shards; tokenizer.json or the legacy vocabulary files), GGUF model of architecture "
                                "{} (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K or Q8_K "
                                "tensors), or llama2.c checkpoint (e.g. ../shared/models/stories260K/stories260K.bin)",
                                attn_viz::listed_with_or(attn_viz::supported_model_types()),
                                attn_viz::listed_with_or(attn_viz::supported_gguf_architectures())))
        ->required()
        ->check(CLI::ExistingPath);
    cmd->add_option(
           "--tokenizer", o.tokenizer,
           "llama2.c tokenizer (e.g. ../shared/models/stories260K/tok512.bin), or a Hugging Face tokenizer.json or "
           "folder; a GGUF model's or a model folder's own is used without it")
        ->check(CLI::ExistingPath);
    auto* text = cmd->add_option("--text", o.text,
                                 "Text to run (encoded as the model's tokenizer does: BOS first for llama2.c and "
                                 "Llama, [CLS] ... [SEP] for BERT)")
                     ->check(refuse_empty("is an empty text"));
    auto* text_pair =
        cmd->add_option("--text-pair", o.text_pair,
                        "A text pair's second text (BERT-style encoders): --text and this encoded as the model's "
                        "tokenizer encodes a pair ([CLS] A [SEP] B [SEP]), segment B's tokens of token type 1, as "
                        "transformers' tokenizer(a, b); stats.json's sentence_b_start says where B starts")
            ->check(refuse_empty("is an empty text"));
    text_pair->needs(text);
    auto* tokens = cmd->add_option("--tokens", o.token_ids, "Token ids instead of text: 1,403,407");
    auto* induction = cmd->add_option("--induction", o.induction,
                                      "Induction test: BOS (if the tokenizer has one) then N random tokens repeated "
                                      "twice; reports duplicate-token and "
                                      "induction scores for every head")
                          ->check(CLI::Range(1, 100000));
    CLI::Option* corpus =
        add_corpus_options(cmd, o.corpus,
                           "Corpus mode: a text file of one text per line, a .jsonl file with one {\"text\": \"...\"} "
                           "or {\"tokens\": [1, 403, ...]} per line, or a folder of such JSON files (as tokenize "
                           "--inputs takes them; an encoder-decoder's lines add \"target_text\" or "
                           "\"target_tokens\", its decoder input); every statistic is aggregated "
                           "(mean and std per head) with memory independent of their number");
    text->excludes(tokens)->excludes(induction)->excludes(corpus);
    tokens->excludes(induction)->excludes(corpus);
    induction->excludes(corpus);
    auto* target_text =
        cmd->add_option("--target-text", o.target_text,
                        "Encoder-decoder models (bart, t5): the decoder's input as text, teacher forced as given (not "
                        "shifted); --text is then the encoder's source")
            ->check(refuse_empty("is an empty text"));
    auto* target_tokens = cmd->add_option("--target-tokens", o.target_token_ids,
                                          "Encoder-decoder models: the decoder's input as token ids");
    target_text->excludes(target_tokens)->excludes(corpus);  // an encoder-decoder corpus's lines give their targets
    target_tokens->excludes(corpus);
    cmd->add_option("--seed", o.seed, "Seed of --induction's random tokens")
        ->capture_default_str()
        ->transform(whole_number_u64());
    cmd->add_flag("--truncate", o.truncate,
                  "Cut a text (--text, --patch-from, a corpus's text lines) longer than the model's context to it, "
                  "as transformers' truncation=True does: the special tokens kept (BOS, [CLS] ... [SEP]), the text's "
                  "last tokens dropped; stats.json's truncated_input records the length before (text pairs and "
                  "token ids are never cut)");
    cmd->add_option("--generate", o.generate,
                    "Also print the model's greedy continuation of N tokens (decoders only: not BERT); for an "
                    "encoder-decoder, the decoder's greedy output from its start token, drawn instead of a target")
        ->check(CLI::Range(0, 4096));
    add_output_options(
        cmd, o.output,
        {"Output directory (created; an earlier run's results there are kept unless --force); optional with "
         "--json, which without it prints the summary and writes nothing",
         false, "Print no progress and no tables (--generate's continuation is still printed)"});
    cmd->add_option("--dump-attention", o.report.dump_attention,
                    "Also write every layer's attention as float32 .npy [L, H, T, T]")
        ->check(refuse_empty("names no file"));
    cmd->add_option("--dump-output", o.report.dump_output,
                    "Also write the last layer's attention output as float32 .npy [T, D]")
        ->check(refuse_empty("names no file"));
    add_report_options(cmd, o.report, o.report_values);
    add_model_analysis_options(cmd, o.analyses);
    add_scripting_options(cmd, o.json, o.stats_only);
    add_input_limit_options(cmd, o.limit_values);
    auto* layers =
        cmd->add_option("--layers", o.layers,
                        "Draw only these layers' heads (pictures, overview rows, report.html; statistics stay over all "
                        "heads): layers and ranges, e.g. 3,5-7")
            ->check(refuse_empty("names no layer"));
    auto* heads =
        cmd->add_option(
               "--heads", o.heads,
               "Draw only these heads (with --layers: those too): LxHy, LxHa-b, x:y or x:a-b, e.g. L3H1,L4H0-7")
            ->check(refuse_empty("names no head"));
    layers->excludes(corpus);
    heads->excludes(corpus);
    cmd->add_flag("--timings", o.timings, "Print the time of each stage on stderr");
    cmd->add_flag(
           "--stream-layers", o.stream_layers,
           "Write each layer's pictures, statistics and dump slice as soon as the layer is done and release its maps "
           "(memory of one layer; pair matrices within layers only; docs/streaming.md); automatic when the whole run "
           "exceeds the memory budget")
        ->excludes(corpus);
    cmd->parse_complete_callback([&o, text, tokens, induction, corpus] {
        if (!*text && !*tokens && !*induction && !*corpus)
            throw CLI::RequiredError("one of --text, --tokens, --induction or --inputs");
        check_corpus_analyses(o.analyses, corpus->count() > 0);
        if (*corpus) {
            bool single_input_only = o.generate > 0;
            for (attn_viz::AnalysisKind kind : asked_analyses(o.analyses))
                single_input_only = single_input_only || !attn_viz::analysis_traits(kind).over_corpus;
            check_corpus_mode(o.report, o.report_values, single_input_only,
                              "--generate, " + single_input_analysis_flags());
        }
        check_out_or_json(o.output, o.json, written_files(o.report, o.report_values, o.corpus));
    });
}

// The model's input as the session takes it (none in corpus mode, which reads its sequences one
// at a time): --induction, --tokens, --text or --text with --text-pair.
attn_viz::ModelInput model_input(const ModelOptions& o) {
    attn_viz::ModelInput input;
    if (o.induction > 0) {
        input.induction = o.induction, input.seed = o.seed;
    } else if (o.token_ids) {
        input.ids = attn_viz::parse_token_ids(*o.token_ids, "--tokens");
    } else if (o.corpus.path.empty()) {
        input.text = o.text, input.text_pair = o.text_pair, input.truncate = o.truncate;
    }
    return input;
}

// Warns on stderr when --text holds the separator a text pair's template puts between its texts
// ("[SEP]"): typed in, it runs as one segment (every token of type 0), which is not the pair
// BERT was trained on.
void warn_separator_in_text(const ModelOptions& o, const attn_viz::ModelTokenizer& tokenizer) {
    const std::string separator = tokenizer.pair_separator();
    if (separator.empty() || o.text.find(separator) == std::string::npos) return;
    const std::string consequence =
        o.text_pair ? "it runs as a token of the first text"
                    : "the text runs as one segment (every token of type 0); give the second text with --text-pair to "
                      "run a text pair as the model's tokenizer encodes one";
    std::fprintf(stderr, "attn-viz: warning: --text holds the model's separator token %s: %s\n", separator.c_str(),
                 consequence.c_str());
}

// The hooks of a run on a terminal: progress lines unless -q, warnings on stderr.
attn_viz::SessionHooks terminal_hooks(bool quiet) {
    return {progress_lines(quiet),
            [](const std::string& line) { std::fprintf(stderr, "attn-viz: warning: %s\n", line.c_str()); }};
}

// report.html's "Input": the text (and how --truncate cut it), or a pair's two texts with where the
// second starts.
std::string input_text(const ModelOptions& o, const attn_viz::ModelInputIds& in) {
    if (in.original_tokens > 0)
        return fmt::format("{} | cut by --truncate from {} to {} tokens", o.text, in.original_tokens, in.ids.size());
    if (!o.text_pair) return o.text;
    return fmt::format("{} | text pair, from token {}: {}", o.text, in.sentence_b_start, *o.text_pair);
}

// --timings' line on a corpus run's passes: "  layer-major       2 batches of at most 16 sequences,
// 310.2 of 17612.0 MB budgeted\n", or nothing for a sequence-major run.
std::string corpus_passes_line(const attn_viz::ModelCorpusPasses& passes, uint64_t memory_budget) {
    if (!passes.layer_major) return "";
    return fmt::format("  layer-major       {} batch{} of at most {} sequences, {:.1f} of {:.1f} MB budgeted\n",
                       passes.batches, passes.batches == 1 ? "" : "es", passes.largest_batch,
                       static_cast<double>(passes.largest_batch_bytes) / (1 << 20),
                       static_cast<double>(memory_budget) / (1 << 20));
}

// An encoder-decoder folder (bart, t5): the options it does not take refused, then its run
// (model_seq2seq.hpp) or its corpus run (model_seq2seq_corpus.hpp).
int run_encoder_decoder(const ModelOptions& o, attn_viz::ModelSession& session, const attn_viz::LoadLimits& limits) {
    const ModelAnalysisOptions& a = o.analyses;
    std::vector<RefusedOption> refused{
        {"--truncate", o.truncate,
         "the source and the decoder input would each need cutting; not built for encoder-decoders"},
        {"--text-pair", o.text_pair.has_value(),
         "a text pair is a BERT-style encoder's input; an encoder-decoder takes --text and its decoder's input"},
        {"--induction", o.induction > 0,
         "the test feeds a repeated random sequence to a decoder-only model; an encoder-decoder's target is given"},
        {"--layers", !o.layers.empty(),
         "layer numbers would be ambiguous across the three stacks; every layer is drawn"},
        {"--heads", !o.heads.empty(), "LxHy names would be ambiguous across the three stacks; every head is drawn"},
        {"--dump-output", !o.report.dump_output.empty(),
         "there are two last outputs (encoder and decoder); --dump-attention writes the three stacks' maps"},
        {"--svg", !o.report_values.svg.empty(),
         "LxHy names would be ambiguous across the three stacks; use the PNGs in encoder/, decoder/, cross/"},
        {"--map norm", o.report.map == attn_viz::PictureMap::norm,
         "the norm-based maps need each stack's value norms, which the encoder-decoder run does not keep"},
        {"--generate with --target-text or --target-tokens",
         o.generate > 0 && (!o.target_text.empty() || o.target_token_ids),
         "--generate makes the target; give one or the other"}};
    for (attn_viz::AnalysisKind kind : asked_analyses(a))
        if (const attn_viz::AnalysisTraits& row = attn_viz::analysis_traits(kind); !row.not_on_encoder_decoder.empty())
            refused.push_back(
                {analysis_flag(kind, a, !o.corpus.path.empty()), true, std::string(row.not_on_encoder_decoder)});
    refuse_for_encoder_decoder(session.model_type(), refused);
    return o.corpus.path.empty() ? run_seq2seq_model(o, session, limits) : run_seq2seq_corpus(o, session, limits);
}

// The forward pass over one input (--text, --tokens or --induction) with every layer's pictures
// and statistics (staged), and the continuation, added to what is printed.
void run_model_once(attn_viz::ModelSession& session, const attn_viz::ModelRequest& request, attn_viz::OutputDir& out,
                    RunOutput& printed, attn_viz::Timings& timings) {
    const attn_viz::ModelOutcome outcome = attn_viz::run_model_request(session, request, out, timings);
    const attn_viz::ModelTokenizer& tokenizer = session.tokenizer();
    const std::vector<int>& ids = request.ids.ids;
    printed.add_text(fmt::format("{} tokens: {}\n", ids.size(), tokenizer.decode(ids)));
    printed.add_analysis(outcome.analysis, "");
    printed.add_analyses(outcome.analyses);
    printed.add_text(picture_hint(outcome.notes, request.report));
    printed.json()["tokens"] = tokenizer.labels(ids);
    if (outcome.generation) {  // --generate: the continuation, on stdout after the table
        const std::string prompt = tokenizer.decode(ids);
        printed.add_result(attn_viz::generation_lines(*outcome.generation, prompt));
        printed.json()["generation"] = attn_viz::generation_json(*outcome.generation, prompt);
    }
}

// Corpus mode: every sequence of the corpus (or of its shard) through the model, one at a time
// or (a streamed model) a batch at a time layer by layer, each sequence's analysis into running
// moments; memory does not depend on the number of sequences. Adds the result to what is printed,
// how the sequences went through the model to `timing_notes`, and returns the run's provenance.
nlohmann::json run_model_corpus(const ModelOptions& o, attn_viz::ModelSession& session,
                                const attn_viz::AnalysisSet& analyses, const attn_viz::LoadLimits& limits,
                                attn_viz::OutputDir& out, RunOutput& printed, attn_viz::Timings& timings,
                                std::string& timing_notes) {
    attn_viz::ModelCorpusRequest request(session, timings);
    CorpusRun corpus_run(o, limits, request.fingerprint(), attn_viz::CorpusLines::json_or_text, true);
    const nlohmann::json entries = request.run(
        analyses, o.report, limits, corpus_run.documents, corpus_run.corpus, terminal_hooks(o.output.quiet),
        [&](int64_t sequences) { corpus_run.sequence_done(sequences); }, out);
    timing_notes += corpus_passes_line(request.passes(), limits.memory_budget);
    return corpus_run.finish(out, printed, entries);
}

// The name of the option that gave the input, for messages about its ids.
const char* input_option(const ModelOptions& o) {
    return o.induction > 0 ? "--induction" : o.token_ids ? "--tokens" : o.text_pair ? "--text-pair" : "--text";
}

int run_model(ModelOptions& o) {
    using namespace attn_viz;
    LoadLimits limits = prepare_run(o);
    limits.truncate_texts = o.truncate;  // a corpus's texts are cut as --text is
    // --stream-layers holds one block at a time whatever the container (a GGUF decoder always does).
    ModelSession session(o.checkpoint, limits, o.stream_layers ? BlockLoading::streamed : BlockLoading::held);
    if (session.encoder_decoder()) return run_encoder_decoder(o, session, limits);
    refuse_target_for_decoder(session.model_type(), !o.target_text.empty() || o.target_token_ids);
    const std::vector<HeadRange> drawn_heads = parse_head_selection(o.layers, o.heads);
    const std::unique_ptr<OutputDir> out_dir =
        open_run_output(o, {o.checkpoint, o.tokenizer, o.corpus.path},
                        {o.report.dump_attention, o.report.dump_output, o.corpus.save_partial});

    // Step 1: the model, the tokenizer and the token ids, and the run's size, all validated
    // before anything is written (a corpus's sequences as they are read).
    Timings timings;
    ModelRequest request;
    request.input = model_input(o);
    {
        Timings::Scope t(timings, "load");
        session.load(o.tokenizer);
        if (o.corpus.path.empty()) {
            if (request.input.text) warn_separator_in_text(o, session.tokenizer());
            request.ids = session.encode(request.input, {"--text", "--text-pair", "--tokens"});
        }
    }
    const WholeModel& model = session.model();
    const AnalysisSet analyses =
        resolve_analyses(o.analyses, session.tokenizer(), session.model(), o.truncate, o.corpus.shard, limits);
    o.report.drawn = select_heads(drawn_heads, model.description().n_layers, model.description().n_heads);
    check_generate(model, o.generate);
    if (o.corpus.path.empty()) {
        const int64_t T = static_cast<int64_t>(request.ids.ids.size());
        // The context first: a larger memory budget cannot help a text the model cannot take.
        session.check_tokens(request.ids.ids, input_option(o));
        o.stream_layers = streams_layers(o.stream_layers, whole_run_options(o.report, o.generate, o.analyses),
                                         model_run_bytes(model, T), limits);
        if (!o.stream_layers) check_model_run_memory(model.description(), T, limits.memory_budget);
        check_model_analyses(o.analyses, analyses, model, request.ids.ids, false);
    } else {
        check_model_analyses(o.analyses, analyses, model, {}, true);
    }

    // Step 2: the forward pass on oneDNN, then every layer's report and the continuation; or
    // each sequence of the corpus through the model, into running sums.
    RunOutput printed("model", o.json, o.output.quiet);
    std::string timing_notes;  // what --timings adds below the stages
    Progress sparse_progress(o.report.sparse_error && o.corpus.path.empty() && progress_wanted(o.output.quiet),
                             "sparse-error layer");
    if (o.corpus.path.empty())  // a corpus's analyses would restart the count at every sequence
        o.report.on_sparse_layer = [&sparse_progress](int64_t done, int64_t total) {
            sparse_progress.update(done, total);
            if (done == total) sparse_progress.finish();
        };
    nlohmann::json provenance;
    if (o.corpus.path.empty()) {
        provenance = run_provenance(o.induction > 0 ? std::optional<uint64_t>(o.seed) : std::nullopt);
        request.analyses = &analyses;
        request.report = o.report;
        request.stream_layers = o.stream_layers;
        request.generate = o.generate;
        request.input_text = input_text(o, request.ids);
        request.provenance = provenance;
        request.hooks = terminal_hooks(o.output.quiet);
        run_model_once(session, request, *out_dir, printed, timings);
    } else {
        provenance = run_model_corpus(o, session, analyses, limits, *out_dir, printed, timings, timing_notes);
    }

    // Step 3: everything moves into place together; then what the user asked to see.
    finish_run(o, *out_dir, timings, printed, provenance, timing_notes + peak_memory_line());
    return 0;
}

}  // namespace

void add_model_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "model", declare_model_options, run_model);
}

}  // namespace attn_viz_cli
