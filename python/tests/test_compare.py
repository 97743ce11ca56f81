"""Model.compare (lib/session/model_compare over two opened models) against the CLI's compare.json:
the same document, numbers to 1e-9, but its provenance; and its errors."""
import json

import pytest

import attn_viz
from conftest import assert_same_json, cli, shared_model

TEXT = "Lily saw a red ball. Lily saw a red"


@pytest.fixture(scope="module")
def models():
    return (attn_viz.Model(shared_model("stories260K-hf")),
            attn_viz.Model(shared_model("stories260K-gguf", "stories260K-Q8_0.gguf")))


def cli_compare(tmp_path, *options):
    out = tmp_path / "cli"
    cli("compare", "-q", shared_model("stories260K-hf"), shared_model("stories260K-gguf", "stories260K-Q8_0.gguf"),
        "--out", str(out), *options)
    with open(out / "compare.json", encoding="utf-8") as f:
        document = json.load(f)
    del document["provenance"]
    return document


@pytest.mark.parametrize("options,call", [
    (["--text", TEXT], lambda a, b: a.compare(b, text=TEXT)),
    (["--tokens", "1,403,407,261,300,411"], lambda a, b: a.compare(b, ids=[1, 403, 407, 261, 300, 411])),
    (["--text", TEXT, "--generate", "6"], lambda a, b: a.compare(b, text=TEXT, generate=6)),
    (["--text", TEXT, "--fail-metric", "correlation_distance"],
     lambda a, b: a.compare(b, text=TEXT, metric="correlation_distance")),
])
def test_compare_equals_the_cli(models, tmp_path, options, call):
    expected = cli_compare(tmp_path, *options)
    assert_same_json(call(*models), expected, "compare")


def test_a_model_against_itself_moves_nothing(models):
    document = models[0].compare(models[0], text=TEXT)
    assert document["output"]["mean_kl"] == 0
    assert all(head["map_js_distance"] == 0 for head in document["heads"])


@pytest.mark.parametrize("call,message", [
    (lambda a, b: a.compare(b, text=TEXT, metric="loudness"), "metric: "),
    (lambda a, b: a.compare(b), "give one of text or ids"),
    (lambda a, b: a.compare(b, ids=[1, 999]), "ids: token 1 is id 999, outside the vocabulary"),
])
def test_errors_name_the_argument(models, call, message):
    with pytest.raises(attn_viz.Error) as error:
        call(*models)
    assert message in str(error.value)
