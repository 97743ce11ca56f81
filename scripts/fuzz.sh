#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang-14, -fsanitize=fuzzer,address,undefined) into
# build-fuzz/ and runs each one for SECONDS, one after another, starting from its seed corpus in
# tests/fuzz/corpus/<target>/ (written by tests/fuzz/make_corpus.py) and its recorded findings,
# with its dictionary tests/fuzz/dict/<target>.dict. Reports per target the seconds, the runs
# made, the coverage (edges) and features reached, and what it found; findings (crash-*, leak-*,
# timeout-*, oom-* files) land in build-fuzz/findings/<target>/ and become regression tests in
# tests/fuzz/regressions/<target>/ (replayed by tests/models/test_reliability_fuzz.cpp).
#   scripts/fuzz.sh SECONDS [TARGET...]     (default 60 seconds, every target)
# ATTN_VIZ_FUZZ_MAX_LEN=N runs every target with -max_len=N instead of its own (below): N = 64
# makes many more short inputs a second, where a bug in a small file shows sooner.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
ATTN_VIZ_SETUP_EXTRA="${ATTN_VIZ_SETUP_EXTRA:-} clang" "$root/scripts/setup.sh"

build=$root/build-fuzz
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -DATTN_VIZ_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j2 >/dev/null

# Longest input per target: room for deep nesting and long strings in the JSON ones, and for
# tokenizers with long pieces; the binary formats need less to reach every check.
declare -A max_len=(
  [fuzz_weights_json]=200000 [fuzz_input_json]=200000 [fuzz_corpus_jsonl]=200000 [fuzz_safetensors]=200000
  [fuzz_npy]=100000 [fuzz_llama2c_checkpoint]=100000 [fuzz_llama2c_tokenizer]=200000
  [fuzz_token_file]=200000 [fuzz_hf_config]=200000 [fuzz_gguf]=100000 [fuzz_hf_tokenizer]=200000
  [fuzz_hf_folder]=100000)

# Targets that encode text: -len_control=0 lets inputs reach -max_len from the start (libFuzzer
# otherwise lengthens them slowly, and a merge loop or regex that is quadratic or worse shows only
# on long texts), so with -timeout below a slow encoder is a finding within the run.
declare -A extra_options=([fuzz_llama2c_tokenizer]=-len_control=0 [fuzz_hf_tokenizer]=-len_control=0)

# A target's dictionary, with the shared ones it names in "# include: NAME.dict" lines in front.
dictionary() {
  local dict_dir=$root/tests/fuzz/dict target=$1 out=$build/dict/$1.dict
  mkdir -p "$build/dict"
  sed -n 's/^# include: *//p' "$dict_dir/$target.dict" | while read -r shared; do cat "$dict_dir/$shared"; done >"$out"
  cat "$dict_dir/$target.dict" >>"$out"
  echo "$out"
}

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fuzz_weights_json fuzz_input_json fuzz_corpus_jsonl fuzz_npy fuzz_safetensors
           fuzz_llama2c_checkpoint fuzz_llama2c_tokenizer fuzz_token_file fuzz_hf_config fuzz_gguf
           fuzz_hf_tokenizer fuzz_hf_folder)
fi
status=0
printf '%-26s %8s %10s %6s %8s %s\n' target seconds runs cov features findings
for target in "${targets[@]}"; do
  [[ -v "max_len[$target]" ]] || { echo "fuzz.sh: unknown target $target" >&2; exit 2; }
  work=$build/corpus/$target findings=$build/findings/$target
  rm -rf "$findings"  # a finding is reported by the run that made it; copy it to tests/fuzz/regressions/
  mkdir -p "$work" "$findings"
  log=$build/$target.log
  start=$(date +%s)
  # -timeout: a single input taking 10 s is a finding (a hang: the tokenizer targets encode texts
  # up to 200 KB, which takes well under a second); -rss_limit_mb: so is a 2 GB process
  # (the targets set a 256 MB memory budget, so a refused huge shape never comes near it).
  # A 256 KB stack (ulimit -s) makes recursion over untrusted nesting crash at about 2,000 levels,
  # which the deep seeds (3,000) and grown inputs reach, rather than at the 8 MB default's ~40,000.
  (ulimit -s 256 && exec "$build/tests/fuzz/$target" -max_total_time="$seconds" \
    -max_len="${ATTN_VIZ_FUZZ_MAX_LEN:-${max_len[$target]}}" -dict="$(dictionary "$target")" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 ${extra_options[$target]:-} -artifact_prefix="$findings/" "$work" "$root/tests/fuzz/corpus/$target" \
    $(ls -d "$root/tests/fuzz/regressions/$target" 2>/dev/null)) >"$log" 2>&1 || true
  elapsed=$(($(date +%s) - start))
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)  # none when the first input crashed
  cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  features=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")
  found=$(find "$findings" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [[ -n "$found" ]]; then
    status=1
    printf '%-26s %8s %10s %6s %8s %s\n' "$target" "$elapsed" "$runs" "$cov" "$features" \
      "$(echo "$found" | xargs -n1 basename | tr '\n' ' ')"
    grep -m3 -E 'ERROR: |SUMMARY: |==[0-9]+==' "$log" | sed 's/^/    /' || true
  else
    printf '%-26s %8s %10s %6s %8s %s\n' "$target" "$elapsed" "$runs" "$cov" "$features" none
  fi
done
echo "logs: $build/<target>.log; findings: $build/findings/<target>/"
exit $status
