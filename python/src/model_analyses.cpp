// Model._analyze: the catalog's whole-model analyses (lib/session/analysis_catalog.hpp) on one
// input, as `attn-viz model --ablate ... --logit-attribution ...` runs them: each named by its
// key with its options (analysis_spec.hpp), refused by its obstacle, run on the forward pass
// (with logits when one reads them) into a staged folder (`out`, or one that keeps nothing).
// Returns the stats.json entries and the files' arrays; attn_viz/analyses.py gives it its
// Python form (Model.analyze, Model.ablate, ...).
#include <pybind11/stl.h>

#include "analysis_spec.hpp"
#include "errors.hpp"
#include "generation.hpp"
#include "interrupt.hpp"
#include "model.hpp"
#include "run_folder.hpp"

namespace py = pybind11;

namespace attn_viz_python {
namespace {

// The analyses of `specs_json` ([[key, {options}], ...]) for `m`, each checked against its
// input `ids` (none for analyses of the weights alone).
attn_viz::AnalysisSet analyses_of(const Model& m, const std::string& specs_json, const std::vector<int>& ids) {
    const nlohmann::json specs = nlohmann::json::parse(specs_json);
    attn_viz::AnalysisSet set;
    for (const nlohmann::json& spec : specs) {
        std::unique_ptr<attn_viz::WholeModelAnalysis> analysis = attn_viz::analysis_from_spec(
            spec.at(0).get<std::string>(), spec.at(1), m.session->model(), m.session->tokenizer());
        const std::string name(analysis->traits().name);
        if (set.asks(analysis->traits().kind))
            throw attn_viz::Error(attn_viz::ErrorKind::usage, name + ": asked for twice");
        if (const std::string obstacle = analysis->obstacle(m.session->model(), ids); !obstacle.empty())
            throw attn_viz::Error(attn_viz::ErrorKind::usage, name + obstacle);
        set.add(std::move(analysis));
    }
    return set;
}

// Whether any analysis of `specs_json` reads a forward pass (all but the weights' own).
bool reads_a_run(const std::string& specs_json) {
    for (const nlohmann::json& spec : nlohmann::json::parse(specs_json))
        if (attn_viz::analysis_traits_named(spec.at(0).get<std::string>()).input != attn_viz::AnalysisInput::weights)
            return true;
    return false;
}

// {"stats": {...}, "files": {relative path: staged path}} of one analysis run (the staged paths
// valid until `dir` goes).
py::dict analysis_output(const nlohmann::json& stats, const attn_viz::OutputDir& dir) {
    py::dict files;
    for (const auto& [relative, staged] : dir.staged_files()) files[py::str(relative)] = staged;
    py::dict out;
    out["stats"] = json_to_python(stats.dump());
    out["files"] = files;
    return out;
}

// read(files) reads the staged files (attn_viz/analyses.py: the .npy and .csv as arrays) while
// they exist: before a folder that keeps nothing is removed, or from the committed `out`.
py::object analyze(const std::shared_ptr<Model>& m, const std::string& specs_json,
                   const std::optional<std::string>& text, const std::optional<std::vector<int>>& ids,
                   const std::optional<std::string>& out, bool force, py::object progress, py::object read) {
    if (m->session->encoder_decoder())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path + ": the analyses of an encoder-decoder (bart, t5) run from the CLI only");
    if (out) path_argument("out", *out);
    PythonSteps steps(std::move(progress));
    const attn_viz::StepCallback on_step = steps.callback();
    // Every long step reports to the one progress function ("ablated head" 3 of 12, ...).
    const attn_viz::ProgressFactory progress_factory = [&on_step](const std::string&) { return on_step; };
    nlohmann::json stats;
    std::unique_ptr<attn_viz::OutputDir> dir;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        const bool needs_run = reads_a_run(specs_json);
        const std::vector<int> input =
            needs_run || text || ids ? model_ids(*m, text, ids, "text", "ids") : std::vector<int>{};
        const attn_viz::AnalysisSet set = analyses_of(*m, specs_json, input);
        dir = out ? std::make_unique<attn_viz::OutputDir>(*out, force)
                  : std::make_unique<attn_viz::OutputDir>(attn_viz::OutputDir::KeepNothing{});
        const attn_viz::ReportOptions report = report_options(m->threads);
        attn_viz::Timings timings;
        attn_viz::AnalysisContext ctx{
            m->session->model(), m->session->backend(), m->session->tokenizer(), report, *dir, timings,
            progress_factory};
        if (needs_run) {
            const attn_viz::ModelRun run = m->session->model().run(input, {.logits = set.reads_logits()});
            stats = set.run_all(ctx, run);
        } else {
            stats = set.run_weight_analyses(ctx);
        }
        if (out) dir->commit();
    }
    py::dict result = analysis_output(stats, *dir);
    if (out)  // committed: the files are in `out` now
        for (const auto& [relative, staged] : dir->staged_files())
            result["files"][py::str(relative)] = *out + "/" + relative;
    result["arrays"] = read(result["files"]);
    return std::move(result);
}

// Model.generate: the greedy continuation of `text` or `ids`, as `attn-viz model --generate N`
// prints it (its --json "generation" object).
py::object generate_tokens(const std::shared_ptr<Model>& m, const std::optional<std::string>& text,
                           const std::optional<std::vector<int>>& ids, int tokens, py::object progress) {
    if (m->session->encoder_decoder())
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              m->path + ": an encoder-decoder's greedy output is generated from the CLI only");
    if (tokens < 0 || tokens > 4096)
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "tokens: " + std::to_string(tokens) + " is not in 0..4096");
    PythonSteps steps(std::move(progress));
    const attn_viz::StepCallback on_token = steps.callback();
    nlohmann::json generation;
    {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(m->mutex);
        if (const std::string no_logits = attn_viz::logits_obstacle(m->session->model()); !no_logits.empty())
            throw attn_viz::Error(attn_viz::ErrorKind::usage, "generate" + no_logits);
        const std::vector<int> prompt = model_ids(*m, text, ids, "text", "ids");
        const attn_viz::Generation g =
            attn_viz::generate(m->session->model(), m->session->tokenizer(), prompt, tokens, on_token);
        generation = attn_viz::generation_json(g, m->session->tokenizer().decode(prompt));
    }
    return json_to_python(generation.dump());
}

}  // namespace

void bind_model_analyses(py::class_<Model, std::shared_ptr<Model>>& model) {
    model.def("_analyze", &analyze, py::arg("specs_json"), py::arg("text") = py::none(), py::arg("ids") = py::none(),
              py::arg("out") = py::none(), py::arg("force") = false, py::arg("progress") = py::none(), py::arg("read"),
              "The whole-model analyses [[key, {options}], ...] on `text` or `ids` (attn_viz.Model.analyze)");
    model.def("generate", &generate_tokens, py::arg("text") = py::none(), py::arg("ids") = py::none(),
              py::arg("tokens") = 16, py::arg("progress") = py::none(),
              "The model's greedy continuation of `tokens` tokens after `text` or `ids`, as `attn-viz model "
              "--generate N --json` gives it: {prompt, continuation, tokens (the ids), requested, stop}");
}

}  // namespace attn_viz_python
