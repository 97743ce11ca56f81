"""attn_viz.Model against `attn-viz model` on ../shared's stories260K in its three formats."""
import _thread
import gc
import os
import re

import numpy as np
import pytest

import attn_viz
from conftest import assert_maps_equal, assert_same_json, cli, cli_stats, shared_model

TEXT = "Once upon a time, Lily saw a big red ball."
FORMATS = {
    "hf": lambda: (shared_model("stories260K-hf"), ""),
    "gguf": lambda: (shared_model("stories260K-gguf", "stories260K.gguf"), ""),
    "llama2c": lambda: (shared_model("stories260K", "stories260K.bin"), shared_model("stories260K", "tok512.bin")),
}


def model_cli(tmp_path, checkpoint, tokenizer, *input_args):
    """`attn-viz model` statistics-only: its stats.json (no provenance) and attention dump [L, H, T, T]."""
    args = ["model", "--checkpoint", checkpoint, *input_args, "--out", str(tmp_path / "out"), "--stats-only", "-q",
            "--dump-attention", str(tmp_path / "attention.npy")]
    cli(*args, *(["--tokenizer", tokenizer] if tokenizer else []))
    return cli_stats(tmp_path / "out"), np.load(tmp_path / "attention.npy")


@pytest.fixture(scope="module")
def hf_model():
    return attn_viz.Model(FORMATS["hf"]()[0])


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_maps_tokens_and_stats_equal_the_cli(tmp_path, kind):
    checkpoint, tokenizer = FORMATS[kind]()
    stats, dump = model_cli(tmp_path, checkpoint, tokenizer, "--text", TEXT)
    model = attn_viz.Model(checkpoint, tokenizer=tokenizer)
    result = model.run(text=TEXT)
    assert_maps_equal(result.attention, dump)
    assert result.tokens == stats["tokens"]
    assert result.ids == model.encode(TEXT)
    assert_same_json(result.stats(), stats)


def test_ids_run_equals_the_cli_tokens_run(tmp_path, hf_model):
    ids = [1, 403, 407, 261, 378]
    stats, dump = model_cli(tmp_path, hf_model.path, "", "--tokens", ",".join(map(str, ids)))
    result = hf_model.run(ids=ids)
    assert result.ids == ids
    assert_maps_equal(result.attention, dump)
    assert_same_json(result.stats(), stats)


def test_one_token(hf_model):
    result = hf_model.run(ids=[1])
    d = hf_model.description
    assert result.attention.shape == (d["n_layers"], d["n_heads"], 1, 1)
    np.testing.assert_array_equal(result.attention, 1.0)


def test_attention_is_not_copied_and_outlives_the_result(hf_model):
    result = hf_model.run(text=TEXT)
    attention = result.attention
    assert attention is result.attention
    assert type(attention.base).__name__ == "PyCapsule"
    expected = attention.copy()
    del result
    gc.collect()
    np.testing.assert_array_equal(attention, expected)


def test_progress_is_told_each_layer(hf_model):
    told = []
    hf_model.run(text=TEXT, progress=lambda done, total: told.append((done, total)))
    layers = hf_model.description["n_layers"]
    assert told == [(n, layers) for n in range(1, layers + 1)]


def test_ctrl_c_stops_the_run_with_keyboard_interrupt(hf_model):
    told = []

    def interrupt_after_first_layer(done, total):
        told.append(done)
        if done == 1:
            _thread.interrupt_main()  # as Ctrl-C does: SIGINT's flag, seen after this layer

    with pytest.raises(KeyboardInterrupt):
        hf_model.run(text=TEXT, progress=interrupt_after_first_layer)
    assert told == [1]
    assert hf_model.run(ids=[1, 2]).attention.shape[2] == 2  # the model still runs


def test_to_bertviz_shapes_and_shares_memory(hf_model):
    result = hf_model.run(text=TEXT)
    attention, tokens = result.to_bertviz()
    L, H, T, _ = result.attention.shape
    assert len(attention) == L and tokens == result.tokens and len(tokens) == T
    for layer, a in enumerate(attention):
        assert tuple(a.shape) == (1, H, T, T)
        array = a.numpy() if hasattr(a, "numpy") else a
        assert np.shares_memory(array, result.attention)
        np.testing.assert_array_equal(array[0], result.attention[layer])


