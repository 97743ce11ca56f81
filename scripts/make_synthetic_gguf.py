#!/usr/bin/python3
"""Writes a synthetic Llama model as GGUF v3 with random weights, for benchmarks and tests.

Usage: make_synthetic_gguf.py --out FILE.gguf [--type Q8_0|Q4_K|F16|F32] [--kv-heads 8|32]
                              [--dim 4096 --layers 32 --heads 32 --ffn 11008 --vocab 32000] [--seed N]

The defaults are Llama-2-7B's shape (dim 4096, 32 layers, 32 heads, FFN 11008, vocab 32000,
context 4096, RoPE base 10000, RMSNorm epsilon 1e-5); --kv-heads 8 makes it grouped-query.
Tensor names, shapes, orientation and metadata keys are those llama.cpp's convert_hf_to_gguf.py
writes for a llama model: token_embd.weight, blk.N.{attn_norm,attn_q,attn_k,attn_v,attn_output,
ffn_norm,ffn_gate,ffn_up,ffn_down}.weight, output_norm.weight, output.weight (matrices stored with
dims [in, out], i.e. row-major [out, in]); llama.* hyper-parameters; a "llama" (SentencePiece)
tokenizer whose vocabulary is synthetic: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>,
then distinct pieces ("\u2581", characters, "\u2581" + characters, then letter strings of growing
length), each with a score and a token type.

Every 2-D weight has --type, the norms are F32 (1 + small noise). Values are random with a
Llama-like magnitude (standard deviation ~0.02, so activations stay finite through 32 layers);
quantized types are written as valid ggml blocks directly (random int8 / nibbles and 6-bit
scales with small random f16 scales), never through float. The data is generated and written in
chunks of rows, so the file (7B: ~7.2 GB Q8_0, ~3.8 GB Q4_K, 13.5 GB F16) never sits in memory.
"""
import argparse
import itertools
import string
import struct
import sys

import numpy as np

WEIGHT_STD = 0.02  # standard deviation of every dequantized matrix entry
ALIGNMENT = 32     # GGUF's default general.alignment
CHUNK_ELEMENTS = 1 << 23
MIN_VOCAB = 3 + 256 + 1

# name: (ggml type id, values per block, bytes per block, general.file_type), as ggml.h / llama.h.
TYPES = {
    "F32": (0, 1, 4, 0),      # LLAMA_FTYPE_ALL_F32
    "F16": (1, 1, 2, 1),      # LLAMA_FTYPE_MOSTLY_F16
    "Q8_0": (8, 32, 34, 7),   # LLAMA_FTYPE_MOSTLY_Q8_0
    "Q4_K": (12, 256, 144, 14),  # LLAMA_FTYPE_MOSTLY_Q4_K_S (Q4_K throughout)
}

# GGUF metadata value types (gguf.h's gguf_type).
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
# llama.cpp's token types (llama_token_type).
NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6


def gguf_string(s):
    data = s.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def metadata_value(kind, value):
    if kind == STRING:
        return struct.pack("<I", STRING) + gguf_string(value)
    if kind == BOOL:
        return struct.pack("<IB", BOOL, 1 if value else 0)
    if isinstance(kind, tuple):  # (ARRAY, element kind)
        element = kind[1]
        head = struct.pack("<IIQ", ARRAY, element, len(value))
        if element == STRING:
            return head + b"".join(gguf_string(s) for s in value)
        return head + np.asarray(value, dtype={F32: "<f4", I32: "<i4"}[element]).tobytes()
    return struct.pack("<I", kind) + struct.pack({U32: "<I", F32: "<f"}[kind], value)


def vocabulary(size):
    """The synthetic SentencePiece vocabulary: (tokens, scores, token types)."""
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    space = "\u2581"
    characters = [c for c in string.printable if not c.isspace()]

    def pieces():
        yield space
        yield from characters
        yield from (space + c for c in characters)
        for length in itertools.count(2):
            for letters in itertools.product(string.ascii_lowercase, repeat=length):
                word = "".join(letters)
                yield word
                yield space + word

    need = size - len(tokens)
    tokens += list(itertools.islice(pieces(), need))
    types += [NORMAL] * need
    # SentencePiece scores: 0 for special and byte tokens, then falling, so shorter pieces merge first.
    scores = [0.0] * (size - need) + [-float(i) for i in range(need)]
    return tokens, scores, types


