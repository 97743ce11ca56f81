#!/usr/bin/python3
"""Writes a random attention layer and input sequence in attn-viz's formats, tensors as .npy.

Usage: make_layer.py --out DIR --d-model 768 --heads 12 --tokens 512 [--causal] [--seed N] [--weight-scale F]
Writes DIR/weights.json (+ W_*.npy, b_*.npy) and DIR/input.json (+ x.npy, tokens "t0".."tN").
--weight-scale multiplies every weight and bias (default 1): 0.1 scales the attention scores by 0.01,
so every head is near-uniform (BENCHMARKS.md section 21).
"""
import argparse
import json
import os

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--d-model", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--tokens", type=int, required=True)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weight-scale", type=float, default=1.0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    os.makedirs(a.out, exist_ok=True)
    D = a.d_model
    doc = {"format": "attn-viz/weights@1", "d_model": D, "num_heads": a.heads, "causal": a.causal}
    for name, shape, scale in [("W_Q", (D, D), 2.0), ("W_K", (D, D), 2.0), ("W_V", (D, D), 1.0), ("W_O", (D, D), 1.0),
                               ("b_Q", (D,), 0.1), ("b_K", (D,), 0.1), ("b_V", (D,), 0.1), ("b_O", (D,), 0.1)]:
        t = rng.uniform(-scale, scale, shape).astype(np.float32) / np.sqrt(D) * np.float32(a.weight_scale)
        np.save(os.path.join(a.out, name + ".npy"), t)
        doc[name] = {"npy": name + ".npy"}
    with open(os.path.join(a.out, "weights.json"), "w") as f:
        json.dump(doc, f)
    np.save(os.path.join(a.out, "x.npy"), rng.standard_normal((a.tokens, D)).astype(np.float32))
    with open(os.path.join(a.out, "input.json"), "w") as f:
        json.dump({"tokens": [f"t{i}" for i in range(a.tokens)], "embeddings": {"npy": "x.npy"}}, f)


if __name__ == "__main__":
    main()
