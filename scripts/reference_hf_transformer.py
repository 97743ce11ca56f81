#!/usr/bin/python3
"""Float64 reference forward of Hugging Face GPT-2, GPT-NeoX (Pythia) and BERT models.

Writes a random model folder in the family's real tensor names and orientations and runs its
forward pass in float64 from the published definitions (transformers' modeling_gpt2,
modeling_gpt_neox, modeling_bert), written here independently of attn-viz:
  gpt2      wte + wpe, pre-LayerNorm blocks, Conv1D weights [in, out] (x @ W + b), fused c_attn
            split [q | k | v] along columns, GELU tanh ("gelu_new"), logits from the tied wte;
  gpt_neox  embed_in, query_key_value viewed [T, H, 3 d_h] (per head q, k, v), rotary on the
            first int(d_h * rotary_pct) features (rotate_half), parallel or sequential
            residual, exact GELU, final_layer_norm, embed_out;
  bert      word + position + token type 0 embeddings, LayerNorm, no mask (is_decoder: the
            causal mask get_extended_attention_mask makes), post-LayerNorm blocks, exact GELU;
            the final hidden states (no logits).
--rope-format v5 writes gpt_neox's rotary keys as transformers v5 saves them: rope_parameters
{rope_type default, rope_theta, partial_rotary_factor} instead of rotary_emb_base and rotary_pct.
Saves what a test compares:

  DIR/config.json, DIR/model.safetensors            (or --shards 2: model-0000i-of-00002 + index)
  DIR/ids.txt                                        the token ids, space-separated
  DIR/types.txt                                      with --pair-at S (bert): the token types, 0 before
                                                     position S and 1 from it on (a text pair's segments)
  DIR/expected_attention_L.npy                       float64 [H, T, T] per layer L
  DIR/expected_hidden.npy                            float64 [T, D] final hidden states
  DIR/expected_logits.npy                            float64 [T, V] (gpt2, gpt_neox)
  DIR/expected_ablated_logits.npy                    with --ablate L:H: the logits with head H of layer L
                                                     zeroed (its slice of the merged heads, before the
                                                     output projection)
  DIR/expected_ablated_hidden.npy                    bert with --ablate L:H[:mean]: the final hidden states so
                                                     (mean: the slice replaced by its mean over the tokens)
  DIR/expected_mlm_loss.npy, expected_ablated_mlm_loss.npy   bert with --mlm-head: the masked-LM head's loss of
                                                     each input token at its own position (mlm_loss, [1]), clean and
                                                     with --ablate
  DIR/expected_generation.txt                        with --generate N: the greedy continuation's ids
                                                     (argmax; with --tokenizer over its tokens only,
                                                     stopping at <|endoftext|>)
  DIR/tokenizer.json                                 with --tokenizer: a small one in the family's kind:
                                                     byte-level BPE (the 256 byte tokens, a few merges,
                                                     <|endoftext|>) or WordPiece ([PAD] [UNK] [CLS] [SEP]
                                                     [MASK], letters, a few words); needs --vocab at least
                                                     its size

Usage: reference_hf_transformer.py --out DIR --model-type gpt2 --d-model 24 --heads 4 --layers 2
           --ffn 37 --vocab 53 --tokens 9 [--prefix] [--shards 2] [--eps 1e-5] [--positions 64]
           [--rotary-pct 0.25] [--sequential-residual] [--rotary-base 10000] [--lm-head tied|separate]
           [--gamma-beta] [--ablate L:H] [--generate N] [--tokenizer] [--seed N] [--is-decoder]
           [--rope-format v4|v5] [--pair-at S]
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_hf_llama import rand, rotate_half, save_expected, write_ids, write_model_folder  # noqa: E402

PREFIXES = {"gpt2": "transformer.", "gpt_neox": "gpt_neox.", "bert": "bert."}


def layer_norm(x, w, name, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w[name + ".weight"] + w[name + ".bias"]


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / 2**0.5))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh((2.0 / torch.pi) ** 0.5 * (x + 0.044715 * x**3)))


def linear(w, name, x):
    """torch.nn.Linear: weight [out, in]."""
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def conv1d(w, name, x):
    """transformers' Conv1D: weight [in, out]."""
    return x @ w[name + ".weight"] + w[name + ".bias"]


