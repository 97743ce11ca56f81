#!/usr/bin/python3
"""The Python workflow attn-viz replaces, for side-by-side benchmarks (scripts/bench.sh).

What a researcher writes today: PyTorch's torch.nn.MultiheadAttention (average_attn_weights=False)
for the per-head maps, numpy for entropy and np.corrcoef for head correlation, and matplotlib
imshow + colorbar + savefig for one PNG per head. It reads the same attn-viz/weights@1 and input
files (tensors as .npy references) and produces the same things: every per-head PNG, the entropy
per head and the correlation matrix.

Usage: peer_baseline.py --weights W.json --input X.json --out DIR
"""
import argparse
import json
import os
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402


def load_tensor(value, base):
    return np.load(os.path.join(base, value["npy"])) if isinstance(value, dict) else np.asarray(value, np.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    start = time.perf_counter()
    torch.set_num_threads(os.cpu_count())

    # Load the layer into torch.nn.MultiheadAttention ([out, in] weights: transpose ours).
    with open(a.weights) as f:
        doc = json.load(f)
    base = os.path.dirname(a.weights)
    D, H = doc["d_model"], doc["num_heads"]
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True).eval()
    with torch.no_grad():
        w = {k: torch.from_numpy(load_tensor(doc[k], base)) for k in ["W_Q", "W_K", "W_V", "W_O"]}
        mha.in_proj_weight.copy_(torch.cat([w["W_Q"].T, w["W_K"].T, w["W_V"].T]))
        mha.out_proj.weight.copy_(w["W_O"].T)
        b = {k: torch.from_numpy(load_tensor(doc[k], base)) if k in doc else torch.zeros(D) for k in ["b_Q", "b_K", "b_V", "b_O"]}
        mha.in_proj_bias.copy_(torch.cat([b["b_Q"], b["b_K"], b["b_V"]]))
        mha.out_proj.bias.copy_(b["b_O"])
    with open(a.input) as f:
        seq = json.load(f)
    x = torch.from_numpy(load_tensor(seq["embeddings"], os.path.dirname(a.input)))
    T = x.shape[0]
    tokens = seq.get("tokens", [str(i) for i in range(T)])
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if doc.get("causal") else None
    loaded = time.perf_counter()

    with torch.no_grad():
        _, weights = mha(x[None], x[None], x[None], attn_mask=mask, need_weights=True, average_attn_weights=False)
    attn = weights[0].numpy()  # [H, T, T]
    computed = time.perf_counter()

    # Statistics: entropy per head (nats) and the head correlation matrix.
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.nansum(np.where(attn > 0, attn * np.log(attn), 0.0), axis=-1).mean(axis=-1)
    corr = np.corrcoef(attn.reshape(H, -1))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "stats.json"), "w") as f:
        json.dump({"entropy": entropy.tolist(), "correlation": corr.tolist()}, f)
    stats = time.perf_counter()

    # One labelled heatmap per head.
    label_every = max(1, T // 40)
    for h in range(H):
        fig, ax = plt.subplots(figsize=(6, 5), dpi=100)
        im = ax.imshow(attn[h], cmap="viridis", vmin=0, vmax=attn[h].max(), interpolation="nearest")
        ticks = list(range(0, T, label_every))
        ax.set_xticks(ticks)
        ax.set_xticklabels([tokens[i] for i in ticks], rotation=90, fontsize=6)
        ax.set_yticks(ticks)
        ax.set_yticklabels([tokens[i] for i in ticks], fontsize=6)
        ax.set_title(f"head {h} - entropy {entropy[h]:.2f} nats")
        fig.colorbar(im, ax=ax)
        fig.savefig(os.path.join(a.out, f"head_{h:02d}.png"))
        plt.close(fig)
    done = time.perf_counter()
    print(json.dumps({"load_s": loaded - start, "attention_s": computed - loaded, "stats_s": stats - computed,
                      "png_s": done - stats, "total_s": done - start}))


if __name__ == "__main__":
    main()
