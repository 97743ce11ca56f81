#!/usr/bin/python3
"""Float64 reference forward of a Hugging Face Gemma 2 or Gemma 3 text model (gemma2, gemma3_text).

Writes a random model folder in HF's layout and names and runs its forward pass in float64 as
transformers' modeling_gemma2 / modeling_gemma3 define it, written here independently of attn-viz:
  - embeddings times the normalizer sqrt(hidden_size), cast to the model's dtype (float32 here);
  - Gemma's RMSNorm x / sqrt(mean(x^2) + eps) * (1 + w) on every norm: input_layernorm before
    attention, post_attention_layernorm on its output, pre_feedforward_layernorm before the MLP,
    post_feedforward_layernorm on its output, each output added to the residual stream;
  - GeGLU MLP down(gelu_tanh(gate) * up) (hidden_activation gelu_pytorch_tanh);
  - scores scaled by query_pre_attn_scalar^-1/2, soft-capped cap * tanh(s / cap) when
    attn_logit_softcapping is set (Gemma 2 only: Gemma 3's config keeps the key, its attention
    ignores it), then the causal / sliding-window mask (query i sees
    keys i - W < j <= i, as masking_utils' sliding_window_overlay);
  - sliding layers: Gemma 2's even layers (layer_types "sliding_attention" if (i + 1) % 2);
    Gemma 3's all but every sliding_window_pattern-th ((i + 1) % pattern != 0), with RoPE base
    rope_local_base_freq there and rope_theta (with rope_scaling linear, when given) on full layers;
  - Gemma 3's q_norm / k_norm (the same (1 + w) RMSNorm over head_dim) before RoPE;
  - tied lm_head, final logits soft-capped when final_logit_softcapping is set.

  DIR/config.json, DIR/model.safetensors, DIR/ids.txt, DIR/expected_attention_L.npy [H, T, T],
  DIR/expected_logits.npy [T, V]

Usage: reference_hf_gemma.py --out DIR --model-type gemma2|gemma3_text --d-model 24 --heads 4
           --kv-heads 2 --head-dim 8 --layers 2 --ffn 37 --vocab 53 --tokens 9 [--seed N]
           [--sliding-window W] [--pattern P] [--query-pre-attn-scalar S] [--attn-softcap C]
           [--final-softcap C] [--rope-theta B] [--rope-local-base B] [--linear-scaling F] [--rope-format v4|v5]
           [--layer-types] [--tokenizer]
"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_hf_llama import activation, inverse_frequencies, rand, rope, write_everything  # noqa: E402


def gemma_norm(x, weight, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * (1.0 + weight)


def sliding_layers(cfg):
    """Per layer, whether it is a sliding-window layer: layer_types where given, else Gemma 2's
    even layers or Gemma 3's pattern."""
    n = cfg["num_hidden_layers"]
    if "layer_types" in cfg:
        return [t == "sliding_attention" for t in cfg["layer_types"]]
    if cfg["model_type"] == "gemma2":
        return [bool((i + 1) % 2) for i in range(n)]
    return [bool((i + 1) % cfg["sliding_window_pattern"]) for i in range(n)]


def rope_tables(cfg, sliding, dh, T):
    """cos, sin [T, d_h] of a layer: the local base for Gemma 3's sliding layers, else rope_theta
    with rope_scaling."""
    if cfg["model_type"] == "gemma3_text" and sliding:
        inv_freq = inverse_frequencies(cfg["rope_local_base_freq"], None, dh)
    else:
        inv_freq = inverse_frequencies(cfg["rope_theta"], cfg.get("rope_scaling"), dh)
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    return torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()


