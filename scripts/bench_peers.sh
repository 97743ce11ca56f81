#!/usr/bin/env bash
# The field's Python workflows against attn-viz (issue 29): one GPT-2-shaped random model
# (12 layers x 12 heads, D=768, saved by transformers) and T random token ids, every head's map
# drawn as one PNG, by
#   (a) transformers, output_attentions=True (eager), + matplotlib;
#   (b) TransformerLens 4.3, TransformerBridge.run_with_cache, + matplotlib;
#   (c) the attn-viz CLI, `attn-viz model` (its default outputs: every head's PNG, statistics);
#   (d) the attn_viz Python package, Model(...).run(ids=...).write(out): the same outputs as (c).
# Each from a fresh process (imports and model loading included), median of RUNS; threads pinned
# equal (THREADS, default 1: PyTorch's and attn-viz's). Prints wall and CPU (user + system)
# seconds and each one's ratio to the CLI, with the CPU named and the date.
# Usage: scripts/bench_peers.sh [RUNS] [T]   (ATTN_VIZ=path/to/attn-viz; scripts/bench.sh part 7)
# Needs the oracles scripts/setup_oracles.sh installs (the environment build/oracles, with
# build/oracles-tl on its path) and the Python module built (build/python, target attn_viz_core).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
T=${2:-512}
threads=${THREADS:-1}
bin=${ATTN_VIZ:-$root/build/attn-viz}
oracles=${ATTN_VIZ_ORACLE_DIR:-$root/build/oracles}
bash "$root/scripts/setup_oracles.sh" "$oracles" >/dev/null
[[ -f $root/build/python/attn_viz/__init__.py ]] || { echo "bench_peers: build/python/attn_viz missing (scripts/build.sh --target attn_viz_core)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=$threads TQDM_DISABLE=1
peer_python=$oracles/bin/python  # the oracles' environment: transformers, TransformerLens, matplotlib
"$peer_python" "$root/scripts/bench_peers.py" make "$work/model" "$work/ids" "$T" >/dev/null 2>&1

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# measure NAME COMMAND...: RUNS fresh runs; prints "NAME wall cpu" (medians, seconds).
measure() {
  local name=$1
  shift
  : >"$work/times"
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/out"
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr"; exit 1; }
    [[ $(find "$work/out" -name '*.png' | wc -l) -ge 144 ]] || { echo "bench_peers: $name wrote no PNG per head"; exit 1; }
    cat "$work/time" >>"$work/times"
  done
  echo "$name $(cut -d' ' -f1 "$work/times" | median) $(awk '{print $2 + $3}' "$work/times" | median)"
}
{
  measure "attn-viz CLI (model)" "$bin" model -q --force --threads "$threads" --model "$work/model" --tokens "$(cat "$work/ids")" --out "$work/out"
  measure "attn_viz package" env PYTHONPATH="$root/build/python" /usr/bin/python3 "$root/scripts/bench_peers.py" attn_viz "$work/model" "$work/ids" "$work/out" "$threads"
  measure "transformers + matplotlib" "$peer_python" "$root/scripts/bench_peers.py" transformers "$work/model" "$work/ids" "$work/out" "$threads"
  measure "TransformerLens + matplotlib" "$peer_python" "$root/scripts/bench_peers.py" transformer_lens "$work/model" "$work/ids" "$work/out" "$threads"
} | awk -F' ' -v cpu="$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')" -v date="$(date -u +%Y-%m-%d)" \
    -v T="$T" -v threads="$threads" -v runs="$runs" '
  { wall = $(NF - 1); c = $NF; $(NF - 1) = ""; $NF = ""; sub(/ +$/, ""); name[NR] = $0; w[NR] = wall; u[NR] = c }
  END {
    printf "%s, %s: GPT-2-shaped 12 x 12, D=768, T=%d, 144 PNGs each, %d thread(s), median of %d\n", cpu, date, T, threads, runs
    printf "%-30s %9s %9s %11s %11s\n", "", "wall s", "CPU s", "wall ratio", "CPU ratio"
    for (i = 1; i <= NR; i++)
      printf "%-30s %9.2f %9.2f %10.1fx %10.1fx\n", name[i], w[i], u[i], w[i] / w[1], u[i] / u[1]
  }'
