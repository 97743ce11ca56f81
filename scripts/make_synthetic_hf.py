#!/usr/bin/python3
"""Writes a synthetic Llama model as a Hugging Face folder with random weights, for benchmarks.

Usage: make_synthetic_hf.py --out DIR [--dtype BF16|F16] [--kv-heads 8]
                            [--dim 4096 --layers 32 --heads 32 --ffn 11008 --vocab 32000]
                            [--shard-gb 5] [--seed N]

The defaults are Llama-2-7B's shape, as make_synthetic_gguf.py's (dim 4096, 32 layers, 32 heads,
FFN 11008, vocab 32000, context 4096, RoPE base 10000, RMSNorm epsilon 1e-5): the same model
written as transformers' save_pretrained writes a LlamaForCausalLM. DIR gets config.json,
model-0000N-of-0000M.safetensors shards of at most --shard-gb GB (save_pretrained's default 5)
with model.safetensors.index.json, and a byte-level BPE tokenizer.json of the 256 byte tokens
(no merges, ids 0..255) and <|endoftext|>, so that any text tokenizes.

Every matrix and the embedding are --dtype with standard deviation ~0.02 (activations stay finite
through 32 layers); the norms are 1 + small noise. The data is generated and written in chunks of
rows, so the folder (7B: 13.5 GB) never sits in memory. Only numpy is needed.
"""
import argparse
import json
import os
import struct

import numpy as np

WEIGHT_STD = 0.02
CHUNK_ELEMENTS = 1 << 23


def tensor_list(a):
    """(name, shape) in save_pretrained's order; shapes as nn.Linear's weights, [out, in]."""
    D, F, V, kv = a.dim, a.ffn, a.vocab, a.kv_heads * (a.dim // a.heads)
    tensors = [("model.embed_tokens.weight", (V, D))]
    for l in range(a.layers):
        p = f"model.layers.{l}."
        tensors += [(p + "input_layernorm.weight", (D,)), (p + "self_attn.q_proj.weight", (D, D)),
                    (p + "self_attn.k_proj.weight", (kv, D)), (p + "self_attn.v_proj.weight", (kv, D)),
                    (p + "self_attn.o_proj.weight", (D, D)), (p + "post_attention_layernorm.weight", (D,)),
                    (p + "mlp.gate_proj.weight", (F, D)), (p + "mlp.up_proj.weight", (F, D)),
                    (p + "mlp.down_proj.weight", (D, F))]
    return tensors + [("model.norm.weight", (D,)), ("lm_head.weight", (V, D))]


def as_dtype(values, dtype):
    """float32 values as little-endian F16 or BF16 bytes (BF16: rounded to nearest even)."""
    if dtype == "F16":
        return values.astype("<f2").tobytes()
    bits = values.astype("<f4").view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return rounded.astype("<u2").tobytes()


def write_tensor(f, rng, shape, dtype):
    if len(shape) == 1:  # a norm's weight
        f.write(as_dtype((1 + 0.05 * rng.standard_normal(shape[0])).astype(np.float32), dtype))
        return
    rows, row = shape
    block_rows = max(1, CHUNK_ELEMENTS // row)
    for start in range(0, rows, block_rows):
        n = row * min(block_rows, rows - start)
        f.write(as_dtype(rng.standard_normal(n, dtype=np.float32) * np.float32(WEIGHT_STD), dtype))


def shards(tensors, limit):
    """The tensors cut into consecutive groups of at most `limit` bytes (a larger tensor alone)."""
    groups, size = [[]], 0
    for name, shape in tensors:
        bytes_ = 2 * int(np.prod(shape))
        if groups[-1] and size + bytes_ > limit:
            groups.append([])
            size = 0
        groups[-1].append((name, shape))
        size += bytes_
    return groups


def write_shard(path, group, rng, dtype):
    header, offset = {}, 0
    for name, shape in group:
        end = offset + 2 * int(np.prod(shape))
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, end]}
        offset = end
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode())
        for _, shape in group:
            write_tensor(f, rng, shape, dtype)
    return offset


def bytes_to_unicode():
    """GPT-2's printable stand-in for each byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\u00a1"), ord("\u00ac") + 1)) + \
        list(range(ord("\u00ae"), ord("\u00ff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def tokenizer_json():
    chars = bytes_to_unicode()
    vocab = {chars[b]: b for b in range(256)}
    vocab["<|endoftext|>"] = 256
    return {"model": {"type": "BPE", "vocab": vocab, "merges": []},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            "decoder": {"type": "ByteLevel"},
            "added_tokens": [{"id": 256, "content": "<|endoftext|>", "special": True}]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", choices=["BF16", "F16"], default="BF16")
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, help="default: --heads")
    p.add_argument("--ffn", type=int, default=11008)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--shard-gb", type=float, default=5.0)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    if a.dim % a.heads or a.heads % a.kv_heads or a.vocab < 257:
        p.error("--dim must be a multiple of --heads, --heads of --kv-heads, and --vocab at least 257")
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    groups = shards(tensor_list(a), int(a.shard_gb * 1e9))
    weight_map, total = {}, 0
    for i, group in enumerate(groups):
        file = f"model-{i + 1:05d}-of-{len(groups):05d}.safetensors"
        total += write_shard(os.path.join(a.out, file), group, rng, a.dtype)
        weight_map.update({name: file for name, _ in group})
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": a.dim,
           "intermediate_size": a.ffn, "num_hidden_layers": a.layers, "num_attention_heads": a.heads,
           "num_key_value_heads": a.kv_heads, "vocab_size": a.vocab, "max_position_embeddings": 4096,
           "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
           "torch_dtype": {"BF16": "bfloat16", "F16": "float16"}[a.dtype], "hidden_act": "silu"}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False)
    print(f"{a.out}: {len(groups)} shards, {total / 1e9:.2f} GB of {a.dtype}")


if __name__ == "__main__":
    main()
