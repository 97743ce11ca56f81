#!/usr/bin/python3
"""Writes the fuzz seed corpus: small valid and near-valid files per target, under
tests/fuzz/corpus/<target>/. Deterministic (fixed seed), so re-running reproduces the files."""
import base64
import json
import os
import random
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261122)
random.seed(20261122)


def out(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy_bytes(a, version=1):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, version=(version, 0))
    return buf.getvalue()


def rounded(a):
    return np.round(a.astype(np.float64), 3).tolist()


# npy: float32/float64, ranks 0..3, versions 1 and 2, plus truncated and wrong-dtype files.
for i, shape in enumerate([(), (3,), (2, 3), (2, 1, 4), (0, 5)]):
    out("fuzz_npy", f"f4_{i}.npy", npy_bytes(rng.standard_normal(shape).astype("<f4")))
out("fuzz_npy", "f8.npy", npy_bytes(rng.standard_normal((3, 2)).astype("<f8")))
out("fuzz_npy", "v2.npy", npy_bytes(rng.standard_normal((2, 2)).astype("<f4"), version=2))
out("fuzz_npy", "truncated.npy", npy_bytes(rng.standard_normal((4, 4)).astype("<f4"))[:-7])
out("fuzz_npy", "int32.npy", npy_bytes(np.arange(6, dtype="<i4").reshape(2, 3)))
out("fuzz_npy", "fortran.npy", npy_bytes(np.asfortranarray(rng.standard_normal((2, 3)).astype("<f4"))))

# weights@1 JSON: valid layers (with and without biases), and near-valid ones.
def weights_doc(D, H, biases=True, causal=False):
    doc = {"format": "attn-viz/weights@1", "d_model": D, "num_heads": H, "causal": causal}
    for k in ("W_Q", "W_K", "W_V", "W_O"):
        doc[k] = rounded(rng.standard_normal((D, D)))
    if biases:
        for k in ("b_Q", "b_K", "b_V", "b_O"):
            doc[k] = rounded(rng.standard_normal(D))
    return doc

out("fuzz_weights_json", "d4h2.json", json.dumps(weights_doc(4, 2)))
out("fuzz_weights_json", "d3h1_causal.json", json.dumps(weights_doc(3, 1, biases=False, causal=True)))
bad = weights_doc(4, 2)
bad["W_K"][2] = bad["W_K"][2][:3]
out("fuzz_weights_json", "ragged.json", json.dumps(bad))
bad = weights_doc(2, 2)
bad["W_O"] = {"npy": "w_o.npy"}
out("fuzz_weights_json", "npy_ref.json", json.dumps(bad))
bad = weights_doc(2, 1)
bad["d_model"] = 1048576
out("fuzz_weights_json", "huge_d.json", json.dumps(bad))

# Input sequences: the first byte is the model width minus one (the target's convention).
def sequence_doc(T, D, tokens=True, mask=False):
    doc = {"embeddings": rounded(rng.standard_normal((T, D)))}
    if tokens:
        doc["tokens"] = [f"tok{t}" for t in range(T)]
    if mask:
        doc["attention_mask"] = [1] * (T - 1) + [0]
    return doc

for i, (T, D, tokens, mask) in enumerate([(1, 1, True, False), (3, 4, True, True), (5, 8, False, False), (2, 3, True, True)]):
    out("fuzz_input_json", f"seq_{i}.bin", bytes([D - 1]) + json.dumps(sequence_doc(T, D, tokens, mask)).encode())
out("fuzz_input_json", "mismatch.bin", bytes([1]) + json.dumps({"tokens": ["a"], "embeddings": [[1, 2], [3, 4]]}).encode())

# JSONL corpus: several lines of width 4, one of them broken.
lines = [json.dumps(sequence_doc(T, 4, tokens=T % 2 == 0, mask=T > 2)) for T in (1, 2, 3, 5)]
out("fuzz_corpus_jsonl", "four.jsonl", "\n".join(lines) + "\n")
out("fuzz_corpus_jsonl", "broken.jsonl", lines[0] + "\n{\"embeddings\": [[1, 2]]\n\n" + lines[1])

# safetensors: F32/F16/BF16/F64 tensors, metadata, and a truncated file.
def safetensors_bytes(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name, (dtype, arr) in tensors.items():
        raw = arr.tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)

