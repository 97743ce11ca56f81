#!/usr/bin/env python3
"""attn-viz's Unigram tokenizer.json reader (with its Precompiled normalizer) against SentencePiece
itself (Debian's python3-sentencepiece) on T5's files: t5-base/tokenizer.json was converted from the
spiece.model beside it, and both give the same ids for a text, except where Hugging Face's tokenizers
library (which attn-viz follows, and rust_tokenizers_crosscheck.py checks) parts ways with
SentencePiece, so the random texts leave out those characters:
  - U+0085 (NEXT LINE) is whitespace to tokenizer.json's WhitespaceSplit, and a character to
    SentencePiece;
  - a grapheme cluster under 6 bytes whose first character the charsmap rewrites (ſ + U+FF9E, a
    half-width sound mark) is replaced whole by the tokenizers library, mark and all;
and where two segmentations tie (the same pieces in another order, "." + "........" against
"........" + "."), each Viterbi keeps its own: such a reordering is reported as a tie, not a
mismatch.
The npm cross-check's package approximates the Precompiled normalizer with NFKC; SentencePiece runs the
real charsmap, so this is the check of the charsmap's rules that runs everywhere (Debian only).

  unigram_spm_crosscheck.py ATTN_VIZ_BINARY SHARED_DIR    (ctest: tokenizer-spm-crosscheck)
Random texts from characters the charsmap rewrites (compatibility forms, full-width letters,
ligatures, control characters, odd spaces), scripts, emoji and punctuation. Exits 77 (skipped) when
the module or the files are missing. ATTN_VIZ_TOKENIZER_SEED=N replays a seed."""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

binary, shared = sys.argv[1], sys.argv[2]
folder = os.path.join(shared, "models/tokenizers/t5-base")
if not os.path.exists(os.path.join(folder, "spiece.model")):
    print(f"skipped: no {folder}/spiece.model")
    sys.exit(77)
try:
    import sentencepiece
except ImportError:
    print("skipped: python3-sentencepiece is not installed (scripts/setup.sh installs it)")
    sys.exit(77)

POOLS = [
    ["the", "The", "Once", "upon", "a", "time", "Lily", "don't", "HELLO", "naïve", "café", "translate", "German:"],
    [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2009", "\u200b", "\u2028", "\ufeff", " \n "],
    [".", ",", "!", "?", "'", "\"", "-", "...", "(", ")", "«", "»", "—", "…", "¿", "~", "～", "〜", "・"],
    ["0", "42", "3.14", "½", "²", "①", "Ⅻ", "５", "١٢٣", "㍿", "㎏", "℃", "™", "№"],
    ["ﬁ", "ﬂ", "ﬀ", "Ａ", "ｂｃ", "ｶﾀｶﾅ", "ｱ", "e\u0301", "a\u0308", "Å", "Ω", "ß", "İ", "ǅ", "ſ", "ℌ", "𝐀"],
    ["Привет", "Γειά", "שלום", "مرحبا", "नमस्ते", "こんにちは", "你好", "한국어", "ไทย", "\u1100\u1161"],
    ["😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "\u0001", "\u007f", "\u00ad", "\ufffd"],
]


def random_text(rng):
    return "".join(rng.choice(rng.choice(POOLS)) for _ in range(rng.randint(1, 20)))


seed = int(os.environ.get("ATTN_VIZ_TOKENIZER_SEED", time.time_ns() % 2147483647))
print(f"seed {seed} (replay: ATTN_VIZ_TOKENIZER_SEED={seed})")
rng = random.Random(seed)
texts = [random_text(rng) for _ in range(400)]
processor = sentencepiece.SentencePieceProcessor(model_file=os.path.join(folder, "spiece.model"))
eos = processor.eos_id()
with tempfile.TemporaryDirectory() as scratch:
    inputs = os.path.join(scratch, "texts.jsonl")
    with open(inputs, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": t}) + "\n" for t in texts)
    run = subprocess.run([binary, "tokenize", "--json", "--tokenizer", os.path.join(folder, "tokenizer.json"), "--inputs", inputs],
                         capture_output=True, text=True)
if run.returncode != 0:
    print(f"FAIL: attn-viz tokenize exited {run.returncode}: {run.stderr}")
    sys.exit(1)
ours = [json.loads(line)["ids"] for line in run.stdout.split("\n") if line]
mismatches = ties = 0
for text, ids in zip(texts, ours):
    expected = processor.encode(text) + [eos]
    if ids == expected:
        continue
    # The same pieces in another order spell the same text with the same total score ("." then
    # "........" or the other way round): a tie each Viterbi breaks its own way, not a difference.
    if sorted(ids) == sorted(expected) and processor.decode(ids) == processor.decode(expected):
        ties += 1
        print(f"tie {json.dumps(text)}: ours {ids}, spm {expected}")
        continue
    mismatches += 1
    print(f"MISMATCH {json.dumps(text)}\n  ours {ids}\n  spm  {expected}")
if len(ours) != len(texts):
    print(f"FAIL: attn-viz printed {len(ours)} results for {len(texts)} texts")
    sys.exit(1)
print(f"t5-base: {len(texts) - mismatches}/{len(texts)} texts give SentencePiece's ids ({ties} of them as an equal-score reordering; seed {seed})")
sys.exit(1 if mismatches else 0)
