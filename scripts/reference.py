#!/usr/bin/python3
"""PyTorch reference for attn-viz.

Builds a random torch.nn.MultiheadAttention, writes it in attn-viz's formats, runs it with
PyTorch, and saves PyTorch's per-head attention weights (average_attn_weights=False) and output,
so a test can compare attn-viz with them:

  DIR/weights.json          attn-viz/weights@1, tensors as .npy beside it
  DIR/mha.safetensors       the module's state_dict (for --layout torch-mha)
  DIR/input.json            {"tokens", "embeddings": {"npy": "x.npy"}, "attention_mask"?}
  DIR/context.json          with --context S: the key/value sequence (cross-attention)
  DIR/expected_attention.npy  float32 [H, T, S]
  DIR/expected_output.npy     float32 [T, D]

Usage: reference.py --out DIR --d-model 12 --heads 3 --tokens 7 [--causal] [--no-bias]
                    [--context S] [--padding 2,5] [--seed N]
"""
import argparse
import json
import os
import struct

import numpy as np
import torch


def write_safetensors(path, tensors):
    """Minimal safetensors writer: 8-byte header length, JSON header, raw little-endian F32."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--d-model", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--context", type=int, default=0, help="cross-attention: length S of the key/value sequence")
    p.add_argument("--padding", default="", help="comma-separated key positions to mask as padding")
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args()
    if a.seed is not None:
        torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    D, H, T = a.d_model, a.heads, a.tokens
    S = a.context or T

    mha = torch.nn.MultiheadAttention(D, H, bias=not a.no_bias, batch_first=True).eval()
    with torch.no_grad():  # make the biases non-trivial (PyTorch initialises them to zero)
        if not a.no_bias:
            mha.in_proj_bias.uniform_(-0.3, 0.3)
            mha.out_proj.bias.uniform_(-0.3, 0.3)
    x = torch.randn(T, D)
    c = torch.randn(S, D) if a.context else x
    padded = [int(i) for i in a.padding.split(",") if i != ""]

    attn_mask = torch.triu(torch.ones(T, S, dtype=torch.bool), 1) if a.causal else None
    key_padding = None
    if padded:
        key_padding = torch.zeros(1, S, dtype=torch.bool)
        key_padding[0, padded] = True
    with torch.no_grad():
        out, weights = mha(x[None], c[None], c[None], attn_mask=attn_mask, key_padding_mask=key_padding,
                           need_weights=True, average_attn_weights=False)
    np.save(os.path.join(a.out, "expected_attention.npy"), weights[0].numpy().astype(np.float32))
    np.save(os.path.join(a.out, "expected_output.npy"), out[0].numpy().astype(np.float32))

    # attn-viz/weights@1: Q = x W_Q + b_Q, so W_Q is the transpose of PyTorch's [out, in] block.
    w_in = mha.in_proj_weight.detach()
    tensors = {"W_Q": w_in[:D].T, "W_K": w_in[D:2 * D].T, "W_V": w_in[2 * D:].T, "W_O": mha.out_proj.weight.detach().T}
    if not a.no_bias:
        b_in = mha.in_proj_bias.detach()
        tensors.update({"b_Q": b_in[:D], "b_K": b_in[D:2 * D], "b_V": b_in[2 * D:], "b_O": mha.out_proj.bias.detach()})
    doc = {"format": "attn-viz/weights@1", "d_model": D, "num_heads": H, "causal": a.causal}
    for name, t in tensors.items():
        np.save(os.path.join(a.out, name + ".npy"), t.contiguous().numpy().astype(np.float32))
        doc[name] = {"npy": name + ".npy"}
    with open(os.path.join(a.out, "weights.json"), "w") as f:
        json.dump(doc, f)
    write_safetensors(os.path.join(a.out, "mha.safetensors"), mha.state_dict())

    def write_sequence(name, tensor, mask):
        np.save(os.path.join(a.out, name + ".npy"), tensor.numpy().astype(np.float32))
        seq = {"tokens": [f"tok{i}" for i in range(tensor.shape[0])], "embeddings": {"npy": name + ".npy"}}
        if mask is not None:
            seq["attention_mask"] = mask
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            json.dump(seq, f)

    mask = [0 if j in padded else 1 for j in range(S)] if padded else None
    if a.context:
        write_sequence("input", x, None)
        write_sequence("context", c, mask)
    else:
        write_sequence("input", x, mask)


if __name__ == "__main__":
    main()
