"""attn_viz.Model's text pairs (text_pair=) against `attn-viz model --text-pair` on a random BERT folder
with a WordPiece tokenizer (scripts/reference_hf_transformer.py --tokenizer: BERT's pair template)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import attn_viz
from conftest import SOURCE_DIR, assert_maps_equal, assert_same_json, cli, cli_stats


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bert")
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "reference_hf_transformer.py"), "--out",
                    str(folder), "--model-type", "bert", "--d-model", "16", "--heads", "2", "--layers", "2", "--ffn",
                    "20", "--vocab", "70", "--tokens", "3", "--tokenizer", "--seed", "7"], check=True)
    return str(folder)


def test_a_pair_runs_as_the_cli_runs_it(tmp_path, bert_folder):
    first, second = "the cat sat.", "on the mat"
    cli("model", "--model", bert_folder, "--text", first, "--text-pair", second, "--out", str(tmp_path / "out"),
        "--stats-only", "-q", "--dump-attention", str(tmp_path / "attention.npy"))
    stats = cli_stats(tmp_path / "out")
    result = attn_viz.Model(bert_folder).run(text=first, text_pair=second)
    assert_maps_equal(result.attention, np.load(tmp_path / "attention.npy"))
    assert_same_json(result.stats(), stats)
    assert stats["sentence_b_start"] == 6 and stats["token_types"] == [0] * 6 + [1] * 4


def test_encode_gives_ids_types_and_where_b_starts(bert_folder):
    model = attn_viz.Model(bert_folder)
    pair = model.encode("the cat", text_pair="sat")
    assert pair == {"ids": [2, 5, 6, 3, 7, 3], "token_type_ids": [0, 0, 0, 0, 1, 1], "sentence_b_start": 4}
    assert model.encode("the cat") == [2, 5, 6, 3]


def test_a_pair_needs_both_texts(bert_folder):
    model = attn_viz.Model(bert_folder)
    with pytest.raises(attn_viz.Error, match="text_pair is a pair's second text: give text too"):
        model.run(ids=[2, 5, 3], text_pair="the cat")
    with pytest.raises(attn_viz.Error, match="text_pair: '' is an empty text"):
        model.run(text="the cat", text_pair="")
