"""attn_viz.Layer against `attn-viz run` and against a float64 NumPy reference."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import attn_viz
from conftest import SOURCE_DIR, assert_maps_equal, assert_same_json, cli, cli_stats

DEMO_WEIGHTS = os.path.join(SOURCE_DIR, "data", "demo", "weights.json")
DEMO_INPUT = os.path.join(SOURCE_DIR, "data", "demo", "input.json")


@pytest.fixture(scope="module")
def demo_cli(tmp_path_factory):
    """`attn-viz run` on the demo layer: its output folder and attention dump [H, T, T]."""
    work = tmp_path_factory.mktemp("demo_cli")
    cli("run", "--weights", DEMO_WEIGHTS, "--input", DEMO_INPUT, "--out", str(work / "out"), "-q",
        "--dump-attention", str(work / "attention.npy"))
    return work / "out", np.load(work / "attention.npy")


@pytest.fixture(scope="module")
def demo_result():
    return attn_viz.Layer(DEMO_WEIGHTS).run(DEMO_INPUT)


def test_demo_maps_equal_the_cli_dump(demo_cli, demo_result):
    _, dump = demo_cli
    assert demo_result.attention.shape[0] == 1
    assert_maps_equal(demo_result.attention[0], dump)


def test_demo_stats_equal_the_cli_stats_json(demo_cli, demo_result):
    out, _ = demo_cli
    assert_same_json(demo_result.stats(), cli_stats(out))


def test_demo_head_png_is_the_cli_picture(demo_cli, demo_result):
    out, dump = demo_cli
    for head in range(dump.shape[0]):
        png = demo_result.head_png(0, head)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert png == (out / f"head_{head:02d}.png").read_bytes(), f"head {head}"


def test_demo_write_is_the_cli_folder(demo_cli, demo_result, tmp_path):
    out, _ = demo_cli
    demo_result.write(str(tmp_path / "py"))
    ours = sorted(os.listdir(tmp_path / "py"))
    assert ours == sorted(os.listdir(out))
    for name in ours:
        if name.endswith(".png"):
            assert (tmp_path / "py" / name).read_bytes() == (out / name).read_bytes(), name
    with open(tmp_path / "py" / "stats.json") as f:
        assert_same_json(json.load(f), cli_stats(out))


def make_layer(tmp_path, d_model, heads, tokens, causal, seed):
    args = [sys.executable, os.path.join(SOURCE_DIR, "scripts", "make_layer.py"), "--out", str(tmp_path), "--d-model",
            str(d_model), "--heads", str(heads), "--tokens", str(tokens), "--seed", str(seed)]
    subprocess.run(args + (["--causal"] if causal else []), check=True)
    return str(tmp_path / "weights.json"), str(tmp_path / "input.json")


def reference_maps(folder, heads, causal):
    """softmax(Q K^T / sqrt(d_h)) per head in float64, from the layer's .npy files: [H, T, T]."""
    load = lambda name: np.load(folder / f"{name}.npy").astype(np.float64)
    x = load("x")
    q, k = x @ load("W_Q") + load("b_Q"), x @ load("W_K") + load("b_K")
    T, D = x.shape
    d_h = D // heads
    maps = np.empty((heads, T, T))
    for h in range(heads):
        cols = slice(h * d_h, (h + 1) * d_h)
        scores = q[:, cols] @ k[:, cols].T / np.sqrt(d_h)
        if causal:
            scores[np.triu_indices(T, 1)] = -np.inf
        scores -= scores.max(axis=1, keepdims=True)
        e = np.exp(scores)
        maps[h] = e / e.sum(axis=1, keepdims=True)
    return maps


@pytest.mark.parametrize("d_model,heads,tokens,causal", [(24, 3, 7, False), (30, 5, 13, True), (16, 1, 1, False),
                                                         (8, 1, 5, True), (12, 4, 1, True)])
def test_random_layer_matches_a_float64_reference(tmp_path, d_model, heads, tokens, causal):
    seed = int.from_bytes(os.urandom(4), "little")
    print("seed", seed)
    weights, sequence = make_layer(tmp_path, d_model, heads, tokens, causal, seed)
    result = attn_viz.Layer(weights).run(sequence)
    assert result.attention.shape == (1, heads, tokens, tokens)
    assert result.tokens == [f"t{i}" for i in range(tokens)]
    np.testing.assert_allclose(result.attention[0], reference_maps(tmp_path, heads, causal), rtol=0, atol=1e-5,
                               err_msg=f"seed {seed}")


