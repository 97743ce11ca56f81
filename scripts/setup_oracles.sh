#!/usr/bin/env bash
# Installs the test-time oracles from the Python package index, pinned: transformers and the PyTorch
# it runs on, with every package they import, into DIR (default build/oracles), a virtual environment
# of Debian's /usr/bin/python3 without the system's site-packages, and TransformerLens with matplotlib
# beside them into DIR-tl, which DIR's site-packages names in a .pth file. Run the oracles with
# DIR/bin/python: nothing of Debian's dist-packages is on its path (Debian's python3-scipy 1.10, which
# python3-matplotlib pulls in, breaks transformers' import against the oracles' NumPy 2 when it is).
# tests/oracle/transformers_oracle.py and transformer_lens_oracle.py run it (ctest
# transformers-oracle, transformer-lens-oracle), and so does scripts/bench.sh for its Python peers.
# Idempotent: each directory's .pins records what is installed, and the same pins install nothing
# again; other pins replace that directory whole.
#
# PyPI has no CPU-only PyTorch for x86-64 Linux: its torch wheel is a CUDA build whose shared library
# links the CUDA runtime, so `import torch` needs the nvidia-* packages even on a machine without a
# GPU (4.6 GB installed). triton, which only torch.compile uses, is left out (1 GB).
# Debian's python3-torch 1.13 cannot serve: transformers >= 4.51 (Qwen3) needs PyTorch >= 2.
# Exit status: 0 installed (or already there), 1 pip failed (no pip, no index, a pin gone).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/oracles}

# `pip install --target` of transformers==5.24.0 and torch==2.15.0 with their dependencies,
# resolved 2026-11-26 and frozen here (triton removed). A new version is a deliberate update.
pins=(
  transformers==5.24.0 torch==2.15.0 numpy==2.4.6 safetensors==0.8.0 tokenizers==0.23.3
  huggingface-hub==2.4.0 hf-xet==1.8.0 filelock==4.3.1 fsspec==2026.9.0 packaging==26.4 pyyaml==6.0.4
  regex==2026.11.19 tqdm==4.70.1 typer==0.29.2 click==8.5.1 rich==15.0.0 markdown-it-py==4.3.0
  mdurl==0.1.2 pygments==2.21.0 shellingham==1.5.4 annotated-doc==0.0.7 httpx2==2.16.2
  httpcore2==2.16.2 h11==0.16.0 anyio==4.16.0 idna==3.20 truststore==0.10.5 pydantic==2.14.4
  pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0
  sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1 jinja2==3.1.6 MarkupSafe==3.0.4 setuptools==84.2.1
  cuda-toolkit==13.2.2 cuda-bindings==13.5.0 cuda-pathfinder==1.9.1 nvidia-cublas==13.4.1.3
  nvidia-cuda-cccl==13.3.5.0.6 nvidia-cuda-cupti==13.2.86 nvidia-cuda-nvrtc==13.2.86
  nvidia-cuda-runtime==13.2.86 nvidia-cudnn-cu13==9.26.0.51 nvidia-cufft==12.2.0.57
  nvidia-cufile==1.17.1.22 nvidia-cusolver==12.2.0.11 nvidia-cusparse==12.7.10.12
  nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7 nvidia-nvjitlink==13.5.37
  nvidia-nvshmem-cu13==3.7.2 nvidia-nvtx==13.2.86
)

# TransformerLens 4.3 (its TransformerBridge over transformers >= 5.9, so the set above serves it)
# and matplotlib (bench.sh's peers draw with it), with what they import that the set above lacks,
# resolved by pip against it 2026-11-26. Left out, as triton: wandb, sentencepiece, protobuf and
# transformers-stream-generator, which TransformerLens declares but imports only for training, logging
# or particular tokenizers (about 100 MB more). About 95 MB to download, 400 MB installed, 3 minutes.
tl_pins=(
  transformer-lens==4.3.0 einops==0.8.2 fancy-einsum==0.0.3 jaxtyping==0.3.11 wadler-lindig==0.1.8
  typeguard==4.6.1 beartype==0.23.1 accelerate==1.15.0 psutil==7.2.2 datasets==5.2.0 pyarrow==26.0.1
  dill==0.4.1 multiprocess==0.70.19 xxhash==4.1.0 pandas==3.1.1 tzdata==2026.6 python-dateutil==4.0.0
  requests==2.34.2 urllib3==2.8.0 certifi==2026.10.19.post1 charset-normalizer==3.5.3
  matplotlib==3.11.2 contourpy==1.3.3 cycler==0.12.1 fonttools==4.68.0 kiwisolver==1.5.1
  pillow==13.0.0 pyparsing==3.3.3
)

# install KIND DIR SIZE PIN...: the pinned set into DIR unless DIR/.pins says it is there; KIND venv
# makes DIR a virtual environment (without pip or the system's site-packages) and installs into its
# site-packages, KIND folder installs into DIR itself.
install() {
  local kind=$1 target=$2 size=$3
  shift 3
  local wanted
  wanted=$(printf '%s\n' "$@")
  if [[ -f $target/.pins && "$(cat "$target/.pins")" == "$wanted" ]]; then
    echo "setup_oracles: $target has the pinned set"
    return
  fi
  /usr/bin/python3 -m pip --version >/dev/null 2>&1 || { echo "setup_oracles: no pip for /usr/bin/python3 (scripts/setup.sh installs python3-pip)"; exit 1; }
  echo "setup_oracles: installing $# packages ($size) into $target"
  rm -rf "$target" "$target.partial"
  local start=$SECONDS into=$target.partial
  if [[ $kind == venv ]]; then
    # The environment's paths are found from its bin/python at run time (pyvenv.cfg beside it), so
    # it is made under the partial name and moved into place whole, like the folder.
    /usr/bin/python3 -m venv --without-pip "$target.partial"
    into=$(site_packages "$target.partial")
  fi
  # --no-deps: each list is the whole closure (with the sets before it); pip resolves nothing, so
  # nothing drifts.
  /usr/bin/python3 -m pip install --quiet --no-deps --disable-pip-version-check --no-warn-script-location --root-user-action=ignore \
    --no-cache-dir --target "$into" "$@"
  echo "$wanted" >"$target.partial/.pins"
  mv "$target.partial" "$target"
  echo "setup_oracles: done in $((SECONDS - start)) s, $(du -sh "$target" | cut -f1)"
}

# site_packages VENV: the environment's site-packages folder, as its own interpreter names it.
site_packages() {
  "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))'
}

install venv "$dir" "about 2.5 GB to download, 4.6 GB installed" "${pins[@]}"
install folder "$dir-tl" "about 95 MB to download, 400 MB installed" "${tl_pins[@]}"
# TransformerLens's folder on the environment's path; written every time, since either set may have
# been installed anew.
echo "$(cd "$dir-tl" && pwd)" >"$(site_packages "$dir")/attn-viz-oracles-tl.pth"
