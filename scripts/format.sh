#!/usr/bin/env bash
# Formats the project's C++ files with clang-format-14 and .clang-format: the given files, or every
# tracked .cpp and .hpp. With --check, changes nothing and fails (listing the files and the diff)
# when any file differs from its formatted self; .ci/run runs that before the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [[ "${1:-}" == "--check" ]]; then check=1; shift; fi
files=("$@")
((${#files[@]})) || mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
command -v clang-format-14 >/dev/null || { echo "format: clang-format-14 is missing (scripts/setup.sh installs it)" >&2; exit 2; }
if ((!check)); then
  clang-format-14 -i "${files[@]}"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  clang-format-14 "$f" | cmp -s - "$f" || unformatted+=("$f")
done
if ((${#unformatted[@]})); then
  for f in "${unformatted[@]}"; do clang-format-14 "$f" | diff -u --label "$f" --label "$f (formatted)" "$f" - | head -40; done
  echo "format: ${#unformatted[@]} file(s) differ from clang-format-14's output: ${unformatted[*]}" >&2
  echo "format: run scripts/format.sh to format them" >&2
  exit 1
fi
echo "format: ${#files[@]} files formatted as .clang-format says"
