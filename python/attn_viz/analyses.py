"""The whole-model analyses of `attn-viz model` on attn_viz.Model, through the library's analysis
catalog (lib/session): the same computation, the same stats.json entries, the same files.

    model.analyze(["ablation", ("logit_attribution", {"target": " ball"})], text="...")
    model.ablate(text="...", heads="L1H3,L2H0-7", mode="mean")
    model.patch(clean="...", corrupted="...", metric="logit-diff:' ball',' dog'")
    model.logit_attribution(text="...")
    model.composition()
    model.rollout(text="..."), model.flow(text="...")
    model.qk_attribution("L4H4", text="...", query_position=13, key_position=6)

Each returns a dict: "stats", the stats.json entries the CLI writes for the analyses
({"ablation": {...}}); "arrays", the files' contents ("rollout.npy" as a NumPy array,
"ablation.csv" as a dict of columns, numbers as NumPy arrays); "files", where they were written
(`out`) or staged while the call ran (without `out` nothing is kept).
"""
import csv
import json


def _column(values):
    import numpy as np

    try:
        return np.array([float(v) if v != "" else np.nan for v in values])
    except ValueError:
        return values


def _read_files(files):
    import numpy as np

    arrays = {}
    for relative, path in files.items():
        if relative.endswith(".npy"):
            arrays[relative] = np.load(path)
        elif relative.endswith(".csv"):
            with open(path, newline="", encoding="utf-8") as f:
                rows = list(csv.reader(f))
            header, body = rows[0], rows[1:]
            arrays[relative] = {name: _column([row[i] for row in body]) for i, name in enumerate(header)}
    return arrays


def _spec(item):
    if isinstance(item, str):
        return [item, {}]
    if isinstance(item, dict):
        options = dict(item)
        return [options.pop("name"), options]
    name, options = item
    return [name, dict(options)]


def analyze(self, analyses, text=None, ids=None, out=None, force=False, progress=None):
    """Runs `analyses` (names such as "ablation", or (name, {options}) pairs, or dicts with a
    "name") on `text` or token `ids`, as `attn-viz model` runs its analysis options; `out`: keep
    their files there as `--out` does (replaced with `force`). progress(done, total) is called
    as heads are ablated or patched; Ctrl-C stops the run."""
    specs = json.dumps([_spec(item) for item in analyses])
    return self._analyze(specs, text=text, ids=ids, out=out, force=force, progress=progress, read=_read_files)


def _one(self, name, options, text, ids, out, force, progress):
    return analyze(self, [(name, {k: v for k, v in options.items() if v is not None})], text=text, ids=ids,
                   out=out, force=force, progress=progress)


def ablate(self, text=None, ids=None, heads="all", mode="zero", out=None, force=False, progress=None):
    """True head ablation (`--ablate HEADS --ablate-mode MODE`): each head of `heads` ("all",
    "L1H3,L2H0-7") removed and the model rerun from its layer on."""
    return _one(self, "ablation", {"heads": heads, "mode": mode}, text, ids, out, force, progress)


def patch(self, clean=None, corrupted=None, metric="loss", clean_ids=None, corrupted_ids=None, out=None,
          force=False, progress=None):
    """Activation patching (`--patch-from`): every head's output on `clean` replaced by its output
    on `corrupted` (texts, or clean_ids and corrupted_ids); metric "loss" or "logit-diff:A,B"."""
    options = {"corrupted_text": corrupted, "corrupted_ids": corrupted_ids, "metric": metric}
    return _one(self, "patching", options, clean, clean_ids, out, force, progress)


def logit_attribution(self, text=None, ids=None, target=None, out=None, force=False):
    """Direct logit attribution (`--logit-attribution [--target T]`): target a token id or text."""
    return _one(self, "logit_attribution", {"target": target}, text, ids, out, force, None)


def composition(self, out=None, force=False):
    """Q-, K- and V-composition scores from the weights (`--composition`)."""
    return _one(self, "composition", {}, None, None, out, force, None)


def rollout(self, text=None, ids=None, out=None, force=False):
    """Attention rollout across layers (`--rollout`): arrays["rollout.npy"] is [L, T, T]."""
    return _one(self, "rollout", {}, text, ids, out, force, None)


def flow(self, text=None, ids=None, out=None, force=False, progress=None):
    """Attention flow across layers (`--flow`): arrays["flow.npy"] is [L, T, T]."""
    return _one(self, "flow", {}, text, ids, out, force, progress)


def qk_attribution(self, heads, text=None, ids=None, query_position=None, key_position=None, out=None, force=False):
    """QK attribution (`--qk-attribution HEADS [--query-position I --key-position J]`): each head's
    score from the query (default the last token) to the key (default the one it attends to most)
    as query-side x key-side component terms; stats["qk_attribution"] has one entry per head."""
    options = {"heads": heads, "query_position": query_position, "key_position": key_position}
    return _one(self, "qk_attribution", options, text, ids, out, force, None)


def install(model_class):
    for function in (analyze, ablate, patch, logit_attribution, composition, rollout, flow, qk_attribution):
        setattr(model_class, function.__name__, function)