def forward(w, cfg, ids):
    D, H, KV, dh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    T, eps = len(ids), cfg["rms_norm_eps"]
    normalizer = torch.tensor(D**0.5, dtype=torch.float32).to(torch.float64)
    x = w["model.embed_tokens.weight"][ids] * normalizer
    attentions = []
    for layer, sliding in enumerate(sliding_layers(cfg)):
        p = f"model.layers.{layer}."
        window = cfg["sliding_window"] if sliding else None
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        hidden = (j > i) | ((j <= i - window) if window else torch.zeros(T, T, dtype=torch.bool))
        cos, sin = rope_tables(cfg, sliding, dh, T)

        def linear(name, h):
            return h @ w[p + name + ".weight"].T

        h = gemma_norm(x, w[p + "input_layernorm.weight"], eps)
        q = linear("self_attn.q_proj", h).view(T, H, dh).transpose(0, 1)
        k = linear("self_attn.k_proj", h).view(T, KV, dh).transpose(0, 1)
        v = linear("self_attn.v_proj", h).view(T, KV, dh).transpose(0, 1)
        if cfg["model_type"] == "gemma3_text":
            q, k = gemma_norm(q, w[p + "self_attn.q_norm.weight"], eps), gemma_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)  # repeat_kv
        scores = q @ k.transpose(1, 2) * cfg["query_pre_attn_scalar"] ** -0.5
        cap = cfg.get("attn_logit_softcapping")
        if cap is not None and cfg["model_type"] == "gemma2":  # Gemma3Attention never passes softcap on
            scores = torch.tanh(scores / cap) * cap
        attention = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
        attentions.append(attention)
        out = linear("self_attn.o_proj", (attention @ v).transpose(0, 1).reshape(T, H * dh))
        x = x + gemma_norm(out, w[p + "post_attention_layernorm.weight"], eps)
        h = gemma_norm(x, w[p + "pre_feedforward_layernorm.weight"], eps)
        ffn = linear("mlp.down_proj", activation("gelu_pytorch_tanh", linear("mlp.gate_proj", h)) * linear("mlp.up_proj", h))
        x = x + gemma_norm(ffn, w[p + "post_feedforward_layernorm.weight"], eps)
    x = gemma_norm(x, w["model.norm.weight"], eps)
    logits = x @ w["model.embed_tokens.weight"].T
    cap = cfg.get("final_logit_softcapping")
    if cap is not None:
        logits = torch.tanh(logits / cap) * cap
    return attentions, logits


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("d-model", "heads", "kv-heads", "head-dim", "layers", "ffn", "vocab", "tokens"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model-type", required=True, choices=["gemma2", "gemma3_text"])
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--eps", type=float, default=1e-6)
    p.add_argument("--sliding-window", type=int, default=4096)
    p.add_argument("--pattern", type=int, default=6, help="gemma3_text: sliding_window_pattern")
    p.add_argument("--query-pre-attn-scalar", type=float, default=None, help="default: the head size")
    p.add_argument("--attn-softcap", type=float, default=None)
    p.add_argument("--final-softcap", type=float, default=None)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--rope-local-base", type=float, default=10000.0, help="gemma3_text")
    p.add_argument("--linear-scaling", type=float, default=None, help="gemma3_text: rope_scaling linear factor (full layers)")
    p.add_argument("--rope-format", choices=["v4", "v5"], default="v4", help="gemma3_text v5: rope_parameters per layer type")
    p.add_argument("--layer-types", action="store_true", help="write the sliding layers as layer_types, not the family's rule")
    p.add_argument("--tokenizer", action="store_true", help="also a small byte-level BPE tokenizer.json (--vocab 265 or more)")
    a = p.parse_args()
    if a.seed is not None:
        torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    D, H, KV, dh, F, V = a.d_model, a.heads, a.kv_heads, a.head_dim, a.ffn, a.vocab
    gemma3 = a.model_type == "gemma3_text"
    cfg = {"model_type": a.model_type, "architectures": ["Gemma3ForCausalLM" if gemma3 else "Gemma2ForCausalLM"],
           "hidden_size": D, "intermediate_size": F, "num_hidden_layers": a.layers, "num_attention_heads": H,
           "num_key_value_heads": KV, "head_dim": dh, "vocab_size": V, "max_position_embeddings": 64, "rms_norm_eps": a.eps,
           "rope_theta": a.rope_theta, "tie_word_embeddings": True, "torch_dtype": "float32",
           "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "attention_bias": False,
           "sliding_window": a.sliding_window, "query_pre_attn_scalar": a.query_pre_attn_scalar or dh,
           "attn_logit_softcapping": a.attn_softcap, "final_logit_softcapping": a.final_softcap}
    if gemma3:
        cfg.update(rope_local_base_freq=a.rope_local_base, sliding_window_pattern=a.pattern)
        if a.linear_scaling:
            cfg["rope_scaling"] = {"rope_type": "linear", "factor": a.linear_scaling}
    if a.layer_types:
        cfg["layer_types"] = ["sliding_attention" if s else "full_attention" for s in sliding_layers(cfg)]

    w = {"model.embed_tokens.weight": rand(V, D, scale=1.0), "model.norm.weight": rand(D, scale=0.1)}
    for layer in range(a.layers):
        p_ = f"model.layers.{layer}."
        for norm in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"):
            w[p_ + norm + ".weight"] = rand(D, scale=0.1)
        for name, rows in (("q", H * dh), ("k", KV * dh), ("v", KV * dh)):
            w[p_ + f"self_attn.{name}_proj.weight"] = rand(rows, D)
        w[p_ + "self_attn.o_proj.weight"] = rand(D, H * dh)
        if gemma3:
            w[p_ + "self_attn.q_norm.weight"], w[p_ + "self_attn.k_norm.weight"] = rand(dh, scale=0.1), rand(dh, scale=0.1)
        w[p_ + "mlp.gate_proj.weight"], w[p_ + "mlp.up_proj.weight"] = rand(F, D), rand(F, D)
        w[p_ + "mlp.down_proj.weight"] = rand(D, F)

    written = cfg
    if a.rope_format == "v5" and gemma3:  # transformers v5's Gemma 3 form: rope_parameters per layer type
        written = {k: v for k, v in cfg.items() if k not in ("rope_theta", "rope_scaling", "rope_local_base_freq")}
        written["rope_parameters"] = {
            "full_attention": dict(cfg.get("rope_scaling") or {"rope_type": "default"}, rope_theta=cfg["rope_theta"]),
            "sliding_attention": {"rope_type": "default", "rope_theta": cfg["rope_local_base_freq"]}}
    write_everything(a, w, written, lambda w_, _, ids: forward(w_, cfg, ids))


if __name__ == "__main__":
    main()