f32 = rng.standard_normal((3, 4)).astype("<f4")
st = safetensors_bytes({"a": ("F32", f32), "b": ("F16", rng.standard_normal(5).astype("<f2")),
                        "c": ("BF16", (rng.standard_normal((2, 2)).astype("<f4").view("<u4") >> 16).astype("<u2")),
                        "d": ("F64", rng.standard_normal(3).astype("<f8"))}, {"format": "pt"})
out("fuzz_safetensors", "mixed.safetensors", st)
out("fuzz_safetensors", "truncated.safetensors", st[:-5])
out("fuzz_safetensors", "int.safetensors", safetensors_bytes({"i": ("I32", np.arange(4, dtype="<i4"))}))
out("fuzz_safetensors", "empty.safetensors", safetensors_bytes({}))

# llama2.c checkpoints: tiny valid models (shared and separate classifier) and a truncated one.
def checkpoint_bytes(dim, hidden, layers, heads, kv, vocab, seq, shared=True):
    head = dim // heads
    floats = vocab * dim + layers * (2 * dim + dim * dim + 2 * kv * head * dim + dim * dim + 3 * dim * hidden)
    floats += dim + seq * head + (0 if shared else vocab * dim)
    header = struct.pack("<7i", dim, hidden, layers, heads, kv, vocab if shared else -vocab, seq)
    return header + rng.standard_normal(floats).astype("<f4").tobytes()

out("fuzz_llama2c_checkpoint", "tiny.bin", checkpoint_bytes(4, 6, 1, 2, 1, 5, 3))
out("fuzz_llama2c_checkpoint", "tiny_wcls.bin", checkpoint_bytes(4, 4, 2, 1, 1, 3, 2, shared=False))
out("fuzz_llama2c_checkpoint", "truncated.bin", checkpoint_bytes(4, 6, 1, 2, 2, 5, 3)[:-4])

# Tokenizers: mode byte 0 (the rest is tokenizer.bin) and 1 (the rest is text to encode).
def tokenizer_bytes(pieces, max_len):
    data = struct.pack("<i", max_len)
    for i, p in enumerate(pieces):
        b = p.encode()
        data += struct.pack("<fi", float(i % 5) - 2.0, len(b)) + b
    return data

pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + [" ", "t", "h", "e", " t", "th", "he", " the"]
out("fuzz_llama2c_tokenizer", "valid.bin", b"\x00" + tokenizer_bytes(pieces, 6))
out("fuzz_llama2c_tokenizer", "small.bin", b"\x00" + tokenizer_bytes(["<unk>", "<s>", "</s>", " ", "a"], 3))
out("fuzz_llama2c_tokenizer", "truncated.bin", b"\x00" + tokenizer_bytes(pieces[:10], 6)[:-3])
for i, text in enumerate(["the theta", "héllo wörld\n", "\xff\xfe bytes", "aba abab ba", ""]):
    out("fuzz_llama2c_tokenizer", f"text_{i}.txt", b"\x01" + text.encode("utf-8", "surrogateescape"))

# Deep nesting in every JSON target: a value nested past any limit (3,000 levels: small enough for
# a seed, deep enough to overflow the 256 KB stack scripts/fuzz.sh gives the targets if anything
# recursed over it), and one nested exactly to the parsers' limit of 64 levels.
def nested(levels, inner="0"):
    return "[" * levels + inner + "]" * levels

deep, at_limit = 3000, 63  # the limit counts the document's own object as one level
weights_text = json.dumps(weights_doc(2, 1))
for name, levels in (("deep", deep), ("at_limit", at_limit)):
    out("fuzz_weights_json", f"format_{name}.json", weights_text.replace('"attn-viz/weights@1"', nested(levels), 1))
    out("fuzz_input_json", f"tokens_{name}.bin", bytes([1]) + ('{"embeddings": [[1, 2]], "tokens": ' + nested(levels, '"a"') + "}").encode())
    out("fuzz_corpus_jsonl", f"embeddings_{name}.jsonl", lines[0] + "\n" + '{"embeddings": ' + nested(levels) + "}\n")
    deep_st = safetensors_bytes({"a": ("F32", f32)})
    header_len = struct.unpack("<Q", deep_st[:8])[0]
    header = deep_st[8:8 + header_len].decode().rstrip().replace('"shape": [3, 4]', '"shape": ' + nested(levels - 1), 1)
    header += " " * ((8 - len(header) % 8) % 8)
    out("fuzz_safetensors", f"shape_{name}.safetensors", struct.pack("<Q", len(header)) + header.encode() + deep_st[8 + header_len:])
