#!/usr/bin/env python3
"""attn-viz's head analyses against TransformerLens itself, on random decoders made by transformers'
own classes (oracle_families.py, float64, eager attention, weights redrawn as transformers_oracle.py
does), saved with save_pretrained and loaded both by the CLI and by TransformerLens'
TransformerBridge (boot_transformers on the folder, the same float64 model):

- composition scores (`--composition`, composition.csv) against `all_composition_scores("Q"/"K"/"V")`
  with the norms folded and writing weights centred (enable_compatibility_mode(fold_ln=True,
  center_writing_weights=True)), the processing docs/metrics.md says attn-viz's scores equal;
- direct logit attribution of every head (`--logit-attribution --target V`, logit_attribution.csv)
  against `cache.stack_head_results` -> `cache.logit_attrs` (which holds the final norm's scale fixed
  through `apply_ln_to_stack`) at every position (fold_ln puts the final norm's weight into W_U, as attn-viz multiplies by it;
  center_unembed off: it would shift every component's share; fold_value_biases off: attn-viz's head
  output z_h W_O^h carries b_V);
- activation patching of every head's output at all positions (`--patch-from-tokens`,
  `--patch-metric logit-diff:A,B`, patching.csv `value`) against
  `patching.get_act_patch_attn_head_out_all_pos` on hook_z, run on the clean tokens with the
  corrupted run's cache (TransformerLens' names for the two runs are the other way round).

Every number within 1e-5 (composition absolute, scores are in [0, 1]; the others relative to the
largest logit). Lengths T = 2, a few, 17.

  transformer_lens_oracle.py ATTN_VIZ_BINARY ORACLE_DIR   (ctest: transformer-lens-oracle)
scripts/setup_oracles.sh installs transformers and PyTorch into ORACLE_DIR and TransformerLens beside
them into ORACLE_DIR-tl. Exits 77 (skipped) with a "skipped:" line when pip or the package index is
unavailable, or 1 with ATTN_VIZ_REQUIRE_PYPI=1. ATTN_VIZ_ORACLE_SEED=N replays a seed."""
import csv
import functools
import os
import random
import sys
import tempfile
import time
from importlib.metadata import version

binary, oracle_dir = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, ".."), here]
import oracle_environment  # noqa: E402

oracle_environment.enter(oracle_dir)  # from here on, under the oracles' own interpreter
os.environ["TQDM_DISABLE"] = "1"  # patching's progress bar, one line per head
import torch  # noqa: E402
import transformers  # noqa: E402
from transformer_lens import patching  # noqa: E402
from transformer_lens.model_bridge import TransformerBridge  # noqa: E402

from oracle_families import FAMILIES  # noqa: E402
import oracle_models  # noqa: E402
from oracle_models import randomize, save_folder  # noqa: E402

TOL = 1e-5
KINDS = ("q", "k", "v")

seed = int(os.environ.get("ATTN_VIZ_ORACLE_SEED", time.time_ns() % 2147483647))
print(f"seed {seed} (replay: ATTN_VIZ_ORACLE_SEED={seed}); transformer_lens {version('transformer-lens')}, "
      f"transformers {transformers.__version__}, torch {torch.__version__}")
torch.set_grad_enabled(False)
transformers.utils.logging.disable_progress_bar()
run_cli = functools.partial(oracle_models.run_cli, binary)


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def bridge(model, folder, tokenizer):
    """TransformerLens over the very model transformers made, processed as attn-viz reads weights."""
    b = TransformerBridge.boot_transformers(folder, hf_model=model, tokenizer=tokenizer, dtype=torch.float64)
    b.enable_compatibility_mode(disable_warnings=True, fold_ln=True, center_writing_weights=True,
                                center_unembed=False, fold_value_biases=False)
    return b


def check_composition(tl, out, errors):
    rows = read_csv(os.path.join(out, "composition.csv"))
    theirs = {kind: tl.all_composition_scores(kind.upper()) for kind in KINDS}
    L, H = tl.cfg.n_layers, tl.cfg.n_heads
    expected = sum(H * H * (L - 1 - a) for a in range(L)) * len(KINDS)
    if len(rows) != expected:
        raise AssertionError(f"composition.csv has {len(rows)} pairs, {expected} expected")
    for r in rows:
        a, ha, b, hb = (int(r[k]) for k in ("earlier_layer", "earlier_head", "later_layer", "later_head"))
        reference = float(theirs[r["kind"]][a, ha, b, hb])
        errors["composition"] = max(errors["composition"], abs(float(r["score"]) - reference))
        if abs(float(r["score"]) - reference) > TOL:
            raise AssertionError(f"{r['kind'].upper()}-composition L{a}H{ha} -> L{b}H{hb}: {float(r['score']):.8f} "
                                 f"against TransformerLens' {reference:.8f}")


