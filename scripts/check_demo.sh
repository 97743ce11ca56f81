#!/usr/bin/env bash
# Checks what scripts/demo.sh wrote in the tree at $1 (CI runs the demo in a fresh copy first):
# a PNG per head, the report, stats.json with its six labelled heads and the findings README.md's
# sample prints (the twins L0H4 and L0H5 redundant: they attend alike and write alike), and the
# attention dump.
set -euo pipefail
tree=$1
out=$tree/out/demo
fail() { echo "check_demo: $*" >&2; exit 1; }
heads=$(ls "$out"/head_*.png 2>/dev/null | wc -l)
[[ $heads -eq 6 ]] || fail "expected 6 head pictures in $out, found $heads"
for f in overview.png correlation.png report.html stats.json heads.csv; do
  [[ -s $out/$f ]] || fail "$out/$f is missing or empty"
done
python3 - "$out/stats.json" "$tree/out/demo-attention.npy" "$tree/README.md" <<'PY' || fail "stats.json or the dump is not what the demo writes (or README.md's sample says)"
import json, struct, sys
stats = json.load(open(sys.argv[1]))
labels = [h["label"] for h in stats["heads"]]
assert labels == ["previous-token", "sink", "diffuse", "self", "next-token", "next-token"], labels
redundant = [f for f in stats["findings"] if f["kind"] == "redundant" and f["found"]]
assert [[h["head"] for h in f["heads"]] for f in redundant] == [[4, 5]], redundant
readme = open(sys.argv[3]).read().split("## What you get", 1)[1].split("```", 2)[1]
printed = readme.split("findings:\n", 1)[1].splitlines()
assert [line.strip() for line in printed if line.strip()] == [f["sentence"] for f in stats["findings"]], printed
raw = open(sys.argv[2], "rb").read()
assert raw[:6] == b"\x93NUMPY", "not a .npy file"
header_len = struct.unpack("<H", raw[8:10])[0]
header = raw[10:10 + header_len].decode()
assert "'<f4'" in header and "(6, 12, 12)" in header, header
assert len(raw) == 10 + header_len + 6 * 12 * 12 * 4, len(raw)
PY
echo "check_demo: the demo wrote its 6 pictures, report, statistics and attention dump"
