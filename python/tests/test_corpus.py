"""Model.run_corpus against `attn-viz model --inputs` on stories260K and on random small models."""
import _thread
import json
import os
import random
import subprocess
import sys

import pytest

import attn_viz
from conftest import SOURCE_DIR, assert_same_json, cli, cli_stats, shared_model

TEXTS = ["Once upon a time, Lily saw a big red ball.", "The cat sat.", "Tom had a dog. The dog ran and ran to the park."]


def corpus_cli(tmp_path, checkpoint, corpus, *more):
    """The CLI's corpus-mode stats.json (no provenance)."""
    cli("model", "--checkpoint", checkpoint, "--inputs", str(corpus), "--out", str(tmp_path / "out"), "--stats-only", "-q", *more)
    return cli_stats(tmp_path / "out")


def write_jsonl(path, documents):
    with open(path, "w") as f:
        for doc in documents:
            f.write(json.dumps(doc) + "\n")
    return path


def random_llama(tmp_path, heads, kv_heads, layers, seed):
    """A random Llama folder from scripts/reference_hf_llama.py (with a tokenizer.json)."""
    folder = tmp_path / "llama"
    subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "scripts", "reference_hf_llama.py"), "--out", str(folder),
                    "--model-type", "llama", "--d-model", str(4 * heads), "--heads", str(heads), "--kv-heads", str(kv_heads),
                    "--layers", str(layers), "--ffn", "19", "--vocab", "300", "--tokens", "3", "--seed", str(seed), "--tokenizer"],
                   check=True, capture_output=True)
    return str(folder)


@pytest.fixture(scope="module")
def stories():
    return attn_viz.Model(shared_model("stories260K-hf"))


def test_stories_corpus_equals_the_cli(tmp_path, stories):
    documents = [{"text": TEXTS[0]}, {"tokens": [1, 403, 407, 261]}, {"text": TEXTS[1]}, {"text": TEXTS[2]}, {"tokens": [1]}]
    corpus = write_jsonl(tmp_path / "c.jsonl", documents)
    told = []
    ours = stories.run_corpus(str(corpus), progress=lambda done, total: told.append((done, total)))
    assert_same_json(ours, corpus_cli(tmp_path, stories.path, corpus))
    assert ours["num_sequences"] == 5 and ours["corpora"][0]["num_sequences"] == 5
    assert told == [(n, 5) for n in range(1, 6)]  # a path's sequences counted first


def test_a_list_is_the_jsonl_file_of_its_lines(tmp_path, stories):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"text": TEXTS[0]}, {"tokens": [1, 403, 407]}, {"text": TEXTS[2]}])
    told = []
    ours = stories.run_corpus([TEXTS[0], {"tokens": [1, 403, 407]}, TEXTS[2]], progress=lambda d, t: told.append((d, t)))
    theirs = corpus_cli(tmp_path, stories.path, corpus)
    assert ours["corpora"][0]["path"] == "<lines>"
    theirs["corpora"][0]["path"] = "<lines>"  # the same lines: the same corpus fingerprint
    assert_same_json(ours, theirs)
    assert told == [(1, 3), (2, 3), (3, 3)]


def test_text_file_and_shard_equal_the_cli(tmp_path, stories):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(TEXTS + ["Lily and Tom ran.", "A big dog."]) + "\n")
    for shard in ["0/2", "1/2"]:
        assert_same_json(stories.run_corpus(corpus, shard=shard), corpus_cli(tmp_path / shard[0], stories.path, corpus, "--shard", shard))


@pytest.mark.parametrize("heads,kv_heads,layers", [(4, 2, 2), (1, 1, 1), (3, 3, 3)])
def test_random_model_corpus_equals_the_cli(tmp_path, heads, kv_heads, layers):
    seed = int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    folder = random_llama(tmp_path, heads, kv_heads, layers, seed)
    lengths = [1, rng.randint(2, 9), rng.randint(2, 17), 1, rng.randint(5, 30)]
    documents = [{"tokens": [rng.randrange(300) for _ in range(n)]} for n in lengths]
    corpus = write_jsonl(tmp_path / "c.jsonl", documents)
    ours = attn_viz.Model(folder).run_corpus(documents)
    theirs = corpus_cli(tmp_path, folder, corpus)
    theirs["corpora"][0]["path"] = "<lines>"
    assert_same_json(ours, theirs, f"seed {seed}")


def test_bad_corpora_raise_errors_naming_the_line(tmp_path, stories):
    with pytest.raises(attn_viz.Error, match=r"^<lines>:2: .*tokens"):
        stories.run_corpus([TEXTS[0], {"tokens": []}])
    with pytest.raises(attn_viz.Error, match=r"<lines>:2: .*100000"):
        stories.run_corpus([TEXTS[0], {"tokens": [1, 100000]}])
    with pytest.raises(attn_viz.Error, match=r"<lines>:1: expected a dict or a string, not int"):
        stories.run_corpus([3])
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"text": "a"}])
    with open(bad, "a") as f:
        f.write("{not json\n")
    with pytest.raises(attn_viz.Error, match=str(bad) + ":2"):
        stories.run_corpus(str(bad))
    with pytest.raises(attn_viz.Error, match="holds no sequences"):
        stories.run_corpus([])
    with pytest.raises(attn_viz.Error, match="shard"):
        stories.run_corpus([TEXTS[0]], shard="2/2")
    with pytest.raises(attn_viz.Error, match="not a shard"):
        stories.run_corpus([TEXTS[0]], shard="1")
    with pytest.raises(attn_viz.Error, match="not dict"):
        stories.run_corpus({"text": "a"})


def test_ctrl_c_stops_the_corpus(stories):
    told = []

    def interrupt_after_first(done, total):
        told.append(done)
        _thread.interrupt_main()

    with pytest.raises(KeyboardInterrupt):
        stories.run_corpus(TEXTS, progress=interrupt_after_first)
    assert told == [1]
