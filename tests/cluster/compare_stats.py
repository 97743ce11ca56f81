#!/usr/bin/python3
"""Compares two attn-viz stats.json files: every number to a relative tolerance (default 1e-9,
with an absolute floor of 1e-15 for values that are zero up to rounding), everything else
exactly. Keys named with --ignore are skipped at the top level. Exit 0 when they agree, 1 (with
the first differences on stderr) otherwise.

  compare_stats.py A/stats.json B/stats.json [--relative 1e-9] [--ignore KEY]...
"""
import argparse
import json
import math
import sys


def differences(a, b, path, relative, out):
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                out.append(f"{path}: keys {sorted(a.keys() ^ b.keys())} in only one file")
            for key in sorted(a.keys() & b.keys()):
                differences(a[key], b[key], f"{path}.{key}", relative, out)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{path}: {len(a)} entries against {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                differences(x, y, f"{path}[{i}]", relative, out)
        elif a != b:
            out.append(f"{path}: {a!r} against {b!r}")
        return
    if not math.isclose(a, b, rel_tol=relative, abs_tol=1e-15):
        out.append(f"{path}: {a!r} against {b!r} (relative difference {abs(a - b) / max(abs(a), abs(b)):.3g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--relative", type=float, default=1e-9)
    parser.add_argument("--ignore", action="append", default=[])
    args = parser.parse_args()
    with open(args.a) as f:
        a = json.load(f)
    with open(args.b) as f:
        b = json.load(f)
    for key in args.ignore:
        a.pop(key, None)
        b.pop(key, None)
    out = []
    differences(a, b, "", args.relative, out)
    if out:
        print(f"{args.a} and {args.b} differ in {len(out)} places:", *out[:20], sep="\n  ", file=sys.stderr)
        return 1
    print(f"{args.a} and {args.b} agree (numbers to {args.relative:g} relative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
