#!/usr/bin/env python3
"""attn-viz's tokenizer.json reader against Hugging Face's own tokenizers library (Rust, the PyPI
package `tokenizers`, pinned), the implementation transformers runs: every tokenizer.json under
SHARED/models encodes a few hundred fresh random texts, with the special tokens its template adds, and
the ids must be equal. The texts mix scripts, emoji, accents, odd spaces and control characters, and
the characters where SentencePiece's own normalizer and the tokenizers library part ways (U+0085, a
half-width sound mark after a letter: see unigram_spm_crosscheck.py). A hundred random text pairs
({"text", "text_pair"} lines, as `--text-pair` encodes them) must give equal ids and token type ids
(the library's encode(a, b): its post-processor's pair template).

  rust_tokenizers_crosscheck.py ATTN_VIZ_BINARY SHARED_DIR CACHE_DIR   (ctest: tokenizer-rust-crosscheck)
The package (12 MB, no dependencies needed) is installed once into CACHE_DIR with pip. Exits 77
(skipped) with a "skipped:" line when pip, the package index or the model files are unavailable, or 1
for the first two with ATTN_VIZ_REQUIRE_PYPI=1. ATTN_VIZ_TOKENIZER_SEED=N replays a seed."""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

PACKAGE = "tokenizers==0.23.3"  # pinned: a new release is a deliberate update

binary, shared, cache = sys.argv[1], sys.argv[2], sys.argv[3]


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pypi_unavailable import unavailable  # noqa: E402


models = os.path.join(shared, "models")
if not os.path.isdir(models):
    print(f"skipped: no model files at {models}")
    sys.exit(77)
target = os.path.join(cache, PACKAGE.replace("==", "-"))
if not os.path.isdir(os.path.join(target, "tokenizers")):
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                              "--no-warn-script-location", "--target", target, PACKAGE], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        unavailable(f"pip could not install {PACKAGE}: {(install.stderr.strip().splitlines() or ['no output'])[-1]}")
sys.path.insert(0, target)
from tokenizers import Tokenizer  # noqa: E402

POOLS = [
    ["the", "The", "Once", "upon", "a", "time", "Lily", "dog", "don't", "I'm", "we'll", "HELLO", "naïve", "café", "résumé"],
    [" ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "\r\n", "\u00a0", "\u3000", "\u2009", "\u200b", "\u2028", "\ufeff", "\u0085"],
    [".", ",", "!", "?", ";", ":", "'", "\"", "-", "...", "(", ")", "[", "]", "<", ">", "/", "@", "#", "«", "»", "—", "…", "¿", "～"],
    ["0", "1", "7", "42", "123", "2024", "3.14", "1,000", "١٢٣", "５", "½", "²", "①", "Ⅻ", "㍿", "㎏", "℃", "™"],
    ["é", "ñ", "ü", "ß", "Ç", "Ω", "e\u0301", "a\u0308", "ﬁ", "ﬂ", "Å", "Ａ", "ｂｃ", "ｶﾀｶﾅ", "\uff9e", "ſ", "ℌ", "𝐀", "İ"],
    ["Привет", "Γειά", "שלום", "مرحبا", "नमस्ते", "こんにちは", "你好", "世界", "한국어", "ไทย", "\u1100\u1161"],
    ["😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "❤️", "🦙", "\u0001", "\u007f", "\u00ad", "\ufffd"],
    ["<s>", "</s>", "<unk>", "<pad>", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "<|endoftext|>"],
]

seed = int(os.environ.get("ATTN_VIZ_TOKENIZER_SEED", time.time_ns() % 2147483647))
print(f"seed {seed} (replay: ATTN_VIZ_TOKENIZER_SEED={seed}); {PACKAGE}")
rng = random.Random(seed)
def random_text():
    return "".join(rng.choice(rng.choice(POOLS)) for _ in range(rng.randint(1, 24)))


texts = [random_text() for _ in range(300)]
pairs = [(random_text(), random_text()) for _ in range(100)]
files = sorted(os.path.join(root, name) for root, _, names in os.walk(models) for name in names if name == "tokenizer.json")
mismatches = 0
with tempfile.TemporaryDirectory() as scratch:
    inputs, pair_inputs = os.path.join(scratch, "texts.jsonl"), os.path.join(scratch, "pairs.jsonl")
    with open(inputs, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": t}) + "\n" for t in texts)
    with open(pair_inputs, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": a, "text_pair": b}) + "\n" for a, b in pairs)
    for file in files:
        reference = Tokenizer.from_file(file)
        # Saved padding and truncation settings (T5's file has both) are not what analysis wants.
        reference.no_padding()
        reference.no_truncation()
        run = subprocess.run([binary, "tokenize", "--json", "--tokenizer", file, "--inputs", inputs], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {file}: attn-viz tokenize exited {run.returncode}: {run.stderr}")
            mismatches += 1
            continue
        ours = [json.loads(line)["ids"] for line in run.stdout.split("\n") if line]
        differ = 0
        for text, ids in zip(texts, ours):
            expected = reference.encode(text).ids
            if ids != expected:
                differ += 1
                print(f"MISMATCH {file} {json.dumps(text)}\n  ours {ids}\n  rust {expected}")
        if len(ours) != len(texts):
            print(f"FAIL {file}: attn-viz printed {len(ours)} results for {len(texts)} texts")
            differ += 1
        print(f"{file}: {len(texts) - differ}/{len(texts)} texts give equal ids")
        mismatches += differ
        run = subprocess.run([binary, "tokenize", "--json", "--tokenizer", file, "--inputs", pair_inputs],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL {file}: attn-viz tokenize of pairs exited {run.returncode}: {run.stderr}")
            mismatches += 1
            continue
        ours = [json.loads(line) for line in run.stdout.split("\n") if line]
        differ = 0 if len(ours) == len(pairs) else 1
        for (a, b), got in zip(pairs, ours):
            expected = reference.encode(a, b)
            if got["ids"] != expected.ids or got["token_type_ids"] != expected.type_ids:
                differ += 1
                print(f"MISMATCH {file} pair {json.dumps([a, b])}\n  ours {got['ids']} types {got['token_type_ids']}"
                      f"\n  rust {expected.ids} types {expected.type_ids}")
        print(f"{file}: {len(pairs) - differ}/{len(pairs)} text pairs give equal ids and token types")
        mismatches += differ
print(f"{mismatches} mismatches (seed {seed})" if mismatches else f"all {len(files) * (len(texts) + len(pairs))} encodings equal")
sys.exit(1 if mismatches else 0)
