# Shared by the cluster tests (sourced): a layer, a random corpus and the single run over it that
# the sharded runs must reproduce.
#
#   skip_status          77 (ctest: skipped) for a test that cannot run here, or 1 (failed) with
#                        ATTN_VIZ_REQUIRE_CLUSTER=1, as in CI (.ci/run), where a skip would hide it
#
#   make_corpus_fixture DIR BIN [SEQUENCES]
#     DIR/w/weights.json   the planted-heads layer (attn-viz synth: D = 48, H = 6)
#     DIR/corpus.jsonl     SEQUENCES (default 40) random sequences, T in [2, 17], tokens drawn from
#                          6 words (so duplicate-token and induction scores are defined), some
#                          with padding; the seed is printed (ATTN_VIZ_TEST_SEED=N replays it)
#     DIR/single/          `attn-viz run --inputs DIR/corpus.jsonl` over the whole corpus
#     DIR/single.json      its partial (--save-partial)

skip_status=77
[[ ${ATTN_VIZ_REQUIRE_CLUSTER:-0} == 1 ]] && skip_status=1

make_corpus_fixture() {
  local dir=$1 bin=$2 sequences=${3:-40}
  local seed=${ATTN_VIZ_TEST_SEED:-$(( $(date +%s%N) % 1000000007 ))}
  echo "test seed: $seed (ATTN_VIZ_TEST_SEED=$seed replays it)"
  mkdir -p "$dir"
  "$bin" synth -q --out "$dir/w"
  awk -v seed="$seed" -v n="$sequences" -v d=48 'BEGIN {
    srand(seed)
    for (i = 0; i < n; i++) {
      T = 2 + int(rand() * 16)
      printf "{\"tokens\": ["
      for (t = 0; t < T; t++) printf "%s\"w%d\"", (t ? ", " : ""), int(rand() * 6)
      printf "], \"embeddings\": ["
      for (t = 0; t < T; t++) {
        printf "%s[", (t ? ", " : "")
        for (k = 0; k < d; k++) printf "%s%.7f", (k ? ", " : ""), 4 * rand() - 2
        printf "]"
      }
      printf "]"
      if (rand() < 0.25) {   # a padded sequence: its last key masked
        printf ", \"attention_mask\": ["
        for (t = 0; t < T; t++) printf "%s%d", (t ? ", " : ""), (t < T - 1)
        printf "]"
      }
      printf "}\n"
      if (rand() < 0.1) printf "\n"   # blank lines are not sequences
    }
  }' >"$dir/corpus.jsonl"
  "$bin" run -q --weights "$dir/w/weights.json" --inputs "$dir/corpus.jsonl" --out "$dir/single" \
    --save-partial "$dir/single.json" --threads 1
}
