"""What both oracles share (transformers_oracle.py, transformer_lens_oracle.py; the caller puts the
oracle packages on sys.path first): the random models, made by transformers' own classes with every
weight redrawn so that heads are peaked, saved as a folder the CLI reads; and the CLI's run on it."""
import json
import os
import subprocess

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors


def randomize(model):
    """transformers' initialisation (std 0.02) makes every map nearly uniform; redraw every tensor
    so that heads are peaked and a wrong mask, position or scale shows: matrices N(0, 0.3²),
    embeddings N(0, 1), biases N(0, 0.1²), norm weights about 1 (Gemma's (1 + w) about 0). Larger
    scores would meet the oracle's own rounding: transformers computes RoPE angles in float32 even
    for a float64 model (inv_freq and positions as torch.float), about 2e-6 rad at position 32.
    GPT-Neo neither scales its scores by 1 / sqrt(head_dim) nor computes them in float64 (its _attn
    casts q and k to float32), nor does GPTBigCode with scale_attn_weights false (its softmax runs in
    float32): their q and k are drawn head_dim^-1/4 as large, so that their scores are as peaked as
    the scaled families' and not beyond float32's reach."""
    config = model.config
    unscaled = config.model_type == "gpt_neo" or (config.model_type == "gpt_bigcode" and not config.scale_attn_weights)
    head_dim = config.hidden_size // config.num_attention_heads if unscaled else 1
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            p.copy_(torch.randn_like(p) * (1.0 if "embed" in name or name.endswith(("wte.weight", "wpe.weight", "shared.weight")) else 0.3))
            if unscaled and name.endswith(("q_proj.weight", "k_proj.weight")):
                p.mul_(head_dim ** -0.25)
            if unscaled and name.endswith("attn.c_attn.weight"):  # [q; k; v] rows: q's D and the one k head's
                p[: config.hidden_size + head_dim].mul_(head_dim ** -0.25)
        elif "norm" in name.lower() or ".ln" in name or name.startswith("ln_"):
            p.copy_(torch.randn_like(p) * 0.2 + (0.0 if bool((p == 0).all()) else 1.0))
        else:
            p.copy_(torch.randn_like(p) * 0.1)


def save_folder(model, config, folder):
    model.save_pretrained(folder)
    # The CLI reads a tokenizer beside the weights even for --tokens: a WordPiece vocabulary of one
    # token per embedding row, made with Hugging Face's tokenizers.
    vocab = {("[UNK]" if i == 0 else f"w{i}"): i for i in range(config.vocab_size)}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    if config.model_type == "bert":  # BERT's template, w1 and w2 as its [CLS] and [SEP], for text pairs
        tokenizer.post_processor = processors.TemplateProcessing(
            single="w1 $A w2", pair="w1 $A w2 $B:1 w2:1", special_tokens=[("w1", 1), ("w2", 2)])
    tokenizer.save(os.path.join(folder, "tokenizer.json"))
    return tokenizer


def run_cli(binary, folder, out, arguments):
    """`attn-viz model` on FOLDER with ARGUMENTS into OUT (statistics only, one thread); its stats.json."""
    command = [binary, "model", "--model", folder, "--out", out, "--stats-only", "-q", "--force", "--threads", "1"] + arguments
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise AssertionError(f"attn-viz exited {run.returncode}: {run.stderr.strip()}")
    with open(os.path.join(out, "stats.json"), encoding="utf-8") as f:
        return json.load(f)
