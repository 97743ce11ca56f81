#!/usr/bin/python3
"""Float64 reference forward of a Hugging Face Llama-family model (llama, mistral, qwen2, qwen3, phi3).

Writes a random model folder in HF's layout and names, runs its forward pass in float64 from the
published definition (transformers' modeling_llama / modeling_qwen2 / modeling_qwen3 /
modeling_phi3: RMSNorm, rotate-half RoPE,
grouped-query attention, SiLU-gated MLP, tied or separate lm_head; Qwen2's q/k/v biases; RoPE
frequencies scaled as modeling_rope_utils' linear and llama3 rope_scaling do; head_dim; hidden_act
from activations.py's ACT2FN; Llama's attention_bias and mlp_bias; sliding windows as
masking_utils' sliding_window_overlay draws them (query i sees keys i - W < j <= i) on Mistral's
every layer and on Qwen2's layers from max_window_layers on when use_sliding_window; the RoPE keys
in transformers v4's form or v5's rope_parameters; Qwen3's per-head RMSNorm of q and k (q_norm,
k_norm over head_dim) before RoPE, its attention_bias on q/k/v/o and Qwen2's windows; Phi-3's fused
qkv_proj (q, k, v rows in that order) and gate_up_proj (gate first), its sliding_window on every
layer and partial_rotary_factor (RoPE on the first int(head_dim * factor) features of each head,
frequencies of that width)), written here independently of attn-viz, and saves what a test
compares:

  DIR/config.json, DIR/model.safetensors            (or --shards 2: model-0000i-of-00002 + index)
  DIR/ids.txt                                        the token ids, space-separated
  DIR/expected_attention_L.npy                       float64 [H, T, T] per layer L
  DIR/expected_logits.npy                            float64 [T, V]

Usage: reference_hf_llama.py --out DIR --model-type llama --d-model 24 --heads 4 --kv-heads 2
           --layers 2 --ffn 37 --vocab 53 --tokens 9 [--tied] [--shards 2] [--eps 1e-5]
           [--rope-theta 10000] [--seed N]
           [--rope-scaling linear --factor 4 | --rope-scaling llama3 --factor 8 --low-freq-factor 1
            --high-freq-factor 4 --original-max-positions 8192] [--rope-format v4|v5]
           [--head-dim N] [--hidden-act silu|gelu|gelu_pytorch_tanh|gelu_new] [--attention-bias] [--mlp-bias]
           [--sliding-window W [--use-sliding-window] [--max-window-layers M]] [--partial-rotary F] [--tokenizer]
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import write_safetensors  # noqa: E402


def rms_norm(x, weight, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * weight


def activation(name, x):
    """ACT2FN[name]: SiLU, exact GELU, GELU's tanh approximation (torch's, and gelu_new's formula)."""
    if name == "silu":
        return torch.nn.functional.silu(x)
    if name == "gelu":
        return torch.nn.functional.gelu(x)
    if name == "gelu_pytorch_tanh":
        return torch.nn.functional.gelu(x, approximate="tanh")
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def sliding_layers(cfg):
    """Per layer, the sliding window W or None: Mistral's and Phi-3's sliding_window on every layer;
    Qwen2's and Qwen3's only with use_sliding_window, on layers max_window_layers and later; Llama none."""
    n, window = cfg["num_hidden_layers"], cfg.get("sliding_window")
    if cfg["model_type"] in ("mistral", "phi3"):
        return [window] * n
    if cfg["model_type"] in ("qwen2", "qwen3") and cfg.get("use_sliding_window"):
        return [window if layer >= cfg["max_window_layers"] else None for layer in range(n)]
    return [None] * n


