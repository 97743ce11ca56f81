"""attn-viz from Python: run attention of whole models and layer files on the CLI's native core.

    import attn_viz
    model = attn_viz.Model("../shared/models/stories260K-hf")
    result = model.run(text="Once upon a time")
    result.attention      # float32 [L, H, T, T], not copied
    result.tokens, result.ids
    result.stats()        # the stats.json document as a dict
    result.head_png(0, 3) # layer 0 head 3 as PNG bytes
    result.write("out")   # pictures and statistics files as `attn-viz model --out out`
    result.to_bertviz()   # (per-layer [1, H, T, T] attentions, tokens) for BertViz
    result.to_transformer_lens()  # {"blocks.0.attn.hook_pattern": [1, H, T, T], ...}
    model.run_corpus("corpus.jsonl")  # the stats.json of `attn-viz model --inputs corpus.jsonl`
    attn_viz.Layer("weights.json").run_corpus("inputs.jsonl")  # ... of `attn-viz run --inputs`
    attn_viz.Model("bart-folder").run(text="...", target_text="...")  # .encoder, .decoder, .cross
    model.ablate(text="...", heads="all")  # the analyses of `attn-viz model` (analyses.py):
    model.patch(clean="...", corrupted="..."), model.logit_attribution(text="..."),
    model.composition(), model.rollout(text="..."), model.flow(text="..."), model.analyze([...], text="...")

Errors of the library raise attn_viz.Error (a RuntimeError) with the CLI's one-line message.
"""
from ._core import Error, Layer, Model, Result, Seq2SeqResult
from . import analyses
from .bertviz import to_bertviz
from .transformer_lens import to_transformer_lens

Result.to_bertviz = to_bertviz
Result.to_transformer_lens = to_transformer_lens
analyses.install(Model)

__all__ = ["Error", "Layer", "Model", "Result", "Seq2SeqResult", "to_bertviz", "to_transformer_lens"]
