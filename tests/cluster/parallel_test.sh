#!/usr/bin/env bash
# GNU parallel on this machine: a corpus as 4 shards (scripts/parallel_shards.sh, 2 at a time), and
# as 3 shards through parallel's --sshlogin to 127.0.0.1, merged, must equal one single run to 1e-9
# relative; a failing shard stops the run with its exit status and no merge.
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
/usr/bin/python3 "$root/tests/cluster/compare_stats.py" --ignore corpora --ignore provenance "$WORK/data/single/stats.json" "$WORK/out/merged/stats.json"

# The same over "ssh" (-S, parallel's --sshlogin, with its --workdir and quoting for a remote shell)
# to 2 job slots on 127.0.0.1: sshd is not installed here, so PARALLEL_SSH names a stand-in that,
# as ssh does, runs the command line it is given with the user's login shell, on this machine, with
# the session's SHELL and HOME set as sshd sets them (parallel's remote wrapper execs $SHELL: CI
# environments may run without one).
cat >"$WORK/ssh" <<'SSH'
#!/usr/bin/env bash
while [[ $1 == -* ]]; do shift; done  # ssh's options
echo "$1" >>"${0%/*}/ssh_hosts"       # the host
shift
[[ ${1:-} == -- ]] && shift
IFS=: read -r _ _ _ _ _ home shell < <(getent passwd "$(id -u)")
export HOME=${home:-/} SHELL=${shell:-/bin/sh}
exec "$SHELL" -c "$*"
SSH
chmod +x "$WORK/ssh"
PARALLEL_SSH=$WORK/ssh "$root/scripts/parallel_shards.sh" -n 3 -o "$WORK/ssh_out" -S 2/127.0.0.1 -- \
  run --weights "$WORK/data/w/weights.json" --inputs "$WORK/data/corpus.jsonl" --threads 1 >"$WORK/ssh.log"
grep -q "coverage: 3 of 3 shards of $WORK/data/corpus.jsonl, 40 sequences" "$WORK/ssh.log" \
  || { echo "the merge over ssh does not report full coverage:"; cat "$WORK/ssh.log"; exit 1; }
grep -q 127.0.0.1 "$WORK/ssh_hosts" || { echo "the shards did not go through ssh"; exit 1; }
/usr/bin/python3 "$root/tests/cluster/compare_stats.py" --ignore corpora --ignore provenance "$WORK/data/single/stats.json" "$WORK/ssh_out/merged/stats.json"

# 41 shards of 40 sequences: shard 40 holds none and fails (exit 3); nothing is merged.
status=0
shards -n 41 -o "$WORK/bad" >"$WORK/bad.log" 2>&1 || status=$?
if ((status != 3)) || [[ -e $WORK/bad/merged ]] || ! grep -q "shard 40/41 holds no sequences" "$WORK/bad.log"; then
  echo "a failing shard gave exit status $status:"; cat "$WORK/bad.log"; exit 1
fi
echo "1 passed, 0 failed"