def tensor_list(a):
    """[(name, dims innermost first, ggml type name)] in the file's order."""
    head = a.dim // a.heads
    kv = a.kv_heads * head
    tensors = [("token_embd.weight", [a.dim, a.vocab], a.type)]
    for layer in range(a.layers):
        p = f"blk.{layer}."
        tensors += [
            (p + "attn_norm.weight", [a.dim], "F32"),
            (p + "attn_q.weight", [a.dim, a.dim], a.type),
            (p + "attn_k.weight", [a.dim, kv], a.type),
            (p + "attn_v.weight", [a.dim, kv], a.type),
            (p + "attn_output.weight", [a.dim, a.dim], a.type),
            (p + "ffn_norm.weight", [a.dim], "F32"),
            (p + "ffn_gate.weight", [a.dim, a.ffn], a.type),
            (p + "ffn_up.weight", [a.dim, a.ffn], a.type),
            (p + "ffn_down.weight", [a.ffn, a.dim], a.type),
        ]
    tensors += [("output_norm.weight", [a.dim], "F32"), ("output.weight", [a.dim, a.vocab], a.type)]
    return tensors


def tensor_bytes(dims, type_name):
    _, block_elements, block_bytes, _ = TYPES[type_name]
    return int(np.prod(dims)) // block_elements * block_bytes


def metadata(a):
    tokens, scores, types = vocabulary(a.vocab)
    name = f"synthetic-llama-{a.layers}x{a.dim}"
    return [
        ("general.architecture", STRING, "llama"),
        ("general.type", STRING, "model"),
        ("general.name", STRING, name),
        ("llama.block_count", U32, a.layers),
        ("llama.context_length", U32, a.context),
        ("llama.embedding_length", U32, a.dim),
        ("llama.feed_forward_length", U32, a.ffn),
        ("llama.attention.head_count", U32, a.heads),
        ("llama.attention.head_count_kv", U32, a.kv_heads),
        ("llama.rope.freq_base", F32, a.rope_theta),
        ("llama.attention.layer_norm_rms_epsilon", F32, a.rms_eps),
        ("general.file_type", U32, TYPES[a.type][3]),
        ("llama.vocab_size", U32, a.vocab),
        ("llama.rope.dimension_count", U32, a.dim // a.heads),
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.pre", STRING, "default"),
        ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens),
        ("tokenizer.ggml.scores", (ARRAY, F32), scores),
        ("tokenizer.ggml.token_type", (ARRAY, I32), types),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("tokenizer.ggml.unknown_token_id", U32, 0),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
        ("tokenizer.ggml.add_eos_token", BOOL, False),
        ("general.quantization_version", U32, 2),
    ]


def header(a, tensors):
    """Everything before the tensor data, padded to the alignment."""
    kvs = metadata(a)
    out = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(kvs))]
    out += [gguf_string(key) + metadata_value(kind, value) for key, kind, value in kvs]
    offset = 0
    for name, dims, type_name in tensors:
        out.append(gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) +
                   struct.pack("<IQ", TYPES[type_name][0], offset))
        offset += tensor_bytes(dims, type_name)
        offset += -offset % ALIGNMENT
    data = b"".join(out)
    return data + b"\0" * (-len(data) % ALIGNMENT)


def random_f16(rng, n, scale):
    """n positive float16 values uniform in [scale / 2, 3 scale / 2], as little-endian bytes (n, 2)."""
    return (rng.uniform(0.5, 1.5, n) * scale).astype("<f2").view(np.uint8).reshape(n, 2)


def q8_0_blocks(rng, n):
    """n / 32 Q8_0 blocks: f16 d, 32 int8 q; value = d q. Random bytes are int8 uniform in
    [-128, 127] (standard deviation ~73.9)."""
    blocks = n // 32
    out = np.empty((blocks, 34), dtype=np.uint8)
    out[:, 0:2] = random_f16(rng, blocks, WEIGHT_STD / 73.9)
    out[:, 2:] = np.frombuffer(rng.bytes(blocks * 32), dtype=np.uint8).reshape(blocks, 32)
    return out


