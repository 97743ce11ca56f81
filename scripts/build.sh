#!/usr/bin/env bash
# Configures and builds attn-viz into build/ (or $BUILD_DIR). Extra arguments go to cmake's
# configure step; `--target NAME` (first) builds only that target (the demo builds the CLI alone).
# Compiles through ccache when it is installed (it is optional: nothing installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
target=()
if [[ "${1:-}" == "--target" ]]; then
  target=(--target "$2")
  shift 2
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "${target[@]}"
