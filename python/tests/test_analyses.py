"""Model's whole-model analyses (attn_viz/analyses.py over lib/session's catalog) against the CLI:
the same stats.json entries (numbers to 1e-9) and the same files, read as arrays; and their errors."""
import json
import os

import numpy as np
import pytest

import attn_viz
from conftest import assert_same_json, cli, cli_stats, shared_model

TEXT = "Lily saw a red ball. Lily saw a red"


@pytest.fixture(scope="module")
def stories():
    return attn_viz.Model(shared_model("stories260K-hf"))


def cli_run(tmp_path, *options):
    out = tmp_path / "cli"
    cli("model", "-q", "--model", shared_model("stories260K-hf"), "--out", str(out), *options)
    return out, cli_stats(out)


@pytest.mark.parametrize("options,call", [
    (["--text", TEXT, "--ablate", "L1H3,L2H0-2,L4H4", "--ablate-mode", "mean"],
     lambda m: m.ablate(text=TEXT, heads="L1H3,L2H0-2,L4H4", mode="mean")),
    (["--text", TEXT, "--logit-attribution", "--target", '" b"'],
     lambda m: m.logit_attribution(text=TEXT, target=" b")),
    (["--text", TEXT, "--logit-attribution"], lambda m: m.logit_attribution(text=TEXT)),
    (["--text", TEXT, "--patch-from", "Lily had a red ball. Lily had a red", "--patch-metric", "logit-diff:300,301"],
     lambda m: m.patch(clean=TEXT, corrupted="Lily had a red ball. Lily had a red", metric="logit-diff:300,301")),
    (["--text", TEXT, "--composition"], lambda m: m.composition()),
    (["--text", TEXT, "--rollout", "--flow"], lambda m: m.analyze(["rollout", "flow"], text=TEXT)),
    (["--text", TEXT, "--qk-attribution", "L4H4,L3H5", "--query-position", "13", "--key-position", "6"],
     lambda m: m.qk_attribution("L4H4,L3H5", text=TEXT, query_position=13, key_position=6)),
    (["--text", TEXT, "--qk-attribution", "L4H4"], lambda m: m.qk_attribution("L4H4", text=TEXT)),
])
def test_each_analysis_equals_the_cli(stories, tmp_path, options, call):
    out, stats = cli_run(tmp_path, *options)
    result = call(stories)
    assert result["stats"], "no analysis ran"
    for key, section in result["stats"].items():
        assert_same_json(section, stats[key], key)
    for relative, array in result["arrays"].items():
        path = out / relative
        if relative.endswith(".npy"):
            np.testing.assert_array_equal(array, np.load(path))
        else:
            with open(path, encoding="utf-8") as f:
                assert len(f.read().splitlines()) == len(next(iter(array.values()))) + 1
    assert sorted(result["files"]) == sorted(
        rel for rel in result["files"] if os.path.exists(out / rel)), "a file the CLI did not write"


def test_arrays_are_the_files_as_numbers(stories):
    result = stories.ablate(text=TEXT, heads="all")
    table = result["arrays"]["ablation.csv"]
    d = stories.description
    assert len(table["layer"]) == d["n_layers"] * d["n_heads"]
    ranked = result["stats"]["ablation"]["heads"]
    assert len(ranked) == len(table["layer"])
    assert np.all(np.isfinite(table["delta_loss"]))
    rollout = stories.rollout(ids=[1, 403, 407, 261, 300])["arrays"]["rollout.npy"]
    assert rollout.shape == (d["n_layers"], 5, 5)
    np.testing.assert_allclose(rollout.sum(axis=-1), 1, atol=1e-5)


def test_out_keeps_the_files(stories, tmp_path):
    out = tmp_path / "kept"
    result = stories.composition(out=str(out))
    assert (out / "composition.csv").is_file()
    assert result["files"]["composition.csv"] == f"{out}/composition.csv"
    with pytest.raises(attn_viz.Error, match="earlier"):
        stories.composition(out=str(out))
    stories.composition(out=str(out), force=True)


def test_progress_is_told_and_can_stop_the_run(stories):
    seen = []
    stories.ablate(text=TEXT, heads="L0H0-3", progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (4, 4)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        stories.ablate(text=TEXT, progress=stop)


def test_generate_equals_the_cli(stories):
    done = cli("model", "-q", "--model", shared_model("stories260K-hf"), "--text", "Once upon a time", "--generate",
               "12", "--json")
    assert stories.generate(text="Once upon a time", tokens=12) == json.loads(done.stdout)["generation"]


@pytest.mark.parametrize("call,message", [
    (lambda m: m.analyze(["ablate heads"], text=TEXT), "no analysis is called 'ablate heads'"),
    (lambda m: m.analyze([("ablation", {"head": "L0H1"})], text=TEXT), "ablation: no option 'head'; it takes heads"),
    (lambda m: m.ablate(text=TEXT, heads="L9H0"), "ablation: heads: "),
    (lambda m: m.ablate(text=TEXT, mode="half"), "ablation: mode: "),
    (lambda m: m.patch(clean=TEXT, corrupted="Lily"), "patching: the corrupted input has"),
    (lambda m: m.patch(clean=TEXT), "patching: give one of corrupted_text or corrupted_ids"),
    (lambda m: m.logit_attribution(text=TEXT, target=1.5), "logit attribution: target is neither"),
    (lambda m: m.rollout(), "give one of text or ids"),
    (lambda m: m.analyze(["flow", "flow"], text=TEXT), "flow: asked for twice"),
    (lambda m: m.analyze(["qk_attribution"], text=TEXT), "qk attribution: give the heads to attribute"),
    (lambda m: m.qk_attribution("L4H4", text=TEXT, query_position=99), "qk attribution: query position 99 is outside"),
    (lambda m: m.qk_attribution("L4H4", text=TEXT, key_position=-1), "qk attribution: key_position is not a token"),
])
def test_errors_name_the_analysis_and_option(stories, call, message):
    with pytest.raises(attn_viz.Error, match=None) as error:
        call(stories)
    assert message in str(error.value)
