"""Layer.run_corpus against `attn-viz run --inputs` on random layers and corpora."""
import _thread
import json
import os
import random
import subprocess

import numpy as np
import pytest

import attn_viz
from conftest import BINARY, assert_same_json, cli, cli_stats
from test_layer import make_layer


def corpus_cli(tmp_path, weights, corpus, *more):
    """The CLI's corpus-mode stats.json (no provenance)."""
    cli("run", "--weights", weights, "--inputs", str(corpus), "--out", str(tmp_path / "out"), "--stats-only", "-q", *more)
    return cli_stats(tmp_path / "out")


def random_documents(rng, d_model, lengths, folder):
    """Input objects of the given lengths with random embeddings: inline, some with an
    attention_mask, one (when there are 3 or more) as a relative {"npy": ...} file in `folder`."""
    documents = []
    for n, T in enumerate(lengths):
        x = np.random.default_rng(rng.randrange(2**32)).normal(size=(T, d_model)).astype(np.float32)
        doc = {"tokens": [f"w{n}_{t}" for t in range(T)], "embeddings": x.tolist()}
        if n % 2 == 1 and T > 1:
            doc["attention_mask"] = [1] * (T - 1) + [0]
        if n == 2:
            np.save(folder / "x2.npy", x)
            doc["embeddings"] = {"npy": "x2.npy"}
        documents.append(doc)
    return documents


def write_jsonl(path, documents):
    with open(path, "w") as f:
        for doc in documents:
            f.write(json.dumps(doc) + "\n")
    return path


@pytest.mark.parametrize("d_model,heads,causal", [(12, 4, False), (5, 1, True), (21, 3, True), (16, 2, False)])
def test_random_corpus_equals_the_cli(tmp_path, d_model, heads, causal):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    weights, _ = make_layer(tmp_path / "layer", d_model, heads, 3, causal, seed)
    lengths = [1, rng.randint(2, 9), rng.randint(2, 17), 1, rng.randint(5, 30)]
    corpus = write_jsonl(tmp_path / "c.jsonl", random_documents(rng, d_model, lengths, tmp_path))
    told = []
    ours = attn_viz.Layer(weights).run_corpus(str(corpus), progress=lambda done, total: told.append((done, total)))
    assert_same_json(ours, corpus_cli(tmp_path, weights, corpus), f"seed {seed}")
    assert ours["num_sequences"] == 5 and ours["corpora"][0]["num_sequences"] == 5
    assert told == [(n, 5) for n in range(1, 6)]  # a path's sequences counted first


def test_a_list_a_folder_and_shards_equal_the_cli(tmp_path):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    weights, _ = make_layer(tmp_path / "layer", 8, 2, 3, False, seed)
    layer = attn_viz.Layer(weights)
    documents = random_documents(rng, 8, [3, 1, 7, 4, 2], tmp_path)
    documents[2]["embeddings"] = np.load(tmp_path / "x2.npy").tolist()  # a list has no folder for {"npy": ...}
    corpus = write_jsonl(tmp_path / "c.jsonl", documents)
    told = []
    ours = layer.run_corpus(documents, progress=lambda d, t: told.append((d, t)))
    theirs = corpus_cli(tmp_path / "file", weights, corpus)
    assert ours["corpora"][0]["path"] == "<lines>"
    theirs["corpora"][0]["path"] = "<lines>"  # the same lines: the same corpus fingerprint
    assert_same_json(ours, theirs, f"seed {seed}")
    assert told == [(n, 5) for n in range(1, 6)]
    folder = tmp_path / "folder"
    folder.mkdir()
    for n, doc in enumerate(documents):
        (folder / f"s{n}.json").write_text(json.dumps(doc))
    assert_same_json(layer.run_corpus(folder), corpus_cli(tmp_path / "folder_out", weights, folder), f"seed {seed}")
    for shard in ["0/2", "1/2"]:
        assert_same_json(layer.run_corpus(str(corpus), shard=shard),
                         corpus_cli(tmp_path / shard[0], weights, corpus, "--shard", shard), f"seed {seed}")
    told.clear()
    layer.run_corpus(documents, progress=lambda d, t: told.append((d, t)), shard="1/2")
    assert told == [(1, 2), (2, 2)]


def cli_error(*args):
    """The CLI's one-line error message (after "attn-viz: error: ") for a run that must fail."""
    done = subprocess.run([BINARY, *args], capture_output=True, text=True)
    assert done.returncode != 0, f"attn-viz {' '.join(args)} did not fail"
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("attn-viz: error: "), done.stderr
    return lines[0][len("attn-viz: error: "):]


@pytest.mark.parametrize("bad_line", ['{not json', '{"tokens": ["a"], "embeddings": [[1, 2]]}', '{"tokens": ["a", "b"]}',
                                      '{"tokens": ["a"], "embeddings": [[1, 2, 3]], "attention_mask": [0, 1]}'])
def test_a_bad_line_raises_the_cli_message(tmp_path, bad_line):
    weights, _ = make_layer(tmp_path / "layer", 3, 1, 2, False, 7)
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"tokens": ["a"], "embeddings": [[1, 2, 3]]}\n' + bad_line + "\n")
    message = cli_error("run", "--weights", weights, "--inputs", str(corpus), "--out", str(tmp_path / "out"), "-q")
    assert f"{corpus}:2" in message
    with pytest.raises(attn_viz.Error) as raised:
        attn_viz.Layer(weights).run_corpus(str(corpus))
    assert str(raised.value) == message


def test_bad_arguments_raise_errors(tmp_path):
    weights, _ = make_layer(tmp_path / "layer", 3, 1, 2, False, 7)
    layer = attn_viz.Layer(weights)
    with pytest.raises(attn_viz.Error, match=r"^<lines>:1: expected a dict, not str"):
        layer.run_corpus(["a text"])
    with pytest.raises(attn_viz.Error, match=r"^<lines>:2: "):
        layer.run_corpus([{"tokens": ["a"], "embeddings": [[1, 2, 3]]}, {"tokens": ["a"]}])
    with pytest.raises(attn_viz.Error, match="holds no sequences"):
        layer.run_corpus([])
    with pytest.raises(attn_viz.Error, match="not a shard"):
        layer.run_corpus([{"tokens": ["a"], "embeddings": [[1, 2, 3]]}], shard="1")
    with pytest.raises(attn_viz.Error, match="path or a list of dicts, not dict"):
        layer.run_corpus({"tokens": ["a"], "embeddings": [[1, 2, 3]]})


def test_ctrl_c_stops_the_corpus(tmp_path):
    weights, _ = make_layer(tmp_path / "layer", 6, 2, 2, False, 3)
    documents = random_documents(random.Random(3), 6, [4, 5, 6], tmp_path)
    documents[2]["embeddings"] = np.load(tmp_path / "x2.npy").tolist()
    told = []

    def interrupt_after_first(done, total):
        told.append(done)
        _thread.interrupt_main()

    with pytest.raises(KeyboardInterrupt):
        attn_viz.Layer(weights).run_corpus(documents, progress=interrupt_after_first)
    assert told == [1]
