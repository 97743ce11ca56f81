"""Model.run on encoder-decoder folders (bart, t5) against `attn-viz model --target-tokens` and the
float64 reference of scripts/reference_hf_seq2seq.py."""
import os
import subprocess
import sys

import numpy as np
import pytest

import attn_viz
from conftest import SOURCE_DIR, assert_maps_equal, assert_same_json, cli, cli_stats

FOLDERS = {  # model type, heads, encoder layers, decoder layers, source tokens, target tokens
    "bart": ["--model-type", "bart", "--d-model", "16", "--heads", "4", "--encoder-layers", "2", "--decoder-layers", "3",
             "--ffn", "20", "--vocab", "300", "--source-tokens", "7", "--target-tokens", "5"],
    "t5": ["--model-type", "t5", "--d-model", "12", "--heads", "3", "--head-dim", "5", "--encoder-layers", "1",
           "--decoder-layers", "2", "--ffn", "13", "--vocab", "300", "--source-tokens", "9", "--target-tokens", "1"],
    "t5-one-head": ["--model-type", "t5", "--d-model", "8", "--heads", "1", "--encoder-layers", "2", "--decoder-layers", "1",
                    "--ffn", "9", "--vocab", "280", "--source-tokens", "1", "--target-tokens", "4", "--gated"],
}


def reference_folder(tmp_path, kind):
    seed = int.from_bytes(os.urandom(4), "little")
    folder = tmp_path / kind
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "reference_hf_seq2seq.py"), "--out", str(folder),
                    *FOLDERS[kind], "--seed", str(seed), "--tokenizer"], check=True, capture_output=True)
    ids = lambda name: [int(t) for t in (folder / f"{name}_ids.txt").read_text().split()]
    return str(folder), ids("source"), ids("target"), seed


@pytest.mark.parametrize("kind", sorted(FOLDERS))
def test_maps_and_stats_equal_the_cli_and_the_reference(tmp_path, kind):
    folder, source, target, seed = reference_folder(tmp_path, kind)
    cli("model", "--model", folder, "--tokens", ",".join(map(str, source)), "--target-tokens", ",".join(map(str, target)),
        "--out", str(tmp_path / "out"), "--stats-only", "-q", "--dump-attention", str(tmp_path / "P.npy"))
    model = attn_viz.Model(folder)
    result = model.run(ids=source, target_ids=target)
    assert isinstance(result, attn_viz.Seq2SeqResult)
    assert result.source_ids == source and result.target_ids == target
    d = model.description
    S, T = len(source), len(target)
    shapes = {"encoder": (d["n_layers"], d["n_heads"], S, S), "decoder": (d["n_decoder_layers"], d["n_heads"], T, T),
              "cross": (d["n_decoder_layers"], d["n_heads"], T, S)}
    for stack, shape in shapes.items():
        ours = getattr(result, stack)
        assert ours.shape == shape, stack
        assert_maps_equal(ours, np.load(tmp_path / f"P.{stack}.npy"))
        for layer in range(shape[0]):
            expected = np.load(os.path.join(folder, f"expected_{stack}_{layer}.npy"))
            np.testing.assert_allclose(ours[layer], expected, rtol=0, atol=1e-5, err_msg=f"{kind} {stack} {layer} seed {seed}")
    assert_same_json(result.stats(), cli_stats(tmp_path / "out"), f"{kind} seed {seed}")
    assert result.encoder is result.encoder  # made once, not copied


def test_texts_and_write_equal_the_cli(tmp_path):
    folder, _, _, _ = reference_folder(tmp_path, "bart")
    source_text, target_text = "a cat sat", "the dog"
    cli("model", "--model", folder, "--text", source_text, "--target-text", target_text, "--out", str(tmp_path / "cli"), "-q")
    model = attn_viz.Model(folder)
    result = model.run(text=source_text, target_text=target_text)
    assert result.source_ids == model.encode(source_text) and result.target_ids == model.encode(target_text)
    result.write(str(tmp_path / "py"))
    walk = lambda top: sorted(os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs)
    assert walk(tmp_path / "py") == walk(tmp_path / "cli")
    for name in walk(tmp_path / "py"):
        if name.endswith(".png"):
            assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert_same_json(result.stats(), cli_stats(tmp_path / "cli"))


def test_encoder_decoder_mistakes_raise_errors(tmp_path):
    folder, source, target, _ = reference_folder(tmp_path, "t5")
    model = attn_viz.Model(folder)
    with pytest.raises(attn_viz.Error, match="give one of target_text or target_ids"):
        model.run(ids=source)
    with pytest.raises(attn_viz.Error, match="give one of text or ids"):
        model.run(target_ids=target)
    with pytest.raises(attn_viz.Error, match="100000"):
        model.run(ids=source, target_ids=[100000])
    with pytest.raises(attn_viz.Error, match=r"^target_ids: token 1 is id 300, outside the vocabulary \(0\.\.299\)$"):
        model.run(ids=source, target_ids=[0, 300])
    for kwargs, argument in (({"text": "", "target_ids": target}, "text"), ({"ids": source, "target_text": ""}, "target_text")):
        with pytest.raises(attn_viz.Error, match=f"^{argument}: '' is an empty text$") as caught:
            model.run(**kwargs)
        assert caught.value.kind == "usage"
    with pytest.raises(attn_viz.Error, match="encoder-decoder"):
        model.run_corpus(["a b"])
    with pytest.raises(attn_viz.Error, match="progress"):
        model.run(ids=source, target_ids=target, progress=print)


def test_a_decoder_refuses_a_target():
    from conftest import shared_model
    model = attn_viz.Model(shared_model("stories260K-hf"))
    with pytest.raises(attn_viz.Error, match="target_text and target_ids"):
        model.run(text="Once", target_text="upon")
