#!/usr/bin/env bash
# An attn-viz corpus run as N shards with GNU parallel (Debian package `parallel`), on this machine
# or over ssh on several, then their merge: the same split and the same files as scripts/slurm/,
# for machines without Slurm.
#
#   scripts/parallel_shards.sh -n N -o OUT [-j JOBS] [-S SSHLOGINS] [-m "MERGE OPTIONS"] -- run|model ARGS...
#
#   -n N          number of shards (default 4)
#   -o OUT        OUT/partial_I.json, OUT/shard_I/, OUT/logs/joblog.txt, OUT/merged/
#   -j JOBS       shards at a time per machine (default 1: each shard uses every core of its machine)
#   -S SSHLOGINS  GNU parallel's --sshlogin, e.g. ":,node1,node2" (":" is this machine); every
#                 machine must see OUT, the inputs and the binary under the same paths
#   -m OPTIONS    extra attn-viz merge options, e.g. "--allow-partial"
#
# Stops at the first failed shard (its exit status is this script's). ATTN_VIZ names the binary
# (default: attn-viz on PATH, else this checkout's build/attn-viz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=4 out="" jobs=1 sshlogins="" merge_options=""
usage() { sed -n '6,15p' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    -n) n=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -S) sshlogins=$2; shift 2 ;;
    -m) merge_options=$2; shift 2 ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ -n $out && $n =~ ^[1-9][0-9]*$ && $# -gt 0 ]] || usage
command -v parallel >/dev/null || { echo "parallel_shards.sh: GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
if [[ -z ${ATTN_VIZ:-} ]]; then
  ATTN_VIZ=$(command -v attn-viz || echo "$root/build/attn-viz")
fi
bin=$(realpath "$ATTN_VIZ")
mkdir -p "$out/logs"
out=$(realpath "$out")

remote=()
[[ -n $sshlogins ]] && remote=(--sshlogin "$sshlogins" --workdir "$PWD")
# -q: the command's words reach the shard as given (spaces, quotes), on this machine or over ssh.
parallel -q --halt soon,fail=1 -j "$jobs" --joblog "$out/logs/joblog.txt" "${remote[@]}" \
  "$bin" "$@" --shard "{}/$n" --out "$out/shard_{}" --save-partial "$out/partial_{}.json" -q \
  ::: $(seq 0 $((n - 1))) </dev/null

partials=()
for ((i = 0; i < n; i++)); do partials+=("$out/partial_$i.json"); done
# shellcheck disable=SC2086  # the option string is split into words on purpose
"$bin" merge "${partials[@]}" --out "$out/merged" $merge_options
