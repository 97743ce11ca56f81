#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang-14, -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ and runs each one for SECONDS, one after another, starting from its seed corpus in
# tests/fuzz/corpus/<target>/. Reports per target the runs made and what it found; findings
# (crash-*, leak-*, timeout-*, oom-* files) land in build-fuzz/findings/<target>/ and become
# regression tests in tests/formats/test_reliability_fuzz.cpp.
#   scripts/fuzz.sh SECONDS [TARGET...]     (default 60 seconds, every target)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
ATTN_VIZ_SETUP_EXTRA="${ATTN_VIZ_SETUP_EXTRA:-} clang" "$root/scripts/setup.sh"

build=$root/build-fuzz
cmake -S "$root" -B "$build" -DATTN_VIZ_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2 >/dev/null

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fuzz_weights_json fuzz_input_json fuzz_corpus_jsonl fuzz_npy fuzz_safetensors
           fuzz_llama2c_checkpoint fuzz_llama2c_tokenizer)
fi
status=0
printf '%-26s %8s %10s %s\n' target seconds runs findings
for target in "${targets[@]}"; do
  work=$build/corpus/$target findings=$build/findings/$target
  rm -rf "$findings"  # a finding is reported by the run that made it; copy it to tests/fuzz/regressions/
  mkdir -p "$work" "$findings"
  log=$build/$target.log
  start=$(date +%s)
  # -timeout: a single input taking 10 s is a finding; -rss_limit_mb: so is a 2 GB process
  # (the targets set a 256 MB memory budget, so a refused huge shape never comes near it).
  "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$root/tests/fuzz/corpus/$target" \
    $(ls -d "$root/tests/fuzz/regressions/$target" 2>/dev/null) >"$log" 2>&1 || true
  elapsed=$(($(date +%s) - start))
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  found=$(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [[ -n "$found" ]]; then
    status=1
    printf '%-26s %8s %10s %s\n' "$target" "$elapsed" "$runs" "$(echo "$found" | xargs -n1 basename | tr '\n' ' ')"
    grep -m3 -E 'ERROR: |SUMMARY: |==[0-9]+==' "$log" | sed 's/^/    /' || true
  else
    printf '%-26s %8s %10s %s\n' "$target" "$elapsed" "$runs" "none"
  fi
done
echo "logs: $build/<target>.log; findings: $build/findings/<target>/"
exit $status
