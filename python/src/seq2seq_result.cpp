// attn_viz.Seq2SeqResult: one run of an encoder-decoder (bart, t5) as `attn-viz model --text
// --target-text` makes it (app/model_seq2seq.cpp): the three stacks' maps, their statistics and
// files from lib's seq2seq_report, the same code as the CLI's.
#include <pybind11/stl.h>

#include "error.hpp"
#include "json_text.hpp"
#include "model.hpp"
#include "numpy_tensor.hpp"
#include "run_folder.hpp"
#include "seq2seq_report.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

struct Seq2SeqResult {
    std::shared_ptr<Model> owner;  // whose weights report.weights points into
    attn_viz::Seq2SeqRun run;
    attn_viz::Seq2SeqReportInput report;  // report.run points at `run`
    std::mutex mutex;                     // the analysis is made with the GIL released
    std::optional<attn_viz::Seq2SeqAnalysis> analyzed;
    py::dict stacks;  // "encoder", "decoder", "cross": the arrays, made on first use
};

// Stack `stack`'s maps as --dump-attention's P.`stack`.npy, not copied.
py::object stack_attention(Seq2SeqResult& r, const std::string& stack) {
    if (r.stacks.contains(stack)) return r.stacks[stack.c_str()];
    attn_viz::Tensor stacked;
    {
        py::gil_scoped_release released;
        stacked = attn_viz::seq2seq_stacked_attention(r.run, stack);
    }
    py::object array = to_numpy(std::move(stacked));
    r.stacks[stack.c_str()] = array;
    return array;
}

// stats.json's document, through JSON text, so the dict is exactly what the file holds.
py::object stats(Seq2SeqResult& r) {
    std::string text;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(r.mutex);
        if (!r.analyzed) r.analyzed = attn_viz::analyze_seq2seq(r.report, report_options(r.owner->threads));
        text = attn_viz::dump_json(attn_viz::seq2seq_stats(r.report, *r.analyzed));
    }
    return json_to_python(text);
}

// The three stacks' folders and the top stats.json into `out`, as the CLI's --out writes them.
void write(Seq2SeqResult& r, const std::string& out, bool force, bool html) {
    write_run_folder(r.mutex, out, force, html, r.owner->threads,
                     [&](attn_viz::OutputDir& dir, const attn_viz::ReportOptions& options, attn_viz::Timings& timings) {
                         attn_viz::write_seq2seq_report(dir, r.report, options, timings);
                     });
}

}  // namespace

py::object run_seq2seq(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
                       const std::optional<std::vector<int>>& ids, const std::optional<std::string>& target_text,
                       const std::optional<std::vector<int>>& target_ids, py::object progress) {
    if (!progress.is_none())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path + ": progress is not available for an encoder-decoder run");
    auto r = std::make_shared<Seq2SeqResult>();
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        const std::vector<int> source = model_ids(*m, text, ids, "text", "ids");
        const std::vector<int> target = model_ids(*m, target_text, target_ids, "target_text", "target_ids");
        r->run = m->session->seq2seq().run(source, target);
        attn_viz::Seq2SeqReportInput& report = r->report;
        report.run = &r->run;
        report.weights = &m->session->seq2seq().weights();
        report.backend = &m->session->backend();
        report.source_tokens = m->session->tokenizer().labels(source);
        report.target_tokens = m->session->tokenizer().labels(target);
        report.extra_stats = {{"model_type", m->session->seq2seq().weights().config.blocks.architecture}};
        report.model_description = attn_viz::seq2seq_model_description(m->path, m->session->seq2seq().weights().config);
        report.source_text =
            text ? *text : m->session->tokenizer().decode(source);  // ids: decoded, as the CLI's --tokens
        report.target_text = target_text ? *target_text : m->session->tokenizer().decode(target);
    }
    r->owner = m;
    return py::cast(r);
}

void bind_seq2seq_result(py::module_& m) {
    py::class_<Seq2SeqResult, std::shared_ptr<Seq2SeqResult>>(
        m, "Seq2SeqResult",
        "The attention of one encoder-decoder run: the encoder's, the decoder's and the cross attention")
        .def_property_readonly(
            "encoder", [](Seq2SeqResult& r) { return stack_attention(r, "encoder"); },
            "Encoder self-attention, float32 [L_enc, H, S, S], not copied")
        .def_property_readonly(
            "decoder", [](Seq2SeqResult& r) { return stack_attention(r, "decoder"); },
            "Decoder self-attention (causal), float32 [L_dec, H, T, T], not copied")
        .def_property_readonly(
            "cross", [](Seq2SeqResult& r) { return stack_attention(r, "cross"); },
            "Cross attention (target tokens down, source tokens across), float32 [L_dec, H, T, S], not copied")
        .def_property_readonly(
            "source_tokens", [](const Seq2SeqResult& r) { return r.report.source_tokens; }, "The S source labels")
        .def_property_readonly(
            "target_tokens", [](const Seq2SeqResult& r) { return r.report.target_tokens; }, "The T target labels")
        .def_property_readonly(
            "source_ids", [](const Seq2SeqResult& r) { return r.run.source; }, "The S source ids")
        .def_property_readonly(
            "target_ids", [](const Seq2SeqResult& r) { return r.run.target; }, "The T target ids")
        .def("stats", &stats,
             "Statistics of every head of the three stacks, each with its \"stack\": the document the CLI writes as "
             "the top "
             "stats.json (without provenance)")
        .def("write", &write, py::arg("out"), py::arg("force") = false, py::arg("html") = false,
             "Writes encoder/, decoder/, cross/ and the top stats.json into the folder `out` as the CLI's --out does "
             "(report.html with html=True)");
}

}  // namespace attn_viz_python