def attend(q, k, v, causal):
    """q, k, v: [H, T, d_h] -> attention [H, T, T] and the heads' outputs merged [T, H d_h]."""
    T, dh = q.shape[1], q.shape[2]
    scores = q @ k.transpose(1, 2) / dh**0.5
    if causal:
        scores = scores + torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    attention = torch.softmax(scores, dim=-1)
    return attention, (attention @ v).transpose(0, 1).reshape(T, -1)


def zero_head(merged, H, ablate, layer):
    """merged: [T, H d_h] -> the same with head ablate[1]'s slice zeroed when layer == ablate[0]
    (ablate[2] == "mean": replaced by its mean over the tokens instead)."""
    if ablate is None or ablate[0] != layer:
        return merged
    dh = merged.shape[1] // H
    merged = merged.clone()
    part = merged[:, ablate[1] * dh:(ablate[1] + 1) * dh]
    merged[:, ablate[1] * dh:(ablate[1] + 1) * dh] = part.mean(dim=0) if len(ablate) > 2 and ablate[2] == "mean" else 0
    return merged


def heads(x, H):
    """[T, H d_h] -> [H, T, d_h]"""
    return x.view(x.shape[0], H, -1).transpose(0, 1)


def gpt2_forward(w, cfg, ids, p, ablate=None):
    H, eps, T = cfg["n_head"], cfg["layer_norm_epsilon"], len(ids)
    x = w[p + "wte.weight"][ids] + w[p + "wpe.weight"][:T]
    attentions = []
    for layer in range(cfg["n_layer"]):
        b = f"{p}h.{layer}."
        qkv = conv1d(w, b + "attn.c_attn", layer_norm(x, w, b + "ln_1", eps))
        q, k, v = (heads(part, H) for part in qkv.split(cfg["n_embd"], dim=-1))
        attention, merged = attend(q, k, v, causal=True)
        attentions.append(attention)
        x = x + conv1d(w, b + "attn.c_proj", zero_head(merged, H, ablate, layer))
        x = x + conv1d(w, b + "mlp.c_proj", gelu_new(conv1d(w, b + "mlp.c_fc", layer_norm(x, w, b + "ln_2", eps))))
    hidden = layer_norm(x, w, p + "ln_f", eps)
    return attentions, hidden, hidden @ (w[p + "wte.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]).T


def neox_forward(w, cfg, ids, p, ablate=None):
    H, eps, T = cfg["num_attention_heads"], cfg["layer_norm_eps"], len(ids)
    dh = cfg["hidden_size"] // H
    rope = cfg.get("rope_parameters") or {"rope_theta": cfg["rotary_emb_base"], "partial_rotary_factor": cfg["rotary_pct"]}
    rot = int(dh * rope["partial_rotary_factor"])
    inv_freq = 1.0 / rope["rope_theta"] ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot)
    angles = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    cos, sin = torch.cat((angles, angles), -1).cos(), torch.cat((angles, angles), -1).sin()

    def rotary(t):
        return torch.cat((t[..., :rot] * cos + rotate_half(t[..., :rot]) * sin, t[..., rot:]), dim=-1)

    def mlp(b, h):
        return linear(w, b + "mlp.dense_4h_to_h", gelu(linear(w, b + "mlp.dense_h_to_4h", h)))

    x = w[p + "embed_in.weight"][ids]
    attentions = []
    for layer in range(cfg["num_hidden_layers"]):
        b = f"{p}layers.{layer}."
        qkv = linear(w, b + "attention.query_key_value", layer_norm(x, w, b + "input_layernorm", eps))
        qkv = qkv.view(T, H, 3 * dh).transpose(0, 1)  # per head [q | k | v]
        q, k, v = qkv[..., :dh], qkv[..., dh:2 * dh], qkv[..., 2 * dh:]
        attention, merged = attend(rotary(q), rotary(k), v, causal=True)
        attentions.append(attention)
        attended = linear(w, b + "attention.dense", zero_head(merged, H, ablate, layer))
        if cfg["use_parallel_residual"]:
            x = x + attended + mlp(b, layer_norm(x, w, b + "post_attention_layernorm", eps))
        else:
            x = x + attended
            x = x + mlp(b, layer_norm(x, w, b + "post_attention_layernorm", eps))
    hidden = layer_norm(x, w, p + "final_layer_norm", eps)
    return attentions, hidden, hidden @ (w[p + "embed_in.weight"] if cfg["tie_word_embeddings"] else w["embed_out.weight"]).T


def bert_forward(w, cfg, ids, p, types=None, ablate=None):
    """BertModel's forward; types: each token's type (token_type_ids), None for every token of type 0;
    ablate: (layer, head[, "mean"]) as zero_head."""
    H, eps, T = cfg["num_attention_heads"], cfg["layer_norm_eps"], len(ids)
    e = p + "embeddings."
    types = [0] * T if types is None else types
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:T] + w[e + "token_type_embeddings.weight"][types]
    x = layer_norm(x, w, e + "LayerNorm", eps)
    attentions = []
    for layer in range(cfg["num_hidden_layers"]):
        b = f"{p}encoder.layer.{layer}."
        q, k, v = (heads(linear(w, b + "attention.self." + n, x), H) for n in ("query", "key", "value"))
        attention, merged = attend(q, k, v, causal=cfg.get("is_decoder", False))
        attentions.append(attention)
        attended = linear(w, b + "attention.output.dense", zero_head(merged, H, ablate, layer))
        x = layer_norm(attended + x, w, b + "attention.output.LayerNorm", eps)
        inner = gelu(linear(w, b + "intermediate.dense", x))
        x = layer_norm(linear(w, b + "output.dense", inner) + x, w, b + "output.LayerNorm", eps)
    return attentions, x, None


