"""Fixtures of the attn_viz tests: the CLI to compare with (ATTN_VIZ_BINARY, else build/attn-viz),
the source tree (ATTN_VIZ_SOURCE_DIR) and ../shared's models (skipped, saying so, where absent)."""
import json
import math
import os
import subprocess

import numpy as np
import pytest

SOURCE_DIR = os.environ.get("ATTN_VIZ_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("ATTN_VIZ_BINARY") or os.path.join(SOURCE_DIR, "build", "attn-viz")
MODELS = os.path.join(SOURCE_DIR, "..", "shared", "models")


def cli(*args):
    """Runs the attn-viz CLI; fails the test with its stderr when it fails."""
    done = subprocess.run([BINARY, *args], capture_output=True, text=True)
    assert done.returncode == 0, f"attn-viz {' '.join(args)}: exit {done.returncode}: {done.stderr}"
    return done


def shared_model(*parts):
    """A file or folder of ../shared/models, or a skip naming what is missing."""
    path = os.path.join(MODELS, *parts)
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent (../shared is not beside the source tree)")
    return path


def cli_stats(out_dir):
    """The CLI's stats.json without "provenance" (its command line and input digests)."""
    with open(os.path.join(out_dir, "stats.json")) as f:
        stats = json.load(f)
    stats.pop("provenance")
    return stats


def assert_same_json(a, b, where="stats"):
    """Equal documents: the same keys, lists and strings; numbers to 1e-9 relative."""
    assert type(a) is type(b) or isinstance(a, (int, float)) and isinstance(b, (int, float)), f"{where}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for key in a:
            assert_same_json(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same_json(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def assert_maps_equal(ours, theirs):
    """The same attention maps as the CLI's dump: same shape, float32, equal to 1e-6."""
    assert ours.dtype == np.float32 and ours.shape == theirs.shape, f"{ours.dtype} {ours.shape} vs {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
