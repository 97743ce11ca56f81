#!/usr/bin/env bash
# `pip install --no-build-isolation .` of the repository into a fresh venv (with the system's
# packages: numpy, setuptools, pybind11), reusing the configured build tree BUILD
# (ATTN_VIZ_CMAKE_BUILD_DIR) so nothing is compiled twice, then an import and a run from outside
# the source tree. Offline: pip reads no index.
# Usage: pip_install_test.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
source_dir=$1 build_dir=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m venv --system-site-packages "$work/venv"
# A copy of the tracked files, so pip's egg-info and build folders never touch the source tree.
mkdir "$work/src"
(cd "$source_dir" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/src"
ATTN_VIZ_CMAKE_BUILD_DIR=$build_dir "$work/venv/bin/pip" install --no-build-isolation --no-index -q "$work/src"
cd "$work"
"$work/venv/bin/python" - "$source_dir" <<'PY'
import os, sys
import attn_viz
assert os.path.dirname(attn_viz.__file__).startswith(sys.prefix), attn_viz.__file__
layer = attn_viz.Layer(os.path.join(sys.argv[1], "data/demo/weights.json"))
print("installed", attn_viz.__file__, "ok:", layer.num_heads, "heads")
PY
