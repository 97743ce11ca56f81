#!/usr/bin/python3
"""Float64 reference forward of a Hugging Face encoder-decoder model (bart, t5).

Writes a random model folder in HF's layout and names and runs its forward pass in float64 as
transformers' modeling_bart (BartForConditionalGeneration) and modeling_t5
(T5ForConditionalGeneration) define it, written here independently of attn-viz. The decoder
input is the target ids as given (teacher forced, no shift).
  bart: embeddings times sqrt(d_model) when scale_embedding, plus learned positions at rows
        position + 2 (BartLearnedPositionalEmbedding's offset), layernorm_embedding (eps 1e-5);
        post-norm blocks: self-attention (q scaled by head_dim^-1/2; causal in the decoder),
        self_attn_layer_norm, in the decoder cross-attention on the encoder output and
        encoder_attn_layer_norm, then fc2(gelu(fc1(x))) and final_layer_norm; every Linear with
        bias; logits = x shared^T + final_logits_bias.
  t5:   no positions on the embeddings; pre-norm blocks with T5LayerNorm
        (x / sqrt(mean(x^2) + eps) * w, no mean, no bias), no Linear bias, scores q k^T unscaled
        plus a relative position bias from layer 0's relative_attention_bias of each stack
        (bidirectional buckets in the encoder, causal in the decoder; none on cross-attention),
        feed-forward wo(relu(wi x)) (v1.0) or wo(gelu_new(wi_0 x) * wi_1 x) (v1.1, gated-gelu),
        final_layer_norm per stack; tied: logits = (x d_model^-1/2) shared^T, else lm_head.

  DIR/config.json, DIR/model.safetensors (or two shards), DIR/source_ids.txt, DIR/target_ids.txt,
  DIR/expected_{encoder,decoder,cross}_L.npy [H, S, S], [H, T, T], [H, T, S],
  DIR/expected_logits.npy [T, V]
  with --zero-head STACK:L:H (STACK encoder, decoder or cross) also DIR/expected_logits_zeroed.npy
  [T, V]: the same forward with that head's output (its columns of the context, before the output
  projection) zeroed, transformers' head_mask / layer_head_mask applied to one head

Usage: reference_hf_seq2seq.py --out DIR --model-type bart|t5 --d-model 24 --heads 4
           --encoder-layers 2 --decoder-layers 1 --ffn 37 --vocab 53 --source-tokens 7
           --target-tokens 5 [--head-dim 6 (t5)] [--gated (t5 v1.1)] [--scale-embedding (bart)]
           [--positions 40 (bart)] [--buckets 32 --max-distance 128 (t5)] [--shards 2] [--seed N] [--tokenizer]
           [--zero-head encoder:0:1]
"""
import argparse
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_hf_llama import activation, rand, write_model_folder, write_tokenizer  # noqa: E402