def test_bad_layer_file_raises_error_naming_it(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attn-viz/weights@1", "d_model": 4')
    with pytest.raises(attn_viz.Error) as caught:
        attn_viz.Layer(str(bad))
    assert str(bad) in str(caught.value) and "\n" not in str(caught.value)
    assert isinstance(caught.value, RuntimeError) and caught.value.kind == "bad_input"


def test_missing_input_raises_error_naming_it(tmp_path):
    layer = attn_viz.Layer(DEMO_WEIGHTS)
    with pytest.raises(attn_viz.Error, match="nowhere.json"):
        layer.run(str(tmp_path / "nowhere.json"))


def test_paths_holding_a_nul_byte_are_refused(tmp_path):
    # A NUL byte ends a path for the system's calls: Layer(path + "\0junk") opened `path`.
    def refused(call, argument, path):
        with pytest.raises(attn_viz.Error) as caught:
            call()
        assert caught.value.kind == "usage"
        assert str(caught.value) == f"{argument}: '{path}\\x00junk' holds a NUL byte, which no file name can"

    refused(lambda: attn_viz.Layer(DEMO_WEIGHTS + "\0junk"), "path", DEMO_WEIGHTS)
    layer = attn_viz.Layer(DEMO_WEIGHTS)
    refused(lambda: layer.run(DEMO_INPUT + "\0junk"), "input", DEMO_INPUT)
    refused(lambda: layer.run(DEMO_INPUT, tokens=DEMO_INPUT + "\0junk"), "tokens", DEMO_INPUT)
    corpus = tmp_path / "c.jsonl"
    with open(DEMO_INPUT) as f:
        corpus.write_text(f.read().replace("\n", " ") + "\n")
    refused(lambda: layer.run_corpus(str(corpus) + "\0junk"), "corpus", str(corpus))


def test_head_out_of_range_raises_error(demo_result):
    heads = demo_result.attention.shape[1]
    with pytest.raises(attn_viz.Error, match=f"head L0H{heads} is out of range"):
        demo_result.head_png(0, heads)


@pytest.mark.parametrize("d_model,heads,tokens,causal", [(24, 3, 7, True), (10, 1, 1, False), (15, 5, 11, False)])
def test_to_transformer_lens_matches_a_float64_reference(tmp_path, d_model, heads, tokens, causal):
    """hook_pattern, hook_z and hook_attn_out of a random layer against softmax(QK^T)V and its W_O."""
    seed = int.from_bytes(os.urandom(4), "little")
    weights, sequence = make_layer(tmp_path, d_model, heads, tokens, causal, seed)
    result = attn_viz.Layer(weights).run(sequence)
    names = result.to_transformer_lens()
    assert sorted(names) == ["blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z", "blocks.0.hook_attn_out"]
    load = lambda name: np.load(tmp_path / f"{name}.npy").astype(np.float64)
    maps = reference_maps(tmp_path, heads, causal)  # [H, T, T]
    v = load("x") @ load("W_V") + load("b_V")  # [T, D]
    d_h = d_model // heads
    z = np.stack([maps[h] @ v[:, h * d_h:(h + 1) * d_h] for h in range(heads)], axis=1)  # [T, H, d_h]
    attn_out = z.reshape(tokens, d_model) @ load("W_O") + load("b_O")
    err = f"seed {seed}"
    assert names["blocks.0.attn.hook_pattern"].shape == (1, heads, tokens, tokens)
    np.testing.assert_allclose(names["blocks.0.attn.hook_pattern"][0], maps, rtol=0, atol=1e-5, err_msg=err)
    assert names["blocks.0.attn.hook_z"].shape == (1, tokens, heads, d_h)
    np.testing.assert_allclose(names["blocks.0.attn.hook_z"][0], z, rtol=0, atol=1e-5, err_msg=err)
    assert names["blocks.0.hook_attn_out"].shape == (1, tokens, d_model)
    np.testing.assert_allclose(names["blocks.0.hook_attn_out"][0], attn_out, rtol=0, atol=1e-5, err_msg=err)
    z_view = names["blocks.0.attn.hook_z"]
    del result, names
    np.testing.assert_allclose(z_view[0], z, rtol=0, atol=1e-5)  # the view keeps the result alive


def test_head_outputs_layer_out_of_range_raises_error(demo_result):
    with pytest.raises(attn_viz.Error, match="layer 1 is out of range: the run has 1 layers"):
        demo_result.head_outputs(1)
    with pytest.raises(attn_viz.Error, match="layer -1 is out of range"):
        demo_result.attention_output(-1)