out("fuzz_input_json", "embeddings_deep.bin", bytes([0]) + ('{"embeddings": ' + nested(deep) + "}").encode())

# Token label files: a JSON list, lines (with "\r\n" and invalid UTF-8), a bad item, and the deep
# and at-the-limit nestings above.
out("fuzz_token_file", "list.json", json.dumps(["the", " cat", "é", "\u2581sat", ""]).replace('""', "12, 3.5"))
out("fuzz_token_file", "lines.txt", b"the\n cat\r\n\xff\xfe caf\xc3\xa9\n\xe2\x96\x81sat\n")
out("fuzz_token_file", "bad_item.json", '["a", {"k": [1, 2]}, "b"]')
for name, levels in (("deep", deep), ("at_limit", at_limit + 1)):  # the list itself is level 1
    out("fuzz_token_file", f"{name}.json", '["a", ' + nested(levels - 1, '"b"') + "]")

# Hugging Face config.json files of a few families, one with a bad count, and deep values.
out("fuzz_hf_config", "llama.json", json.dumps({"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
                                                 "num_hidden_layers": 2, "rope_theta": 10000.0}))
out("fuzz_hf_config", "gpt.json", json.dumps({"n_embd": 48, "n_head": 3, "n_layer": 1, "multi_query": True,
                                               "rotary_emb_base": 500000}))
out("fuzz_hf_config", "negative.json", json.dumps({"d_model": 8, "num_heads": -2, "rope_theta": 0.5}))
for name, levels in (("deep", deep), ("at_limit", at_limit)):
    out("fuzz_hf_config", f"heads_{name}.json", '{"hidden_size": 8, "num_attention_heads": ' + nested(levels) + "}")

# GGUF: a tiny llama model (F32, with Q8_0 and Q4_K tensors), its tokenizer, and a truncated copy.
def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b

def gguf_bytes(kvs, tensors, alignment=32):
    body = b""
    for key, (kind, value) in kvs.items():
        body += gguf_string(key)
        if kind == "u32":
            body += struct.pack("<II", 4, value)
        elif kind == "f32":
            body += struct.pack("<If", 6, value)
        elif kind == "str":
            body += struct.pack("<I", 8) + gguf_string(value)
        elif kind == "strs":
            body += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(gguf_string(v) for v in value)
        elif kind == "f32s":
            body += struct.pack("<IIQ", 9, 6, len(value)) + struct.pack(f"<{len(value)}f", *value)
    infos, data = b"", b""
    for name, (dims, ggml_type, raw) in tensors.items():
        data += b"\0" * (-len(data) % alignment)
        infos += gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}q", *dims)
        infos += struct.pack("<IQ", ggml_type, len(data))
        data += raw
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + body + infos
    return head + b"\0" * (-len(head) % alignment) + data

def f32_tensor(*dims):
    return (list(dims), 0, rng.standard_normal(int(np.prod(dims))).astype("<f4").tobytes())

def q8_0_tensor(*dims):  # random int8 values with a random fp16 scale per 32
    blocks = int(np.prod(dims)) // 32
    raw = b"".join(np.float16(rng.uniform(-0.1, 0.1)).tobytes() + rng.integers(-128, 128, 32).astype(np.int8).tobytes()
                   for _ in range(blocks))
    return (list(dims), 8, raw)

gguf_pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "\u2581a"]
D, F, V = 32, 8, len(gguf_pieces)
llama_kvs = {"general.architecture": ("str", "llama"), "llama.block_count": ("u32", 1), "llama.embedding_length": ("u32", D),
             "llama.feed_forward_length": ("u32", F), "llama.attention.head_count": ("u32", 4),
             "llama.attention.head_count_kv": ("u32", 2), "llama.context_length": ("u32", 8),
             "llama.attention.layer_norm_rms_epsilon": ("f32", 1e-5), "tokenizer.ggml.model": ("str", "llama"),
             "tokenizer.ggml.tokens": ("strs", gguf_pieces), "tokenizer.ggml.scores": ("f32s", [0.0] * V)}