def rope_settings(cfg):
    """(rope_theta, rope_scaling or None) from v4's top-level keys or v5's rope_parameters."""
    if "rope_parameters" in cfg:
        params = cfg["rope_parameters"]
        return params["rope_theta"], (params if params["rope_type"] != "default" else None)
    return cfg["rope_theta"], cfg.get("rope_scaling")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def inverse_frequencies(theta, scaling, dh):
    """RoPE's per-pair inverse frequencies theta^(-2i/d_h), stretched as cfg's rope_scaling says:
    linear divides them all by the factor; llama3 divides those of wavelengths longer than
    original_max / low_freq_factor, keeps those shorter than original_max / high_freq_factor and
    interpolates between by original_max / wavelength."""
    inv_freq = 1.0 / theta ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh)
    if scaling is None:
        return inv_freq
    if scaling["rope_type"] == "linear":
        return inv_freq / scaling["factor"]
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    original = scaling["original_max_position_embeddings"]
    scaled = []
    for f in inv_freq.tolist():
        wavelength = 2 * math.pi / f
        if wavelength < original / high:
            scaled.append(f)
        elif wavelength > original / low:
            scaled.append(f / factor)
        else:
            blend = (original / wavelength - low) / (high - low)
            scaled.append((1 - blend) * f / factor + blend * f)
    return torch.tensor(scaled, dtype=torch.float64)


def rope(x, cos, sin):
    """Rotate-half RoPE on the first cos.shape[-1] features of each head; the rest pass through."""
    rot = cos.shape[-1]
    turned, passed = x[..., :rot], x[..., rot:]
    return torch.cat((turned * cos + rotate_half(turned) * sin, passed), dim=-1)


def projections(cfg, linear, h, T):
    """q [H, T, d_h], k and v [KV, T, d_h]: separate q/k/v_proj, or Phi-3's fused qkv_proj."""
    D, H, KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dh = cfg.get("head_dim") or D // H
    if cfg["model_type"] == "phi3":
        qkv = linear("self_attn.qkv_proj", h)
        q, k, v = qkv[:, : H * dh], qkv[:, H * dh: (H + KV) * dh], qkv[:, (H + KV) * dh:]
    else:
        q, k, v = linear("self_attn.q_proj", h), linear("self_attn.k_proj", h), linear("self_attn.v_proj", h)
    return q.view(T, H, dh).transpose(0, 1), k.view(T, KV, dh).transpose(0, 1), v.view(T, KV, dh).transpose(0, 1)


def mlp(cfg, linear, h):
    """down(act(gate) * up), with Phi-3's gate_up_proj chunked in two (gate first)."""
    if cfg["model_type"] == "phi3":
        gate, up = linear("mlp.gate_up_proj", h).chunk(2, dim=-1)
    else:
        gate, up = linear("mlp.gate_proj", h), linear("mlp.up_proj", h)
    return linear("mlp.down_proj", activation(cfg.get("hidden_act", "silu"), gate) * up)