def mlm_loss(w, cfg, hidden, ids):
    """BertForMaskedLM's head (cls.predictions: transform dense, the config's activation, LayerNorm,
    the decoder tied to the word embeddings, its own bias) on the final hidden states; the mean over
    positions of -log softmax(logits_t)[ids_t], each token predicted at its own position unmasked."""
    act = gelu_new if cfg["hidden_act"] == "gelu_new" else gelu
    x = layer_norm(act(linear(w, "cls.predictions.transform.dense", hidden)), w, "cls.predictions.transform.LayerNorm",
                   cfg["layer_norm_eps"])
    logits = x @ w[cfg["word_embeddings"]].T + w["cls.predictions.bias"]
    rows = torch.log_softmax(logits, dim=-1)
    return -rows[torch.arange(len(ids)), torch.tensor(ids)].mean().reshape(1)


def random_weights(a, p):
    """Random weights in the family's names and orientations."""
    D, F, V, P = a.d_model, a.ffn, a.vocab, a.positions

    def norm(name):
        return {name + ".weight": 1 + rand(D, scale=0.1), name + ".bias": rand(D, scale=0.1)}

    def dense(name, rows, cols):
        return {name + ".weight": rand(rows, cols), name + ".bias": rand(rows if a.model_type != "gpt2" else cols, scale=0.1)}

    w = {}
    if a.model_type == "gpt2":
        w.update({p + "wte.weight": rand(V, D, scale=1.0), p + "wpe.weight": rand(P, D, scale=0.3), **norm(p + "ln_f")})
        if a.lm_head == "separate":
            w["lm_head.weight"] = rand(V, D)
        for layer in range(a.layers):
            b = f"{p}h.{layer}."
            w.update({**norm(b + "ln_1"), **norm(b + "ln_2"), **dense(b + "attn.c_attn", D, 3 * D),
                      **dense(b + "attn.c_proj", D, D), **dense(b + "mlp.c_fc", D, F), **dense(b + "mlp.c_proj", F, D)})
            w[b + "attn.bias"] = torch.ones(1, 1, P, P, dtype=torch.float64).tril()  # the causal-mask buffer old checkpoints hold
    elif a.model_type == "gpt_neox":
        w.update({p + "embed_in.weight": rand(V, D, scale=1.0), **norm(p + "final_layer_norm")})
        if a.lm_head != "tied":
            w["embed_out.weight"] = rand(V, D)
        for layer in range(a.layers):
            b = f"{p}layers.{layer}."
            w.update({**norm(b + "input_layernorm"), **norm(b + "post_attention_layernorm"),
                      **dense(b + "attention.query_key_value", 3 * D, D), **dense(b + "attention.dense", D, D),
                      **dense(b + "mlp.dense_h_to_4h", F, D), **dense(b + "mlp.dense_4h_to_h", D, F)})
    else:
        e = p + "embeddings."
        w.update({e + "word_embeddings.weight": rand(V, D, scale=1.0), e + "position_embeddings.weight": rand(P, D),
                  e + "token_type_embeddings.weight": rand(2, D), **norm(e + "LayerNorm")})
        for layer in range(a.layers):
            b = f"{p}encoder.layer.{layer}."
            for n in ("query", "key", "value"):
                w.update(dense(b + "attention.self." + n, D, D))
            w.update({**dense(b + "attention.output.dense", D, D), **norm(b + "attention.output.LayerNorm"),
                      **dense(b + "intermediate.dense", F, D), **dense(b + "output.dense", D, F), **norm(b + "output.LayerNorm")})
        if a.mlm_head:
            w.update({**dense("cls.predictions.transform.dense", D, D), **norm("cls.predictions.transform.LayerNorm"),
                      "cls.predictions.bias": rand(V, scale=0.1)})
    return w