llama_tensors = {"token_embd.weight": f32_tensor(D, V), "output_norm.weight": f32_tensor(D),
                 "blk.0.attn_norm.weight": f32_tensor(D), "blk.0.attn_q.weight": q8_0_tensor(D, D),
                 "blk.0.attn_k.weight": f32_tensor(D, D // 2), "blk.0.attn_v.weight": f32_tensor(D, D // 2),
                 "blk.0.attn_output.weight": q8_0_tensor(D, D), "blk.0.ffn_norm.weight": f32_tensor(D),
                 "blk.0.ffn_gate.weight": f32_tensor(D, F), "blk.0.ffn_up.weight": f32_tensor(D, F),
                 "blk.0.ffn_down.weight": f32_tensor(F, D),
                 "extra.q4_k": ([256], 12, np.float16(0.5).tobytes() + np.float16(0.25).tobytes() + rng.integers(0, 256, 140).astype(np.uint8).tobytes())}
tiny = gguf_bytes(llama_kvs, llama_tensors)
out("fuzz_gguf", "tiny_llama.gguf", tiny)
out("fuzz_gguf", "truncated.gguf", tiny[:len(tiny) // 2])
out("fuzz_gguf", "aligned64.gguf", gguf_bytes({"general.alignment": ("u32", 64)}, {"a": f32_tensor(3), "b": f32_tensor(2, 2)}, 64))

# Hugging Face tokenizer.json files: byte-level BPE (GPT-2; Llama 3's Split + ByteLevel),
# SentencePiece-style BPE with byte fallback (Llama 2), WordPiece with the BERT normalizer, and
# hostile ones (merges of unknown tokens, absurd ids, a negative word length, deep nesting).
sys.path.insert(0, os.path.join(here, "..", "..", "scripts"))
from reference_hf_transformer import bytes_to_unicode  # noqa: E402

def bpe_vocab(base, merges):
    vocab = {t: i for i, t in enumerate(base)}
    for m in merges:
        vocab.setdefault(m.replace(" ", ""), len(vocab))
    return vocab

gpt2_merges = ["\u0120 t", "h e", "\u0120t he", "a b", "ab ab", "\u0120 w", "o r", "\u0120w or", "l d", "\u0120wor ld"]
gpt2_vocab = bpe_vocab([bytes_to_unicode()[b] for b in range(256)], gpt2_merges)
gpt2_tokenizer = {
    "version": "1.0",
    "added_tokens": [{"id": len(gpt2_vocab), "content": "<|endoftext|>", "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "", "end_of_word_suffix": "",
              "fuse_unk": False, "byte_fallback": False, "vocab": gpt2_vocab, "merges": gpt2_merges}}
out("fuzz_hf_tokenizer", "gpt2.json", json.dumps(gpt2_tokenizer))
llama3 = json.loads(json.dumps(gpt2_tokenizer))
llama3["model"]["ignore_merges"] = True
llama3["model"]["merges"] = [m.split(" ") for m in gpt2_merges]
llama3["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
     "behavior": "Isolated", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
llama3["post_processor"] = {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}},
                                                                    {"Sequence": {"id": "A", "type_id": 0}}],
                            "pair": [], "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [len(gpt2_vocab)], "tokens": ["<|endoftext|>"]}}}
out("fuzz_hf_tokenizer", "llama3_split.json", json.dumps(llama3))

sp_base = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "b", "t", "h", "e", "H", "l", "o"]
sp_merges = ["\u2581 t", "h e", "\u2581t he", "a b", "ab ab", "H e", "l l", "He ll", "Hell o", "\u2581 Hello"]
sp_tokenizer = {
    "version": "1.0",
    "added_tokens": [{"id": 0, "content": "<unk>", "special": True}, {"id": 1, "content": "<s>", "special": True},
                     {"id": 2, "content": "</s>", "special": True}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                       {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "pre_tokenizer": None,
    "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                                {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                 {"type": "ByteFallback"}, {"type": "Fuse"},
                                                 {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": True, "byte_fallback": True, "vocab": bpe_vocab(sp_base, sp_merges), "merges": sp_merges}}
out("fuzz_hf_tokenizer", "llama2_byte_fallback.json", json.dumps(sp_tokenizer))
metaspace = json.loads(json.dumps(sp_tokenizer))
metaspace["normalizer"] = None
metaspace["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
metaspace["decoder"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
out("fuzz_hf_tokenizer", "metaspace.json", json.dumps(metaspace))

wp_vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", ",", "world", "!", "the", "cafe",
                                         "'", "s", "1", "##2", "##3", "ab", "##ab", "x", "##s"])}
wordpiece = {
    "version": "1.0",
    "added_tokens": [{"id": wp_vocab[t], "content": t, "special": True} for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]")],
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                  {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                       "pair": [], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                                      "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
    "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
              "vocab": wp_vocab}}
out("fuzz_hf_tokenizer", "bert_wordpiece.json", json.dumps(wordpiece))
bert_processing = json.loads(json.dumps(wordpiece))
bert_processing["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}
bert_processing["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]}
bert_processing["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, {"type": "Punctuation"}, {"type": "Digits", "individual_digits": True}]}
out("fuzz_hf_tokenizer", "bert_processing.json", json.dumps(bert_processing))

# SentencePiece Unigram as T5 and ALBERT save it: [piece, score] pairs, WhitespaceSplit + Metaspace,
# and a Precompiled normalizer whose one-unit trie leads outside itself (T5's real charsmap is 230 kB).
unigram = {
    "version": "1.0", "added_tokens": [{"id": 1, "content": "</s>", "special": True}],
    "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(struct.pack("<II", 4, 0x7FFFFC00)).decode()},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                      {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}]},
    "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                       "pair": [], "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
    "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False,
              "vocab": [["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0], ["\u2581", -2.0], ["\u2581the", -3.1], ["t", -4.0], ["h", -4.2],
                        ["e", -3.9], ["he", -5.0], ["\u2581t", -4.4], ["caf", -7.5], ["\u00e9", -6.0], ["<0xC3>", -9.0]]}}
out("fuzz_hf_tokenizer", "unigram_precompiled.json", json.dumps(unigram))
unigram["normalizer"] = None
unigram["model"]["byte_fallback"] = True
out("fuzz_hf_tokenizer", "unigram_byte_fallback.json", json.dumps(unigram))

hostile = json.loads(json.dumps(gpt2_tokenizer))
hostile["model"]["merges"] = ["\u0120 zz", "q q"]
out("fuzz_hf_tokenizer", "unknown_merges.json", json.dumps(hostile))
hostile = json.loads(json.dumps(gpt2_tokenizer))
hostile["added_tokens"][0]["id"] = 2**31 - 1
out("fuzz_hf_tokenizer", "absurd_added_id.json", json.dumps(hostile))
hostile = json.loads(json.dumps(sp_tokenizer))
hostile["model"]["vocab"]["\u2581Hello"] = 4000000000
out("fuzz_hf_tokenizer", "absurd_vocab_id.json", json.dumps(hostile))
hostile = json.loads(json.dumps(wordpiece))
hostile["model"]["max_input_chars_per_word"] = -5
out("fuzz_hf_tokenizer", "negative_word_length.json", json.dumps(hostile))
for name, levels in (("deep", deep), ("at_limit", at_limit - 2)):
    out("fuzz_hf_tokenizer", f"merges_{name}.json", json.dumps(gpt2_tokenizer).replace('"merges": [', '"merges": [' + nested(levels, '"a b"') + ", ", 1))

# Hugging Face model folders (tests/fuzz/fuzz_hf_folder.cpp): config.json, then after a NUL byte
# model.safetensors.index.json, beside the target's fixed llama weights (hidden 8, 2 heads, 1 KV
# head, 2 layers, ffn 12, vocab 16): valid configs with and without RoPE scaling, lying ones, the
# other families' configs, and indexes that are valid, lying or point at missing shards.
folder_config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 8, "intermediate_size": 12,
                 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16,
                 "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False}

def folder_input(config, index=None):
    text = json.dumps(config).encode()
    return text if index is None else text + b"\0" + json.dumps(index).encode()

folder_names = ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"] + [
    f"model.layers.{l}.{n}" for l in range(2) for n in (
        "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight", "self_attn.o_proj.weight",
        "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight", "input_layernorm.weight",
        "post_attention_layernorm.weight")]
half = len(folder_names) // 2
folder_index = {"metadata": {"total_size": 0}, "weight_map": {
    n: f"model-0000{1 if i < half else 2}-of-00002.safetensors" for i, n in enumerate(folder_names)}}
out("fuzz_hf_folder", "llama.bin", folder_input(folder_config))
out("fuzz_hf_folder", "llama_sharded.bin", folder_input(folder_config, folder_index))
for name, scaling in (("linear", {"rope_type": "linear", "factor": 4.0}),
                      ("llama3", {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 16}),
                      ("yarn", {"type": "yarn", "factor": 2.0})):
    out("fuzz_hf_folder", f"rope_{name}.bin", folder_input({**folder_config, "rope_scaling": scaling}))
for name, change in (("wide", {"hidden_size": 16}), ("layers", {"num_hidden_layers": 3}), ("heads", {"num_attention_heads": 3}),
                     ("kv_heads", {"num_key_value_heads": 2}), ("vocab", {"vocab_size": 17}), ("tied", {"tie_word_embeddings": True}),
                     ("qwen2", {"model_type": "qwen2"}), ("head_dim", {"head_dim": 8})):
    out("fuzz_hf_folder", f"lying_{name}.bin", folder_input({**folder_config, **change}))
for name, config in (("gpt2", {"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 2, "n_positions": 32, "vocab_size": 16,
                               "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}),
                     ("gpt_neox", {"model_type": "gpt_neox", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
                                   "intermediate_size": 12, "vocab_size": 16, "max_position_embeddings": 32, "rotary_pct": 0.5,
                                   "use_parallel_residual": False, "layer_norm_eps": 1e-5, "hidden_act": "gelu"}),
                     ("bert", {"model_type": "bert", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 2,
                               "intermediate_size": 12, "vocab_size": 16, "max_position_embeddings": 32, "type_vocab_size": 2,
                               "layer_norm_eps": 1e-12, "hidden_act": "gelu"})):
    out("fuzz_hf_folder", f"family_{name}.bin", folder_input(config))
for name, tensor, shard in (("lying", "lm_head.weight", "model-00002-of-00002.safetensors"),
                            ("missing_shard", "model.norm.weight", "model-00003-of-00003.safetensors"),
                            ("escaping", "model.norm.weight", "../single/model.safetensors"),
                            ("config_as_shard", "model.norm.weight", "config.json")):
    index = json.loads(json.dumps(folder_index))
    index["weight_map"][tensor] = shard
    out("fuzz_hf_folder", f"index_{name}.bin", folder_input(folder_config, index))

# config.json with RoPE scaling of each supported type (fuzz_hf_config).
out("fuzz_hf_config", "rope_linear.json", json.dumps({"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 10000.0,
                                                       "rope_scaling": {"type": "linear", "factor": 2.0}}))
out("fuzz_hf_config", "rope_llama3.json", json.dumps({"hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500000.0,
                                                       "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                                        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}))

# Issue 26's crash and hangs (also in tests/fuzz/regressions/): a llama vocabulary of one token
# (tokenizer.bin, a vocabulary-only GGUF, a GGUF model) that encode read past; 120 KB of text for
# the merge loop (quadratic before: 83 s); a Split pattern that backtracks catastrophically.
out("fuzz_llama2c_tokenizer", "one_token.bin", b"\x00" + tokenizer_bytes([" "], 4))
out("fuzz_llama2c_tokenizer", "two_tokens.bin", b"\x00" + tokenizer_bytes([" ", "  "], 4))
long_text = ""
while len(long_text) < 120 * 1024:
    long_text += "the theta abab \u00e9 " if len(long_text) % 7 else "aba ba the\n"
out("fuzz_llama2c_tokenizer", "long_text.txt", b"\x01" + long_text.encode())
one_token_kvs = {"general.architecture": ("str", "llama"), "tokenizer.ggml.model": ("str", "llama"),
                 "tokenizer.ggml.tokens": ("strs", ["\u2581"]), "tokenizer.ggml.scores": ("f32s", [0.0]),
                 "tokenizer.ggml.bos_token_id": ("u32", 1)}
out("fuzz_gguf", "one_token_vocabulary.gguf", gguf_bytes(one_token_kvs, {}))
out("fuzz_gguf", "one_token_model.gguf", gguf_bytes(one_token_kvs, {"token_embd.weight": f32_tensor(D, 1)}))
catastrophic = json.loads(json.dumps(gpt2_tokenizer))
catastrophic["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Isolated", "invert": False}
out("fuzz_hf_tokenizer", "catastrophic_split.json", json.dumps(catastrophic))
# Three chained Replace normalizers that each make 64 "a" of every "a": the fixed texts' 300 "a"
# would become 78 MB, which the memory budget refuses as the second step writes it.
expanding = json.loads(json.dumps(gpt2_tokenizer))
expand = {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 64}
expanding["normalizer"] = {"type": "Sequence", "normalizers": [expand, expand, expand]}
out("fuzz_hf_tokenizer", "expanding_replace.json", json.dumps(expanding))
# A Unigram vocabulary with one piece as long as the fixed texts' runs of "a" (and a longer one),
# whose prefix tree the walk follows to its end at every position of the run.
long_piece = json.loads(json.dumps(unigram))
long_piece["model"]["vocab"] += [["a", -3.0], ["a" * 300, -1.0], ["a" * 2000, -1.0]]
out("fuzz_hf_tokenizer", "unigram_long_piece.json", json.dumps(long_piece))