def q4_k_blocks(rng, n):
    """n / 256 Q4_K super-blocks: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins of 8
    sub-blocks, 128 bytes of nibbles; value = d scale q - dmin min (ggml's dequantize_row_q4_K).
    Scales are uniform in 16..63 and each min within 2 of its scale with dmin = 7.5 d, so a
    sub-block's values are about d scale (q - 7.5): centred, standard deviation d * 41.9 * 4.61."""
    blocks = n // 256
    out = np.empty((blocks, 144), dtype=np.uint8)
    d = (rng.uniform(0.5, 1.5, blocks) * WEIGHT_STD / (41.9 * 4.61)).astype("<f2")
    out[:, 0:2] = d.view(np.uint8).reshape(blocks, 2)
    out[:, 2:4] = (d.astype(np.float32) * 7.5).astype("<f2").view(np.uint8).reshape(blocks, 2)
    sc = rng.integers(16, 64, (blocks, 8), dtype=np.uint8)
    m = np.clip(sc.astype(np.int16) + rng.integers(-2, 3, (blocks, 8)), 0, 63).astype(np.uint8)
    # The packing get_scale_min_k4 reads: bytes 0..3 scales 0..3 (top bits: scales 4..7's high
    # two), bytes 4..7 mins 0..3 (top bits: mins 4..7's high two), bytes 8..11 the low nibbles
    # of scales 4..7 and (high nibble) mins 4..7.
    out[:, 4:8] = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    out[:, 8:12] = m[:, :4] | ((m[:, 4:] >> 4) << 6)
    out[:, 12:16] = (sc[:, 4:] & 0x0F) | ((m[:, 4:] & 0x0F) << 4)
    out[:, 16:] = np.frombuffer(rng.bytes(blocks * 128), dtype=np.uint8).reshape(blocks, 128)
    return out


def random_values(rng, n, type_name):
    if type_name == "Q8_0":
        return q8_0_blocks(rng, n)
    if type_name == "Q4_K":
        return q4_k_blocks(rng, n)
    values = rng.standard_normal(n, dtype=np.float32) * np.float32(WEIGHT_STD)
    return values.astype("<f2" if type_name == "F16" else "<f4")


def write_tensor(f, rng, dims, type_name):
    if len(dims) == 1:  # a norm: F32 around 1
        f.write((1 + 0.05 * rng.standard_normal(dims[0])).astype("<f4").tobytes())
    else:
        row, rows = dims[0], dims[1]
        block_rows = max(1, CHUNK_ELEMENTS // row)
        for start in range(0, rows, block_rows):
            f.write(random_values(rng, row * min(block_rows, rows - start), type_name).tobytes())
    f.write(b"\0" * (-f.tell() % ALIGNMENT))


def check_shape(a):
    problems = []
    if a.dim % a.heads:
        problems.append(f"--dim {a.dim} is not a multiple of --heads {a.heads}")
    elif (a.dim // a.heads) % 2:
        problems.append(f"the head size {a.dim // a.heads} is odd (RoPE rotates pairs)")
    if a.heads % a.kv_heads:
        problems.append(f"--heads {a.heads} is not a multiple of --kv-heads {a.kv_heads}")
    block = TYPES[a.type][1]
    for option, value in (("--dim", a.dim), ("--ffn", a.ffn)):  # the rows of every matrix
        if value % block:
            problems.append(f"{option} {value} is not a multiple of {a.type}'s block of {block} values")
    for option in ("dim", "layers", "heads", "kv_heads", "ffn", "vocab", "context"):
        if getattr(a, option) < 1:
            problems.append(f"--{option.replace('_', '-')} must be positive")
    if a.vocab < MIN_VOCAB:
        problems.append(f"--vocab {a.vocab} is too small (at least {MIN_VOCAB}: 3 special tokens, 256 byte tokens and \"\u2581\")")
    if problems:
        sys.exit("make_synthetic_gguf.py: " + "; ".join(problems))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="the .gguf file to write")
    p.add_argument("--type", choices=sorted(TYPES), default="Q8_0", help="type of every 2-D weight (norms are F32)")
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=32)
    p.add_argument("--ffn", type=int, default=11008)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--context", type=int, default=4096)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--rms-eps", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    check_shape(a)
    rng = np.random.default_rng(a.seed)
    tensors = tensor_list(a)
    with open(a.out, "wb") as f:
        f.write(header(a, tensors))
        for _, dims, type_name in tensors:
            write_tensor(f, rng, dims, type_name)
    total = sum(tensor_bytes(dims, t) for _, dims, t in tensors)
    print(f"wrote {a.out}: {len(tensors)} tensors, {total / 1e9:.2f} GB of weights ({a.type})")


if __name__ == "__main__":
    main()
