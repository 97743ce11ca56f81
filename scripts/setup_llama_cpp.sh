#!/usr/bin/env bash
# Fetches llama.cpp's prebuilt CPU libraries from npm and builds scripts/llama_cpp_prompt.cpp against
# them: the whole-model peer of scripts/bench_llama_cpp.sh (a benchmark only; attn-viz never links them).
#   @node-llama-cpp/linux-x64: libllama, libggml and one libggml-cpu-* per x86-64 level (ggml loads the
#     best one for the CPU at run time), built from llama.cpp release v0.5.0 (its _nlcBuildMetadata.json);
#   node-llama-cpp: the same release's sources as a git bundle (llama/gitRelease.bundle, one squashed
#     commit), of which only include/ and ggml/include/ are used: the headers matching the libraries.
# Both are pinned by version and npm integrity, fetched with `npm pack` (no install scripts, no
# dependencies), unpacked under LLAMA_CPP_DIR (default build/llama_cpp: lib/, src/ with the headers; never committed), and skipped
# when already there. Prints the driver's path on the last line.
# Usage: scripts/setup_llama_cpp.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${LLAMA_CPP_DIR:-$root/build/llama_cpp}
version=3.22.1
libs_integrity=sha512-5uCCDNqWCNfaAm8aR/Uzxbo4HBpKgNF91kCHPepKhgMgV2OAmatoefbOlMihsqCiH2Od35E/eUHQCFbfRBJuOg==
sources_integrity=sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw==
sources_commit=de3ff815ea7d559ee917f063901b8986f038abc6
mkdir -p "$dir"

# Fetches one pinned package's tarball into $dir and checks it against its npm integrity.
fetch() {
  local spec=$1 file=$2 integrity=$3
  [[ -f $dir/$file ]] || (cd "$dir" && npm pack --silent "$spec" >/dev/null)
  if [[ "sha512-$(openssl dgst -sha512 -binary "$dir/$file" | base64 -w0)" != "$integrity" ]]; then
    rm -f "$dir/$file"
    echo "setup_llama_cpp: $spec does not match its pinned integrity" >&2
    exit 1
  fi
}

if [[ ! -f $dir/lib/libllama.v0.5.0.so ]]; then
  fetch "@node-llama-cpp/linux-x64@$version" "node-llama-cpp-linux-x64-$version.tgz" "$libs_integrity"
  rm -rf "$dir/lib" && mkdir "$dir/lib"
  tar -xzf "$dir/node-llama-cpp-linux-x64-$version.tgz" -C "$dir/lib" --strip-components=3 package/bins/linux-x64
  rm "$dir/node-llama-cpp-linux-x64-$version.tgz"
fi

if [[ ! -f $dir/src/include/llama.h ]]; then
  fetch "node-llama-cpp@$version" "node-llama-cpp-$version.tgz" "$sources_integrity"
  tar -xzf "$dir/node-llama-cpp-$version.tgz" -C "$dir" package/llama/gitRelease.bundle
  git init -q --bare "$dir/llama.cpp.git"
  git -C "$dir/llama.cpp.git" fetch -q "$dir/package/llama/gitRelease.bundle" HEAD
  [[ $(git -C "$dir/llama.cpp.git" rev-parse FETCH_HEAD) == "$sources_commit" ]] ||
    { echo "setup_llama_cpp: the bundle's commit is not $sources_commit" >&2; exit 1; }
  rm -rf "$dir/src" && mkdir "$dir/src"
  git -C "$dir/llama.cpp.git" archive FETCH_HEAD include ggml/include LICENSE | tar -xf - -C "$dir/src"
  rm -rf "$dir/package" "$dir/llama.cpp.git" "$dir/node-llama-cpp-$version.tgz"
fi

driver=$dir/llama_cpp_prompt
if [[ ! -x $driver || $root/scripts/llama_cpp_prompt.cpp -nt $driver ]]; then
  g++ -std=c++20 -O2 -Wall -Wextra -I"$dir/src/include" -I"$dir/src/ggml/include" "$root/scripts/llama_cpp_prompt.cpp" -o "$driver" \
    -L"$dir/lib" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so -Wl,-rpath,"$dir/lib"
fi
echo "$driver"
