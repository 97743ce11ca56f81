#!/usr/bin/env bash
# Regroups and sorts the #include block of each given file (default: every C++ file of the project)
# with clang-format-14 and .clang-format, touching nothing else. Run it after adding includes.
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
((${#files[@]})) || mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
for f in "${files[@]}"; do
  first=$(grep -n '^#include' "$f" | head -1 | cut -d: -f1)
  last=$(grep -n '^#include' "$f" | tail -1 | cut -d: -f1)
  [ -n "$first" ] || continue
  clang-format-14 -i --lines="$first:$last" "$f"
done
