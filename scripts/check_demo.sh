#!/usr/bin/env bash
# Checks what scripts/demo.sh wrote in the tree at $1 (CI runs the demo in a fresh copy first):
# a PNG per head, the report, stats.json with its six labelled heads and the twins L0H4 and L0H5
# found redundant (they attend alike and write alike), the attention dump, and that README.md's
# sample output (the first code block under "## What you get") is what the demo printed.
set -euo pipefail
tree=$1
out=$tree/out/demo
fail() { echo "check_demo: $*" >&2; exit 1; }
heads=$(ls "$out"/head_*.png 2>/dev/null | wc -l)
[[ $heads -eq 6 ]] || fail "expected 6 head pictures in $out, found $heads"
for f in overview.png correlation.png report.html stats.json heads.csv; do
  [[ -s $out/$f ]] || fail "$out/$f is missing or empty"
done
python3 - "$out/stats.json" "$tree/out/demo-attention.npy" <<'PY' || fail "stats.json or the dump is not what the demo writes"
import json, struct, sys
stats = json.load(open(sys.argv[1]))
labels = [h["label"] for h in stats["heads"]]
assert labels == ["previous-token", "sink", "diffuse", "self", "next-token", "next-token"], labels
redundant = [f for f in stats["findings"] if f["kind"] == "redundant" and f["found"]]
assert [[h["head"] for h in f["heads"]] for f in redundant] == [[4, 5]], redundant
raw = open(sys.argv[2], "rb").read()
assert raw[:6] == b"\x93NUMPY", "not a .npy file"
header_len = struct.unpack("<H", raw[8:10])[0]
header = raw[10:10 + header_len].decode()
assert "'<f4'" in header and "(6, 12, 12)" in header, header
assert len(raw) == 10 + header_len + 6 * 12 * 12 * 4, len(raw)
PY
readme_block() { awk '/^## What you get/ {section = 1} section && /^```$/ {if (inside) exit; inside = 1; next} inside' "$tree/README.md"; }
diff <(readme_block) "$tree/out/demo-output.txt" >&2 ||
  fail "README.md's sample output under \"## What you get\" (<) is not what the demo printed (>, out/demo-output.txt)"
echo "check_demo: the demo wrote its 6 pictures, report, statistics and attention dump, and printed README.md's sample"
