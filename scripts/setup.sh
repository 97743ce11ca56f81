#!/usr/bin/env bash
# Installs everything attn-viz needs to build, test and benchmark, from Debian's archive.
# Idempotent: packages already present are not fetched again. Run as root (or with sudo).
# `setup.sh build` installs only what building and running the CLI needs (the demo's setup).
# ATTN_VIZ_SETUP_EXTRA may name extras: "bench" (the Python peer's matplotlib and OpenBLAS,
# hyperfine, time) and "clang" (clang-14 with its sanitizer/fuzzer and OpenMP runtimes, for
# scripts/fuzz.sh).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libdnnl-dev ocl-icd-opencl-dev          # oneDNN 2.6; its CMake config needs OpenCL
  libcli11-dev nlohmann-json3-dev libstb-dev doctest-dev
  libfmt-dev                              # {fmt} 9: every message and text line, formats checked at compile time
  libdeflate-dev                          # real deflate for PNG (stb's own is fixed-Huffman only)
  libicu-dev                              # Unicode regex, normalization and categories for tokenizers
  libxxhash-dev                           # XXH3 fingerprints of weights and sequences in corpus partials
  libssl-dev                              # libcrypto's SHA-256 of every input file (stats.json provenance)
  fonts-dejavu-core                       # DejaVu Sans for labels
)
if [[ "${1:-}" != "build" ]]; then
  packages+=(
    python3 python3-numpy python3-torch   # scripts/reference.py, the PyTorch cross-check
    python3-scipy                         # present so the oracles' isolation from Debian's packages is tested
    python3-sentencepiece                 # tests/tokenizers/unigram_spm_crosscheck: SentencePiece itself
    python3-pip                           # tests/tokenizers/rust_tokenizers_crosscheck: PyPI's tokenizers, pinned
    python3-dev pybind11-dev python3-pybind11  # python/: the attn_viz module, built for Debian's python3
    python3-pytest python3-venv           # its tests, and the venv `pip install .` is tested in
    chromium                              # headless: the render tests open report.html in it
    slurm-wlm munge parallel              # tests/cluster: a one-node Slurm cluster, GNU parallel
    nodejs                                # tests/tokenizers/tokenizer_crosscheck: npm's @huggingface/tokenizers
    clang-format-14                       # scripts/format.sh --check: .ci/run fails on unformatted code
  )
  # Debian's nodejs comes without npm (a package of its own); NodeSource's nodejs includes it.
  command -v npm >/dev/null || packages+=(npm)
fi
if [[ "${ATTN_VIZ_SETUP_EXTRA:-}" == *bench* ]]; then
  packages+=(python3-matplotlib libopenblas0-pthread hyperfine time)
fi
if [[ "${ATTN_VIZ_SETUP_EXTRA:-}" == *clang* ]]; then
  packages+=(clang-14 libclang-rt-14-dev libomp-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all dependencies present"
