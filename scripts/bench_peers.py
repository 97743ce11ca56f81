#!/usr/bin/env python3
"""The Python workflows scripts/bench.sh (part 7) measures attn-viz against, on one model and one
token sequence, each writing one PNG per head of every layer into OUT:

  bench_peers.py make FOLDER IDS_FILE T      a GPT-2-shaped random model (12 layers x 12 heads,
                                             D=768, vocabulary 50257) saved by transformers, and T
                                             random token ids (comma-separated) into IDS_FILE
  bench_peers.py transformers FOLDER IDS_FILE OUT THREADS       output_attentions=True, eager
  bench_peers.py transformer_lens FOLDER IDS_FILE OUT THREADS   TransformerBridge.run_with_cache
  bench_peers.py attn_viz FOLDER IDS_FILE OUT THREADS           the attn_viz package: run, write

The peers draw with matplotlib's imsave (viridis, one pixel per map entry): the shortest route
matplotlib has to a heatmap file, without axes. Run the peers with build/oracles/bin/python (the
oracles' environment) and attn_viz with PYTHONPATH=build/python; THREADS pins PyTorch's and attn-viz's threads alike."""
import os
import random
import sys


def read_ids(path):
    with open(path, encoding="utf-8") as f:
        return [int(i) for i in f.read().split(",")]


def save_pngs(maps, out):
    """maps: [L][H, T, T] array-likes; one viridis PNG per head, as the CLI writes them."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    for layer, heads in enumerate(maps):
        for head, attention in enumerate(heads):
            plt.imsave(os.path.join(out, f"L{layer:02d}_H{head:02d}.png"), attention, cmap="viridis", vmin=0.0, vmax=1.0)


def tokenizer_object(vocab_size):
    from tokenizers import Tokenizer, models, pre_tokenizers
    vocab = {("[UNK]" if i == 0 else f"w{i}"): i for i in range(vocab_size)}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return tokenizer


def make(folder, ids_file, T):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=12, n_head=12, n_embd=768, vocab_size=50257, n_positions=1024)
    model = transformers.GPT2LMHeadModel(config).eval()
    model.save_pretrained(folder)
    tokenizer_object(config.vocab_size).save(os.path.join(folder, "tokenizer.json"))
    rng = random.Random(0)
    with open(ids_file, "w", encoding="utf-8") as f:
        f.write(",".join(str(rng.randrange(1, config.vocab_size)) for _ in range(T)))


def run_transformers(folder, ids, out, threads):
    import torch
    import transformers
    torch.set_num_threads(threads)
    with torch.no_grad():
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
        attentions = model(torch.tensor([ids]), output_attentions=True).attentions
    save_pngs([a[0].numpy() for a in attentions], out)


def run_transformer_lens(folder, ids, out, threads):
    import torch
    import transformers
    from transformer_lens.model_bridge import TransformerBridge
    torch.set_num_threads(threads)
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer_object(50257), unk_token="[UNK]")
    with torch.no_grad():
        model = TransformerBridge.boot_transformers(folder, tokenizer=tokenizer)
        _, cache = model.run_with_cache(torch.tensor([ids]))
    save_pngs([cache["pattern", layer][0].numpy() for layer in range(model.cfg.n_layers)], out)


def run_attn_viz(folder, ids, out, threads):
    import attn_viz
    attn_viz.Model(folder, threads=threads).run(ids=ids).write(out, force=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        runners = {"transformers": run_transformers, "transformer_lens": run_transformer_lens, "attn_viz": run_attn_viz}
        runners[mode](sys.argv[2], read_ids(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