def bytes_to_unicode():
    """GPT-2's printable stand-in for each byte (openai/gpt-2 encoder.py)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


def tokenizer_json(model_type):
    """A small tokenizer.json of the family's kind and its end-of-text id (None for BERT)."""
    if model_type == "bert":
        words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", ".", ","]
        words += [chr(c) for c in range(ord("a"), ord("z") + 1)] + ["##" + chr(c) for c in range(ord("a"), ord("z") + 1)]
        vocab = {word: i for i, word in enumerate(words)}
        specials = [{"id": vocab[t], "content": t, "special": True} for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
        return {"model": {"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                          "max_input_chars_per_word": 100},
                "normalizer": {"type": "BertNormalizer", "lowercase": True}, "pre_tokenizer": {"type": "BertPreTokenizer"},
                "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", vocab["[CLS]"]], "sep": ["[SEP]", vocab["[SEP]"]]},
                "decoder": {"type": "WordPiece", "prefix": "##"}, "added_tokens": specials}, None
    chars = bytes_to_unicode()
    vocab = {chars[b]: b for b in range(256)}
    merges = []
    for left, right in (("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "c"), ("a", "t"), ("Ġc", "at"), ("Ġ", "s"), ("Ġs", "at")):
        merges.append(left + " " + right)
        vocab[left + right] = len(vocab)
    end = len(vocab)
    vocab["<|endoftext|>"] = end
    return {"model": {"type": "BPE", "vocab": vocab, "merges": merges},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            "decoder": {"type": "ByteLevel"},
            "added_tokens": [{"id": end, "content": "<|endoftext|>", "special": True}]}, end


def greedy_continuation(forward, w, cfg, ids, p, steps, end_id, max_positions, choices):
    """Up to `steps` argmax ids below `choices` after `ids`, stopping before end_id or at max_positions."""
    sequence = list(ids)
    generated = []
    while len(generated) < steps and len(sequence) < max_positions:
        _, _, logits = forward(w, cfg, sequence, p)
        next_id = int(logits[-1, :choices].argmax())
        if next_id == end_id:
            break
        sequence.append(next_id)
        generated.append(next_id)
    return generated


def config(a):
    if a.model_type == "gpt2":
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": a.d_model, "n_head": a.heads,
                "n_layer": a.layers, "n_inner": a.ffn, "vocab_size": a.vocab, "n_positions": a.positions, "n_ctx": a.positions,
                "layer_norm_epsilon": a.eps, "activation_function": "gelu_new", "scale_attn_weights": True,
                "tie_word_embeddings": a.lm_head != "separate"}
    common = {"hidden_size": a.d_model, "num_attention_heads": a.heads, "num_hidden_layers": a.layers,
              "intermediate_size": a.ffn, "vocab_size": a.vocab, "max_position_embeddings": a.positions,
              "layer_norm_eps": a.eps, "hidden_act": "gelu"}
    if a.model_type == "gpt_neox":
        rope = {"rotary_pct": a.rotary_pct, "rotary_emb_base": a.rotary_base} if a.rope_format == "v4" else {
            "rope_parameters": {"rope_type": "default", "rope_theta": a.rotary_base, "partial_rotary_factor": a.rotary_pct}}
        return {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], **common, **rope,
                "use_parallel_residual": not a.sequential_residual, "tie_word_embeddings": a.lm_head == "tied"}
    return {"model_type": "bert", "architectures": ["BertForMaskedLM" if a.mlm_head else "BertModel"], **common, "type_vocab_size": 2,
            "position_embedding_type": "absolute", "is_decoder": a.is_decoder}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in ("d-model", "heads", "layers", "ffn", "vocab", "tokens"):
        p.add_argument("--" + name, type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--model-type", required=True, choices=["gpt2", "gpt_neox", "bert"])
    p.add_argument("--prefix", action="store_true", help="names under transformer. / gpt_neox. / bert.")
    p.add_argument("--shards", type=int, default=1, choices=[1, 2])
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--positions", type=int, default=64)
    p.add_argument("--rotary-pct", type=float, default=0.25)
    p.add_argument("--rotary-base", type=float, default=10000.0)
    p.add_argument("--sequential-residual", action="store_true", help="gpt_neox: use_parallel_residual false")
    p.add_argument("--lm-head", choices=["tied", "separate"], help="default: tied for gpt2, separate for gpt_neox")
    p.add_argument("--gamma-beta", action="store_true", help="LayerNorm tensors named .gamma/.beta (TensorFlow conversions)")
    p.add_argument("--ablate", help="L:H: also the logits (gpt2, gpt_neox) or final hidden states (bert) with that head "
                   "zeroed; L:H:mean replaces it by its mean over the tokens (bert)")
    p.add_argument("--generate", type=int, default=0, help="also the greedy continuation of N ids (gpt2, gpt_neox)")
    p.add_argument("--tokenizer", action="store_true", help="also a small tokenizer.json of the family's kind")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--is-decoder", action="store_true", help="bert: is_decoder (a causal mask)")
    p.add_argument("--rope-format", choices=["v4", "v5"], default="v4", help="gpt_neox: v5's rope_parameters")
    p.add_argument("--pair-at", type=int, default=None, help="bert: tokens from this position on are of type 1")
    p.add_argument("--mlm-head", action="store_true", help="bert: a BertForMaskedLM's cls.predictions head, tied decoder")
    a = p.parse_args()
    if a.seed is not None:
        torch.manual_seed(a.seed)
    os.makedirs(a.out, exist_ok=True)
    prefix = PREFIXES[a.model_type] if a.prefix else ""
    cfg, w = config(a), random_weights(a, prefix)
    written = w
    if a.gamma_beta:
        renames = {".LayerNorm.weight": ".LayerNorm.gamma", ".LayerNorm.bias": ".LayerNorm.beta"}
        written = {next((n[: -len(old)] + new for old, new in renames.items() if n.endswith(old)), n): t for n, t in w.items()}
    write_model_folder(a.out, written, cfg, a.shards)
    end_id = None
    if a.tokenizer:
        tokenizer, end_id = tokenizer_json(a.model_type)
        if a.vocab < len(tokenizer["model"]["vocab"]):
            p.error(f"--tokenizer needs --vocab of at least {len(tokenizer['model']['vocab'])}")
        with open(os.path.join(a.out, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer, f, ensure_ascii=False)
    # A text's ids are the tokenizer's, below its size even where the model's vocabulary is larger.
    tokens = len(tokenizer["model"]["vocab"]) if a.tokenizer else a.vocab
    ids = write_ids(a.out, tokens, a.tokens)
    forward = {"gpt2": gpt2_forward, "gpt_neox": neox_forward, "bert": bert_forward}[a.model_type]
    if a.pair_at is not None:
        if a.model_type != "bert" or not 0 <= a.pair_at <= a.tokens:
            p.error("--pair-at S takes a bert model and 0 <= S <= --tokens")
        types = [0] * a.pair_at + [1] * (a.tokens - a.pair_at)
        with open(os.path.join(a.out, "types.txt"), "w") as f:
            f.write(" ".join(map(str, types)))
        attentions, hidden, logits = bert_forward(w, cfg, ids, prefix, types)
    else:
        attentions, hidden, logits = forward(w, cfg, ids, prefix)
    results = {"hidden": hidden} if logits is None else {"hidden": hidden, "logits": logits}
    head_cfg = {**cfg, "word_embeddings": prefix + "embeddings.word_embeddings.weight"}
    if a.mlm_head:
        results["mlm_loss"] = mlm_loss(w, head_cfg, hidden, ids)
    if a.ablate:
        layer, head, *mode = a.ablate.split(":")
        ablated = forward(w, cfg, ids, prefix, ablate=(int(layer), int(head), *mode))
        results["ablated_hidden" if a.model_type == "bert" else "ablated_logits"] = ablated[1 if a.model_type == "bert" else 2]
        if a.mlm_head:
            results["ablated_mlm_loss"] = mlm_loss(w, head_cfg, ablated[1], ids)
    save_expected(a.out, attentions, results)
    if a.generate:
        generated = greedy_continuation(forward, w, cfg, ids, prefix, a.generate, end_id, a.positions, tokens)
        with open(os.path.join(a.out, "expected_generation.txt"), "w") as f:
            f.write(" ".join(map(str, generated)))


if __name__ == "__main__":
    main()