def test_bad_inputs_raise_error_naming_the_problem(tmp_path, hf_model):
    with pytest.raises(attn_viz.Error, match="no-such-model"):
        attn_viz.Model(str(tmp_path / "no-such-model"))
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 16)
    with pytest.raises(attn_viz.Error) as caught:
        attn_viz.Model(str(bad))
    assert str(bad) in str(caught.value)
    with pytest.raises(attn_viz.Error, match=re.escape("ids: token 1 is id 100000, outside the vocabulary")):
        hf_model.run(ids=[1, 100000])
    with pytest.raises(attn_viz.Error, match="one of text or ids"):
        hf_model.run()


def usage_error(call, message):
    """call() raises an attn_viz.Error of kind usage whose message is `message`."""
    with pytest.raises(attn_viz.Error) as caught:
        call()
    assert caught.value.kind == "usage" and str(caught.value) == message


def test_an_empty_text_and_a_path_holding_a_nul_byte_are_refused(tmp_path, hf_model):
    # As the CLI refuses --text '': an empty text is no text to run (it ran BOS alone).
    usage_error(lambda: hf_model.run(text=""), "text: '' is an empty text")
    usage_error(lambda: hf_model.encode(""), "text: '' is an empty text")
    # A NUL byte ends a path for the system's calls: Model(path + "\0junk") opened `path`.
    junk = "\0junk"
    usage_error(lambda: attn_viz.Model(hf_model.path + junk),
                f"path: '{hf_model.path}\\x00junk' holds a NUL byte, which no file name can")
    usage_error(lambda: attn_viz.Model(hf_model.path, tokenizer=hf_model.path + junk),
                f"tokenizer: '{hf_model.path}\\x00junk' holds a NUL byte, which no file name can")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "Once upon a time"}\n')
    usage_error(lambda: hf_model.run_corpus(str(corpus) + junk),
                f"path_or_lines: '{corpus}\\x00junk' holds a NUL byte, which no file name can")
    result = hf_model.run(text=TEXT)
    usage_error(lambda: result.write(str(tmp_path / "out") + junk),
                f"out: '{tmp_path / 'out'}\\x00junk' holds a NUL byte, which no file name can")
    assert sorted(os.listdir(tmp_path)) == ["c.jsonl"]


def test_write_is_the_cli_folder(tmp_path, hf_model):
    cli("model", "--checkpoint", hf_model.path, "--text", TEXT, "--out", str(tmp_path / "cli"), "-q")
    hf_model.run(text=TEXT).write(str(tmp_path / "py"))
    cli_files = sorted(os.path.relpath(os.path.join(d, f), tmp_path / "cli") for d, _, fs in os.walk(tmp_path / "cli") for f in fs)
    py_files = sorted(os.path.relpath(os.path.join(d, f), tmp_path / "py") for d, _, fs in os.walk(tmp_path / "py") for f in fs)
    assert py_files == cli_files
    for name in py_files:
        if name.endswith(".png"):
            assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name


def test_to_transformer_lens_names_every_layer_with_views(hf_model):
    result = hf_model.run(text=TEXT)
    names = result.to_transformer_lens()
    L, H, T, _ = result.attention.shape
    d = hf_model.description
    hooks = ["attn.hook_pattern", "attn.hook_z", "hook_attn_out"]
    assert sorted(names) == sorted(f"blocks.{layer}.{hook}" for layer in range(L) for hook in hooks)
    for layer in range(L):
        pattern = names[f"blocks.{layer}.attn.hook_pattern"]
        assert pattern.shape == (1, H, T, T) and np.shares_memory(pattern, result.attention)
        np.testing.assert_array_equal(pattern[0], result.attention[layer])
        assert names[f"blocks.{layer}.attn.hook_z"].shape == (1, T, H, d["head_dim"])
        assert names[f"blocks.{layer}.hook_attn_out"].shape == (1, T, d["dim"])


def test_head_png_of_any_layer_is_the_cli_picture(tmp_path, hf_model):
    cli("model", "--checkpoint", hf_model.path, "--text", TEXT, "--out", str(tmp_path / "cli"), "-q")
    result = hf_model.run(text=TEXT)
    L, H = result.attention.shape[:2]
    for layer, head in [(0, 0), (L - 1, H - 1), (L // 2, 1)]:
        assert result.head_png(layer, head) == (tmp_path / "cli" / f"layer_{layer:02d}" / f"head_{head:02d}.png").read_bytes()