def check_attribution(tl, cache, ids, target, out, span, errors):
    stack, labels = cache.stack_head_results(layer=-1, return_labels=True)
    theirs = cache.logit_attrs(stack, tokens=torch.full((1, len(ids)), target))  # [L*H, 1, T]; it applies the final norm's scale
    index = {label: i for i, label in enumerate(labels)}
    rows = [r for r in read_csv(os.path.join(out, "logit_attribution.csv")) if r["component"] == "head"]
    if len(rows) != len(labels) * len(ids):
        raise AssertionError(f"logit_attribution.csv has {len(rows)} head rows, {len(labels) * len(ids)} expected")
    for r in rows:
        t, layer, head = int(r["position"]), int(r["layer"]), int(r["head"])
        reference = float(theirs[index[f"L{layer}H{head}"], 0, t])
        errors["attribution"] = max(errors["attribution"], abs(float(r["contribution"]) - reference) / span)
        if abs(float(r["contribution"]) - reference) > TOL * span:
            raise AssertionError(f"attribution of L{layer}H{head} at position {t}: {float(r['contribution']):.8f} "
                                 f"against TransformerLens' {reference:.8f} (largest logit {span:.3f})")


def check_patching(tl, ids, corrupted, a, b, out, span, errors):
    _, corrupted_cache = tl.run_with_cache(torch.tensor([corrupted]))
    theirs = patching.get_act_patch_attn_head_out_all_pos(
        tl, torch.tensor([ids]), corrupted_cache, lambda logits: logits[0, -1, a] - logits[0, -1, b])  # [L, H]
    for r in read_csv(os.path.join(out, "patching.csv")):
        layer, head = int(r["layer"]), int(r["head"])
        reference = float(theirs[layer, head])
        errors["patching"] = max(errors["patching"], abs(float(r["value"]) - reference) / span)
        if abs(float(r["value"]) - reference) > TOL * span:
            raise AssertionError(f"patching L{layer}H{head}: metric {float(r['value']):.8f} "
                                 f"against TransformerLens' {reference:.8f} (largest logit {span:.3f})")


def check(family, model, tl, folder, out, rng, T, errors):
    V = model.config.vocab_size
    ids = [rng.randrange(V) for _ in range(T)]
    corrupted = [rng.randrange(V) for _ in range(T)]
    target, a, b = rng.randrange(V), rng.randrange(V), rng.randrange(V)
    run_cli(folder, out, ["--tokens", ",".join(map(str, ids)), "--composition", "--logit-attribution", "--target", str(target),
                          "--patch-from-tokens", ",".join(map(str, corrupted)), "--patch-metric", f"logit-diff:{a},{b}"])
    logits, cache = tl.run_with_cache(torch.tensor([ids]))
    span = float(logits.abs().max())
    check_composition(tl, out, errors)
    check_attribution(tl, cache, ids, target, out, span, errors)
    check_patching(tl, ids, corrupted, a, b, out, span, errors)


failures = 0
families = os.environ.get("ATTN_VIZ_ORACLE_FAMILIES", "gpt2,llama,gpt_neox").split(",")
with tempfile.TemporaryDirectory() as scratch:
    for family in families:
        errors = {"composition": 0.0, "attribution": 0.0, "patching": 0.0}
        rng = random.Random(f"{seed}/{family}")
        kind, config, _ = FAMILIES[family](rng)
        config.num_hidden_layers = max(config.num_hidden_layers, 2)  # a later layer for composition
        torch.manual_seed(rng.randrange(2**31))
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float64).eval()
        randomize(model)
        folder = os.path.join(scratch, family)
        tokenizer = save_folder(model, config, folder)
        tl = bridge(model, folder, transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]"))
        done = 0
        for T in (2, rng.randint(3, 9), 17):
            try:
                check(family, model, tl, folder, os.path.join(scratch, f"{family}_T{T}"), rng, T, errors)
                done += 1
            except AssertionError as e:
                failures += 1
                print(f"FAIL {family} (seed {seed}), T = {T}: {e}\n  config: {config.to_json_string(use_diff=True)}")
                break
        heads = f"{config.num_attention_heads} heads, {getattr(config, 'num_key_value_heads', None) or config.num_attention_heads} key/value"
        print(f"{family:9s} {done} runs ({config.num_hidden_layers} layers, {heads}), max error: composition {errors['composition']:.1e}, "
              f"attribution {errors['attribution']:.1e}, patching {errors['patching']:.1e} (of the largest logit)")
print(f"{'all' if not failures else failures} {'agree' if not failures else 'runs disagree'} with TransformerLens {version('transformer-lens')}")
sys.exit(1 if failures else 0)
