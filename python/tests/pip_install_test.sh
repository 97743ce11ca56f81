#!/usr/bin/env bash
# `pip install -v .` of the repository into a fresh venv, as a user runs it: pip fetches the pinned
# scikit-build-core (pyproject.toml's build-system.requires) from the package index into an
# isolated build environment, which builds the wheel with the project's CMake; then an import and a
# run from outside the source tree.
#
# Nothing is compiled for nothing: the wheel's CMake tree is kept in BUILD_DIR-wheel, so a second
# run only configures, finds the module up to date and installs it; and the first run compiles
# through ccache with BUILD_DIR's compiler and Unix Makefiles, as scripts/build.sh does, in a tree
# beside BUILD_DIR (the same depth), so that where ccache's base_dir holds both, the compile commands
# are the same and hit BUILD_DIR's objects.
# The venv lives at a fixed path (made afresh each run) so the tree's cached Python is unchanged.
#
# Without pip or the package index: exit 77 (ctest's skip) with a "skipped:" line, or 1 with
# ATTN_VIZ_REQUIRE_PYPI=1 (tests/pypi_unavailable.py).
# Usage: pip_install_test.sh SOURCE_DIR BUILD_DIR PYTHON
set -euo pipefail
source_dir=$1 build_dir=$2 python=$3
wheel_dir=$build_dir-wheel venv=$build_dir/python-pip-install-venv
unavailable() {
  "$python" -c 'import sys; sys.path.insert(0, sys.argv[1]); from pypi_unavailable import unavailable; unavailable(sys.argv[2])' \
    "$source_dir/tests" "$1"
}
rm -rf "$venv"
trap 'rm -rf "$venv"' EXIT
# numpy (attn_viz's one dependency) is Debian's, from the system's site-packages.
"$python" -m venv --system-site-packages "$venv"
pip=("$venv/bin/pip" --disable-pip-version-check --timeout 20 --retries 1)

# The build requirements from the index (or pip's cache) first, so that an unreachable index is
# told apart from a failing build.
mapfile -t requires < <("$python" -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' "$source_dir/pyproject.toml")
if ! probe=$("${pip[@]}" download --no-deps -q -d "$venv/probe" "${requires[@]}" 2>&1); then
  unavailable "pip cannot fetch the build backend (${requires[*]}) from the package index: $(tail -n 1 <<<"$probe")"
fi

# BUILD_DIR's generator (with as many jobs as scripts/build.sh runs), compiler (scikit-build-core
# would take Python's sysconfig CXX, x86_64-linux-gnu-g++ on Debian: another command for ccache)
# and launcher.
export CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
CXX=$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' "$build_dir/CMakeCache.txt")
export CXX
command -v ccache >/dev/null && export CMAKE_CXX_COMPILER_LAUNCHER=ccache
start=$SECONDS
# -v as docs/python.md says, which shows the build's progress: scikit-build-core's steps
# (pyproject.toml's logging.level) and the build tool's lines, into a log that is shown on failure.
log=$build_dir/python-pip-install.log
"${pip[@]}" install -v --config-settings=build-dir="$wheel_dir" "$source_dir" >"$log" 2>&1 ||
  { tail -n 40 "$log"; echo "pip install -v . failed (the whole log: $log)"; exit 1; }
echo "pip install -v . took $((SECONDS - start)) s (wheel tree $wheel_dir, log $log)"
grep -q ' - scikit_build_core - INFO - ' "$log" ||
  { echo "pip install -v . showed none of scikit-build-core's steps (pyproject.toml's logging.level)"; exit 1; }
grep -Eq '^ *\[ *[0-9]+%\] |Built target attn_viz_core' "$log" ||
  { echo "pip install -v . showed no progress of the build (no '[ NN%]' line)"; exit 1; }
cd "$venv"
"$venv/bin/python" - "$source_dir" <<'PY'
import os, sys
import attn_viz
assert os.path.dirname(attn_viz.__file__).startswith(sys.prefix), attn_viz.__file__
layer = attn_viz.Layer(os.path.join(sys.argv[1], "data/demo/weights.json"))
result = layer.run(os.path.join(sys.argv[1], "data/demo/input.json"))
assert result.attention.shape[0] == 1 and result.attention.shape[1] == layer.num_heads, result.attention.shape
print("installed", attn_viz.__file__, "ok:", layer.num_heads, "heads")
PY
