#!/usr/bin/python3
"""Writes the fuzz seed corpus: small valid and near-valid files per target, under
tests/fuzz/corpus/<target>/. Deterministic (fixed seed), so re-running reproduces the files."""
import json
import os
import random
import struct

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
