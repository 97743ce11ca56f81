#!/usr/bin/env bash
# Submits an attn-viz corpus run to Slurm as N shards (a job array) and their merge (a job that
# starts when every shard has succeeded). OUT must be on a filesystem every node sees.
#
#   scripts/slurm/submit.sh -n N -o OUT [-s "SBATCH OPTIONS"] [-m "MERGE OPTIONS"] [--parsable] -- run|model ARGS...
#
#   -n N          number of shards (default 4)
#   -o OUT        OUT/partial_I.json, OUT/shard_I/ (each shard's own report), OUT/logs/, OUT/merged/
#   -s OPTIONS    extra sbatch options for the shards, e.g. "--partition=cpu --cpus-per-task=8 --time=2:00:00"
#   -m OPTIONS    extra attn-viz merge options, e.g. "--allow-partial"
#   --parsable    print only "ARRAY_JOB MERGE_JOB"
#
# ATTN_VIZ names the binary (default: attn-viz on PATH, else this checkout's build/attn-viz).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=4 out="" sbatch_options="" merge_options="" parsable=0
usage() { sed -n '5,13p' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    -n) n=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -s) sbatch_options=$2; shift 2 ;;
    -m) merge_options=$2; shift 2 ;;
    --parsable) parsable=1; shift ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ -n $out && $n =~ ^[1-9][0-9]*$ && $# -gt 0 ]] || usage
if [[ -z ${ATTN_VIZ:-} ]]; then
  ATTN_VIZ=$(command -v attn-viz || echo "$root/build/attn-viz")
fi
export ATTN_VIZ=$(realpath "$ATTN_VIZ")
mkdir -p "$out/logs"
out=$(realpath "$out")

# shellcheck disable=SC2086  # the option strings are split into words on purpose
array=$(sbatch --parsable --array=0-$((n - 1)) --output="$out/logs/shard_%a.log" $sbatch_options \
          "$root/scripts/slurm/shard.sbatch" "$n" "$out" "$@")
array=${array%%;*}  # "JOB;CLUSTER" on federated clusters
# shellcheck disable=SC2086
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes --output="$out/logs/merge.log" \
          "$root/scripts/slurm/merge.sbatch" "$n" "$out" $merge_options)
merge=${merge%%;*}
if ((parsable)); then
  echo "$array $merge"
else
  echo "shards: job array $array (tasks 0-$((n - 1))), logs in $out/logs/"
  echo "merge:  job $merge, after every shard succeeded: $out/merged/ (log: $out/logs/merge.log)"
fi
