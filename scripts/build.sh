#!/usr/bin/env bash
# Configures and builds attn-viz into build/ (or $BUILD_DIR). Extra arguments go to cmake.
# Compiles through ccache when it is installed (it is optional: nothing installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