def attention(q, k, v, H, bias=None, causal=False, zeroed=None):
    """q: [Tq, H*dh], k, v: [Tk, H*dh] (q already scaled) -> (weights [H, Tq, Tk], context [Tq, H*dh]);
    head `zeroed` (an index, or None) contributes zeros to the context."""
    Tq, Tk = q.shape[0], k.shape[0]
    q, k, v = (t.view(t.shape[0], H, -1).transpose(0, 1) for t in (q, k, v))
    scores = q @ k.transpose(1, 2)
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = scores.masked_fill(torch.arange(Tk)[None, :] > torch.arange(Tq)[:, None], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    context = weights @ v
    if zeroed is not None:
        context = context.clone()
        context[zeroed] = 0
    return weights, context.transpose(0, 1).reshape(Tq, -1)


def zeroed_head(zero, stack, maps):
    """The head to zero in the next layer of `stack` (its index is len(maps[stack])), or None."""
    return zero[2] if zero is not None and zero[0] == stack and zero[1] == len(maps[stack]) else None


def bart_forward(w, cfg, source, target, zero=None):
    p, D, H = "model.", cfg["d_model"], cfg["encoder_attention_heads"]
    scale = math.sqrt(D) if cfg["scale_embedding"] else 1.0

    def norm(x, name):
        return torch.nn.functional.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def linear(name, x):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    def attend(prefix, x, memory, causal, stack):
        q = linear(prefix + "q_proj", x) * (D // H) ** -0.5
        weights, context = attention(q, linear(prefix + "k_proj", memory), linear(prefix + "v_proj", memory), H, causal=causal,
                                     zeroed=zeroed_head(zero, stack, maps))
        return weights, linear(prefix + "out_proj", context)

    def embed(ids, stack):
        x = w[p + "shared.weight"][ids] * scale + w[p + stack + ".embed_positions.weight"][torch.arange(len(ids)) + 2]
        return norm(x, p + stack + ".layernorm_embedding")

    def feed_forward(block, x):
        return linear(block + "fc2", activation(cfg["activation_function"], linear(block + "fc1", x)))

    maps = {"encoder": [], "decoder": [], "cross": []}
    x = embed(source, "encoder")
    for layer in range(cfg["encoder_layers"]):
        b = f"{p}encoder.layers.{layer}."
        a, out = attend(b + "self_attn.", x, x, False, "encoder")
        maps["encoder"].append(a)
        x = norm(x + out, b + "self_attn_layer_norm")
        x = norm(x + feed_forward(b, x), b + "final_layer_norm")
    memory, y = x, embed(target, "decoder")
    for layer in range(cfg["decoder_layers"]):
        b = f"{p}decoder.layers.{layer}."
        a, out = attend(b + "self_attn.", y, y, True, "decoder")
        maps["decoder"].append(a)
        y = norm(y + out, b + "self_attn_layer_norm")
        a, out = attend(b + "encoder_attn.", y, memory, False, "cross")
        maps["cross"].append(a)
        y = norm(y + out, b + "encoder_attn_layer_norm")
        y = norm(y + feed_forward(b, y), b + "final_layer_norm")
    return maps, y @ w[p + "shared.weight"].T + w["final_logits_bias"][0]


def relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """T5Attention._relative_position_bucket, as transformers computes it (float32 logarithm)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


def t5_forward(w, cfg, source, target, zero=None):
    D, H, eps = cfg["d_model"], cfg["num_heads"], cfg["layer_norm_epsilon"]
    gated = cfg["feed_forward_proj"] == "gated-gelu"

    def norm(x, name):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w[name]

    def linear(name, x):
        return x @ w[name + ".weight"].T

    def position_bias(stack, Tq, Tk, bidirectional):
        relative = torch.arange(Tk)[None, :] - torch.arange(Tq)[:, None]
        buckets = relative_position_bucket(relative, bidirectional, cfg["relative_attention_num_buckets"],
                                           cfg["relative_attention_max_distance"])
        table = w[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"]
        return table[buckets].permute(2, 0, 1)  # [H, Tq, Tk]

    def attend(prefix, x, memory, bias, causal, stack):
        weights, context = attention(linear(prefix + "q", x), linear(prefix + "k", memory), linear(prefix + "v", memory), H, bias, causal,
                                     zeroed_head(zero, stack, maps))
        return weights, linear(prefix + "o", context)

    def feed_forward(prefix, x):
        if gated:
            return linear(prefix + "wo", activation("gelu_new", linear(prefix + "wi_0", x)) * linear(prefix + "wi_1", x))
        return linear(prefix + "wo", torch.relu(linear(prefix + "wi", x)))

    maps = {"encoder": [], "decoder": [], "cross": []}

    def self_attention(b, x, bias, stack):
        """x plus layer.0's self-attention of the normed x (causal in the decoder), its map kept."""
        h = norm(x, b + "0.layer_norm.weight")
        a, out = attend(b + "0.SelfAttention.", h, h, bias, stack == "decoder", stack)
        maps[stack].append(a)
        return x + out

    x = w["shared.weight"][source]
    bias = position_bias("encoder", len(source), len(source), True)
    for layer in range(cfg["num_layers"]):
        b = f"encoder.block.{layer}.layer."
        x = self_attention(b, x, bias, "encoder")
        x = x + feed_forward(b + "1.DenseReluDense.", norm(x, b + "1.layer_norm.weight"))
    memory = norm(x, "encoder.final_layer_norm.weight")
    y = w["shared.weight"][target]
    bias = position_bias("decoder", len(target), len(target), False)
    for layer in range(cfg["num_decoder_layers"]):
        b = f"decoder.block.{layer}.layer."
        y = self_attention(b, y, bias, "decoder")
        a, out = attend(b + "1.EncDecAttention.", norm(y, b + "1.layer_norm.weight"), memory, None, False, "cross")
        maps["cross"].append(a)
        y = y + out
        y = y + feed_forward(b + "2.DenseReluDense.", norm(y, b + "2.layer_norm.weight"))
    y = norm(y, "decoder.final_layer_norm.weight")
    # Scaled by D^-1/2 when tied, unless scale_decoder_outputs (transformers >= 5) says otherwise.
    scale = D**-0.5 if cfg.get("scale_decoder_outputs", cfg["tie_word_embeddings"]) else 1.0
    return maps, (y * scale) @ w["shared.weight" if cfg["tie_word_embeddings"] else "lm_head.weight"].T


def bart_weights(a):
    D, F, V, P = a.d_model, a.ffn, a.vocab, a.positions
    w = {"model.shared.weight": rand(V, D), "final_logits_bias": rand(1, V)}

    def norm(name):
        w[name + ".weight"], w[name + ".bias"] = 1.0 + rand(D, scale=0.1), rand(D, scale=0.1)

    def linear(name, out, inp):
        w[name + ".weight"], w[name + ".bias"] = rand(out, inp), rand(out, scale=0.1)

    for stack, layers in (("encoder", a.encoder_layers), ("decoder", a.decoder_layers)):
        w[f"model.{stack}.embed_positions.weight"] = rand(P + 2, D)
        norm(f"model.{stack}.layernorm_embedding")
        for layer in range(layers):
            b = f"model.{stack}.layers.{layer}."
            for module in ("self_attn.", "encoder_attn.") if stack == "decoder" else ("self_attn.",):
                for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    linear(b + module + proj, D, D)
                norm(b + module[:-1] + "_layer_norm")
            linear(b + "fc1", F, D)
            linear(b + "fc2", D, F)
            norm(b + "final_layer_norm")
    cfg = {"model_type": "bart", "architectures": ["BartForConditionalGeneration"], "d_model": D, "vocab_size": V,
           "encoder_layers": a.encoder_layers, "decoder_layers": a.decoder_layers, "encoder_attention_heads": a.heads,
           "decoder_attention_heads": a.heads, "encoder_ffn_dim": F, "decoder_ffn_dim": F, "max_position_embeddings": P,
           "activation_function": "gelu", "scale_embedding": a.scale_embedding, "normalize_before": False,
           "add_final_layer_norm": False, "decoder_start_token_id": 2, "eos_token_id": 2, "pad_token_id": 1,
           "bos_token_id": 0, "tie_word_embeddings": True}
    return w, cfg


def t5_weights(a):
    D, F, V, H, dh = a.d_model, a.ffn, a.vocab, a.heads, a.head_dim
    w = {"shared.weight": rand(V, D, scale=1.0)}
    if a.gated and not a.transformers5:
        w["lm_head.weight"] = rand(V, D)
    for stack, layers in (("encoder", a.encoder_layers), ("decoder", a.decoder_layers)):
        w[f"{stack}.final_layer_norm.weight"] = 1.0 + rand(D, scale=0.1)
        w[f"{stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"] = rand(a.buckets, H, scale=1.0)
        for layer in range(layers):
            b = f"{stack}.block.{layer}.layer."
            modules = ["0.SelfAttention."] + (["1.EncDecAttention."] if stack == "decoder" else [])
            for i, module in enumerate(modules):
                for proj, shape in (("q", (H * dh, D)), ("k", (H * dh, D)), ("v", (H * dh, D)), ("o", (D, H * dh))):
                    w[b + module + proj + ".weight"] = rand(*shape)
                w[b + f"{i}.layer_norm.weight"] = 1.0 + rand(D, scale=0.1)
            ff = b + f"{len(modules)}.DenseReluDense."
            for name in ("wi_0", "wi_1") if a.gated else ("wi",):
                w[ff + name + ".weight"] = rand(F, D)
            w[ff + "wo.weight"] = rand(D, F)
            w[b + f"{len(modules)}.layer_norm.weight"] = 1.0 + rand(D, scale=0.1)
    cfg = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": D, "d_kv": dh, "d_ff": F,
           "num_heads": H, "num_layers": a.encoder_layers, "num_decoder_layers": a.decoder_layers, "vocab_size": V,
           "relative_attention_num_buckets": a.buckets, "relative_attention_max_distance": a.max_distance,
           "layer_norm_epsilon": 1e-6, "feed_forward_proj": "gated-gelu" if a.gated else "relu",
           "tie_word_embeddings": not a.gated, "decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0,
           "is_encoder_decoder": True}
    if a.transformers5:  # as transformers >= 5 saves any T5: tied, the scaling said apart
        cfg.update(tie_word_embeddings=True, scale_decoder_outputs=not a.gated)
    return w, cfg


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("d-model", "heads", "encoder-layers", "decoder-layers", "ffn", "vocab", "source-tokens", "target-tokens"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model-type", required=True, choices=["bart", "t5"])
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--head-dim", type=int, default=None, help="t5: d_kv (default d_model / heads)")
    p.add_argument("--gated", action="store_true", help="t5 v1.1: gated-gelu, untied lm_head")
    p.add_argument("--transformers5", action="store_true",
                   help="t5: config.json as transformers >= 5 writes it (tie_word_embeddings true, scale_decoder_outputs)")
    p.add_argument("--scale-embedding", action="store_true", help="bart: embeddings times sqrt(d_model)")
    p.add_argument("--positions", type=int, default=40, help="bart: max_position_embeddings")
    p.add_argument("--buckets", type=int, default=32, help="t5: relative_attention_num_buckets")
    p.add_argument("--max-distance", type=int, default=128, help="t5: relative_attention_max_distance")
    p.add_argument("--shards", type=int, default=1, choices=[1, 2])
    p.add_argument("--tokenizer", action="store_true", help="also a small byte-level BPE tokenizer.json (--vocab 265 or more)")
    p.add_argument("--zero-head", default=None, help="STACK:LAYER:HEAD: also expected_logits_zeroed.npy with that head zeroed")
    a = p.parse_args()
    if a.seed is not None:
        torch.manual_seed(a.seed)
    a.head_dim = a.head_dim or a.d_model // a.heads
    os.makedirs(a.out, exist_ok=True)
    w, cfg = (bart_weights if a.model_type == "bart" else t5_weights)(a)
    write_model_folder(a.out, w, cfg, a.shards)
    if a.tokenizer:
        write_tokenizer(a.out, a.vocab)
    ids_below = 256 if a.tokenizer else a.vocab  # the tokenizer's byte tokens: every id has a label
    source = torch.randint(0, ids_below, (a.source_tokens,)).tolist()
    target = torch.randint(0, ids_below, (a.target_tokens,)).tolist()
    for name, ids in (("source", source), ("target", target)):
        with open(os.path.join(a.out, f"{name}_ids.txt"), "w") as f:
            f.write(" ".join(map(str, ids)))
    forward = bart_forward if a.model_type == "bart" else t5_forward
    maps, logits = forward(w, cfg, source, target)
    for kind, layers in maps.items():
        for layer, weights in enumerate(layers):
            np.save(os.path.join(a.out, f"expected_{kind}_{layer}.npy"), weights.numpy())
    np.save(os.path.join(a.out, "expected_logits.npy"), logits.numpy())
    if a.zero_head:
        stack, layer, head = a.zero_head.split(":")
        _, zeroed = forward(w, cfg, source, target, (stack, int(layer), int(head)))
        np.save(os.path.join(a.out, "expected_logits_zeroed.npy"), zeroed.numpy())


if __name__ == "__main__":
    main()
