#!/usr/bin/env bash
# GNU parallel on this machine: a corpus as 4 shards (scripts/parallel_shards.sh, 2 at a time) and
# their merge must equal one single run to 1e-9 relative; a failing shard stops the run with its
# exit status and no merge.
#
#   tests/cluster/parallel_test.sh BIN      (ctest: cluster-parallel; exit 77, skipped, without parallel,
#                                           or 1 with ATTN_VIZ_REQUIRE_CLUSTER=1)
set -euo pipefail
bin=$(realpath "${1:?usage: parallel_test.sh BIN}")
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/cluster/fixture.sh"
command -v parallel >/dev/null || { echo "skipped: GNU parallel not found (scripts/setup.sh installs it)"; exit "$skip_status"; }

WORK=$(mktemp -d /tmp/attn-viz-parallel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export PARALLEL_HOME=$WORK/parallel ATTN_VIZ=$bin  # parallel's state stays out of $HOME

make_corpus_fixture "$WORK/data" "$bin" 40
shards() { "$root/scripts/parallel_shards.sh" -j 2 "$@" -- run --weights "$WORK/data/w/weights.json" \
             --inputs "$WORK/data/corpus.jsonl" --threads 1; }
shards -n 4 -o "$WORK/out" >"$WORK/out.log"
grep -q "coverage: 4 of 4 shards of $WORK/data/corpus.jsonl, 40 sequences" "$WORK/out.log" \
  || { echo "the merge does not report full coverage:"; cat "$WORK/out.log"; exit 1; }
[[ $(wc -l <"$WORK/out/logs/joblog.txt") == 5 ]] || { echo "joblog does not list 4 shards"; exit 1; }
/usr/bin/python3 "$root/tests/cluster/compare_stats.py" --ignore corpora "$WORK/data/single/stats.json" "$WORK/out/merged/stats.json"

# 41 shards of 40 sequences: shard 40 holds none and fails (exit 3); nothing is merged.
status=0
shards -n 41 -o "$WORK/bad" >"$WORK/bad.log" 2>&1 || status=$?
if ((status != 3)) || [[ -e $WORK/bad/merged ]] || ! grep -q "shard 40/41 holds no sequences" "$WORK/bad.log"; then
  echo "a failing shard gave exit status $status:"; cat "$WORK/bad.log"; exit 1
fi
echo "1 passed, 0 failed"
