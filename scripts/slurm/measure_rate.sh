#!/usr/bin/env bash
# Measures what one shard costs on this machine, for the cost model in docs/cluster.md ("Cost model"):
# CPU seconds per sequence of a corpus run on one thread (one shard per core is how a
# job array uses a node), and the same shard cut from a corpus ten times larger, whose other
# sequences the shard only reads past.
#
#   scripts/slurm/measure_rate.sh [-t TOKENS] [-n SEQUENCES >= 2] [-d D_MODEL] [-H HEADS]   (default 512 20 768 12)
#
# Prints the CPU model, the date, the rates, the peak RSS and the core-hours for 1,000,000 sequences.
# ATTN_VIZ names the binary (default: this checkout's build/attn-viz).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ATTN_VIZ:-$root/build/attn-viz}
T=512 n=20 D=768 H=12
while getopts "t:n:d:H:" opt; do
  case $opt in t) T=$OPTARG ;; n) n=$OPTARG ;; d) D=$OPTARG ;; H) H=$OPTARG ;; *) sed -n '7p' "$0"; exit 2 ;; esac
done
work=$(mktemp -d /tmp/attn-viz-rate.XXXXXX)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$root/scripts/make_layer.py" --out "$work/layer" --d-model "$D" --heads "$H" --tokens "$T"
/usr/bin/python3 - "$work/layer" "$n" "$T" "$D" <<'PY'
import json, sys
import numpy as np
out, n, T, D = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(1)
for i in range(n):
    np.save(f"{out}/x{i}.npy", rng.standard_normal((T, D)).astype(np.float32))
with open(f"{out}/one.jsonl", "w") as one, open(f"{out}/corpus.jsonl", "w") as small, open(f"{out}/corpus10.jsonl", "w") as large:
    one.write(json.dumps({"embeddings": {"npy": "x0.npy"}}) + "\n")
    for i in range(n):
        small.write(json.dumps({"embeddings": {"npy": f"x{i}.npy"}}) + "\n")
    for i in range(10 * n):
        large.write(json.dumps({"embeddings": {"npy": f"x{i // 10}.npy"}}) + "\n")
PY

# "CPU_SECONDS PEAK_RSS_MB" of one run on one thread (user + sys time; the largest resident size).
measure() {
  /usr/bin/python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime, r.ru_maxrss / 1024)' \
    "$bin" run -q --force --threads 1 --weights "$work/layer/weights.json" --out "$work/out" "$@"
}
measure --inputs "$work/layer/corpus.jsonl" >/dev/null  # warm the page cache
read -r fixed _ < <(measure --inputs "$work/layer/one.jsonl")  # loading, JIT, weight similarity, outputs: once per shard
read -r whole whole_rss < <(measure --inputs "$work/layer/corpus.jsonl")
read -r shard shard_rss < <(measure --inputs "$work/layer/corpus10.jsonl" --shard 0/10)
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
awk -v n="$n" -v T="$T" -v D="$D" -v H="$H" -v fixed="$fixed" -v whole="$whole" -v shard="$shard" \
    -v whole_rss="$whole_rss" -v shard_rss="$shard_rss" 'BEGIN {
  per = (whole - fixed) / (n - 1)
  printf "T=%d D=%d H=%d, one thread: %.2f s CPU for 1 sequence, %.2f s for %d: %.4f s per further sequence (%.1f sequences/s per core), peak RSS %.0f MB\n",
         T, D, H, fixed, whole, n, per, 1 / per, whole_rss
  printf "the same %d sequences as shard 0/10 of a corpus of %d: %.2f s CPU (%+.1f%%), peak RSS %.0f MB\n",
         n, 10 * n, shard, 100 * (shard / whole - 1), shard_rss
  printf "1,000,000 sequences: %.1f core-hours (%.2f node-hours on 32-core nodes)\n", 1e6 * per / 3600, 1e6 * per / 3600 / 32
}'
