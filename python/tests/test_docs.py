"""Every ```python cell of docs/python.md, in order, in one namespace, from a folder laid out as
the repository's root with ../shared beside it (the page's paths), so the walk-through stays true."""
import os
import re

import pytest

from conftest import MODELS, SOURCE_DIR


def test_docs_python_md_runs(tmp_path, monkeypatch, capsys):
    if not os.path.isdir(MODELS):
        pytest.skip(f"{MODELS} is absent (../shared is not beside the source tree)")
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        cells = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert len(cells) >= 7
    root = tmp_path / "repo"
    root.mkdir()
    os.symlink(os.path.join(SOURCE_DIR, "data"), root / "data")
    os.symlink(os.path.dirname(MODELS), tmp_path / "shared")
    monkeypatch.chdir(root)
    namespace = {}
    for n, cell in enumerate(cells):
        exec(compile(cell, f"docs/python.md cell {n}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "layers x" in printed and "no/such/model" in printed and "3 sequences;" in printed and "2 layer sequences;" in printed