def forward(w, cfg, ids):
    D, H, KV = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dh, T, eps = cfg.get("head_dim") or D // H, len(ids), cfg["rms_norm_eps"]
    rotated = int(dh * cfg.get("partial_rotary_factor", 1.0))
    inv_freq = inverse_frequencies(*rope_settings(cfg), rotated)
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()
    x = w["model.embed_tokens.weight"][ids]
    attentions = []
    for layer, window in enumerate(sliding_layers(cfg)):
        p = f"model.layers.{layer}."
        i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
        hidden = (j > i) | ((j <= i - window) if window else torch.zeros(T, T, dtype=torch.bool))
        mask = torch.zeros(T, T, dtype=torch.float64).masked_fill(hidden, float("-inf"))

        def linear(name, h):
            y = h @ w[p + name + ".weight"].T
            return y + w[p + name + ".bias"] if p + name + ".bias" in w else y

        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q, k, v = projections(cfg, linear, h, T)
        if cfg["model_type"] == "qwen3":  # Qwen3RMSNorm over head_dim, before RoPE
            q, k = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps), rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k, v = k.repeat_interleave(H // KV, 0), v.repeat_interleave(H // KV, 0)  # repeat_kv
        attention = torch.softmax(q @ k.transpose(1, 2) / dh**0.5 + mask, dim=-1)
        attentions.append(attention)
        x = x + linear("self_attn.o_proj", (attention @ v).transpose(0, 1).reshape(T, H * dh))
        x = x + mlp(cfg, linear, rms_norm(x, w[p + "post_attention_layernorm.weight"], eps))
    x = rms_norm(x, w["model.norm.weight"], eps)
    classifier = w["model.embed_tokens.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]
    return attentions, x @ classifier.T


def rand(*shape, scale=0.3):
    """Random float64 values that float32 holds exactly."""
    return (torch.randn(*shape, dtype=torch.float64) * scale).to(torch.float32).to(torch.float64)


def write_model_folder(out, w, cfg, shards):
    """config.json and the weights w (name -> tensor) as model.safetensors, or two shards + index."""
    names = sorted(w)
    if shards == 1:
        write_safetensors(os.path.join(out, "model.safetensors"), {n: w[n] for n in names})
    else:
        files = [f"model-0000{i + 1}-of-00002.safetensors" for i in range(2)]
        parts = [names[: len(names) // 2], names[len(names) // 2:]]
        for file, part in zip(files, parts):
            write_safetensors(os.path.join(out, file), {n: w[n] for n in part})
        index = {"metadata": {}, "weight_map": {n: files[i] for i, part in enumerate(parts) for n in part}}
        with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def write_ids(out, vocab, count):
    """count random token ids below vocab, written space-separated to ids.txt."""
    ids = torch.randint(0, vocab, (count,)).tolist()
    with open(os.path.join(out, "ids.txt"), "w") as f:
        f.write(" ".join(map(str, ids)))
    return ids


def write_tokenizer(out, vocab):
    """A small byte-level BPE tokenizer.json (reference_hf_transformer.py's GPT-2 kind), for the CLI."""
    from reference_hf_transformer import tokenizer_json
    tokenizer, _ = tokenizer_json("gpt2")
    if vocab < len(tokenizer["model"]["vocab"]):
        sys.exit(f"--tokenizer needs --vocab of at least {len(tokenizer['model']['vocab'])}")
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)


def save_expected(out, attentions, results):
    """expected_attention_L.npy per layer and expected_<name>.npy per entry of results."""
    for layer, attention in enumerate(attentions):
        np.save(os.path.join(out, f"expected_attention_{layer}.npy"), attention.numpy())
    for name, value in results.items():
        np.save(os.path.join(out, f"expected_{name}.npy"), value.numpy())


def write_everything(a, w, cfg, run):
    """The folder (a.shards files, a tokenizer with a.tokenizer), a.tokens random ids and what
    run(w, cfg, ids) expects: (attention per layer, logits)."""
    write_model_folder(a.out, w, cfg, getattr(a, "shards", 1))
    if a.tokenizer:
        write_tokenizer(a.out, a.vocab)
    ids = write_ids(a.out, a.vocab, a.tokens)
    attentions, logits = run(w, cfg, ids)
    save_expected(a.out, attentions, {"logits": logits})


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("d-model", "heads", "kv-heads", "layers", "ffn", "vocab", "tokens"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model-type", default="llama", choices=["llama", "mistral", "qwen2", "qwen3", "phi3"])
    p.add_argument("--tied", action="store_true")
    p.add_argument("--shards", type=int, default=1, choices=[1, 2])
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rope-scaling", choices=["linear", "llama3"], default=None)
    p.add_argument("--factor", type=float, default=8.0)
    p.add_argument("--low-freq-factor", type=float, default=1.0)
    p.add_argument("--high-freq-factor", type=float, default=4.0)
    p.add_argument("--original-max-positions", type=int, default=8192)
    p.add_argument("--rope-format", choices=["v4", "v5"], default="v4", help="v5: rope_theta and rope_scaling in rope_parameters")
    p.add_argument("--head-dim", type=int, default=None)
    p.add_argument("--hidden-act", choices=["silu", "gelu", "gelu_pytorch_tanh", "gelu_new"], default="silu")
    p.add_argument("--attention-bias", action="store_true", help="llama: q/k/v/o biases")
    p.add_argument("--mlp-bias", action="store_true", help="llama: gate/up/down biases")
    p.add_argument("--sliding-window", type=int, default=None)
    p.add_argument("--use-sliding-window", action="store_true", help="qwen2")
    p.add_argument("--max-window-layers", type=int, default=0, help="qwen2, qwen3")
    p.add_argument("--partial-rotary", type=float, default=None, help="phi3: partial_rotary_factor")
    p.add_argument("--tokenizer", action="store_true", help="also a small byte-level BPE tokenizer.json (--vocab 265 or more)")
    a = p.parse_args()
    if a.seed is not None:
        torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    D, H, KV, F, V = a.d_model, a.heads, a.kv_heads, a.ffn, a.vocab
    dh = a.head_dim or D // H
    cfg = {"model_type": a.model_type, "architectures": [{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                                                            "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
                                                            "phi3": "Phi3ForCausalLM"}[a.model_type]],
           "hidden_size": D, "intermediate_size": F, "num_hidden_layers": a.layers, "num_attention_heads": H,
           "num_key_value_heads": KV, "vocab_size": V, "max_position_embeddings": 64, "rms_norm_eps": a.eps,
           "rope_theta": a.rope_theta, "tie_word_embeddings": a.tied, "torch_dtype": "float32", "hidden_act": a.hidden_act}
    if a.rope_scaling == "linear":
        cfg["rope_scaling"] = {"rope_type": "linear", "factor": a.factor}
    elif a.rope_scaling == "llama3":
        cfg["rope_scaling"] = {"rope_type": "llama3", "factor": a.factor, "low_freq_factor": a.low_freq_factor,
                               "high_freq_factor": a.high_freq_factor,
                               "original_max_position_embeddings": a.original_max_positions}
    if a.rope_format == "v5":
        cfg["rope_parameters"] = dict(cfg.pop("rope_scaling", None) or {"rope_type": "default"}, rope_theta=cfg.pop("rope_theta"))
    if a.head_dim:
        cfg["head_dim"] = a.head_dim
    if a.model_type == "llama":
        cfg["attention_bias"], cfg["mlp_bias"] = a.attention_bias, a.mlp_bias
    if a.model_type == "qwen3":
        cfg["attention_bias"] = a.attention_bias
    if a.model_type in ("mistral", "phi3"):
        cfg["sliding_window"] = a.sliding_window  # null: none (absent would mean 4096 for mistral)
    if a.partial_rotary is not None:
        cfg["partial_rotary_factor"] = a.partial_rotary
    if a.model_type in ("qwen2", "qwen3"):
        cfg.update(sliding_window=a.sliding_window, use_sliding_window=a.use_sliding_window, max_window_layers=a.max_window_layers)

    w = {"model.embed_tokens.weight": rand(V, D, scale=1.0), "model.norm.weight": 1 + rand(D, scale=0.1)}
    for layer in range(a.layers):
        p_ = f"model.layers.{layer}."
        w[p_ + "input_layernorm.weight"] = 1 + rand(D, scale=0.1)
        w[p_ + "post_attention_layernorm.weight"] = 1 + rand(D, scale=0.1)
        for name, rows in (("q", H * dh), ("k", KV * dh), ("v", KV * dh)):
            w[p_ + f"self_attn.{name}_proj.weight"] = rand(rows, D)
            if a.model_type == "qwen2" or a.attention_bias:
                w[p_ + f"self_attn.{name}_proj.bias"] = rand(rows)
        if a.model_type == "qwen3":
            w[p_ + "self_attn.q_norm.weight"], w[p_ + "self_attn.k_norm.weight"] = 1 + rand(dh, scale=0.1), 1 + rand(dh, scale=0.1)
        w[p_ + "self_attn.o_proj.weight"] = rand(D, H * dh)
        if a.attention_bias:
            w[p_ + "self_attn.o_proj.bias"] = rand(D)
        w[p_ + "mlp.gate_proj.weight"], w[p_ + "mlp.up_proj.weight"] = rand(F, D), rand(F, D)
        w[p_ + "mlp.down_proj.weight"] = rand(D, F)
        if a.mlp_bias:
            w[p_ + "mlp.gate_proj.bias"], w[p_ + "mlp.up_proj.bias"], w[p_ + "mlp.down_proj.bias"] = rand(F), rand(F), rand(D)
        if a.model_type == "phi3":  # fused as Phi-3's checkpoints hold them
            w[p_ + "self_attn.qkv_proj.weight"] = torch.cat([w.pop(p_ + f"self_attn.{n}_proj.weight") for n in "qkv"])
            w[p_ + "mlp.gate_up_proj.weight"] = torch.cat([w.pop(p_ + "mlp.gate_proj.weight"), w.pop(p_ + "mlp.up_proj.weight")])
    if not a.tied:
        w["lm_head.weight"] = rand(V, D)

    write_everything(a, w, cfg, forward)


if __name__ == "__main__":
    main()
