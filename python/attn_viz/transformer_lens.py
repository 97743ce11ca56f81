"""The bridge to TransformerLens: a run's arrays keyed by the hook names of TL's ActivationCache."""


def to_transformer_lens(result):
    """A dict keyed by TransformerLens's hook names, each array with TL's batch axis (of one):

    blocks.{l}.attn.hook_pattern  [1, H, T, T]  attention weights (result.attention[l])
    blocks.{l}.attn.hook_z        [1, T, H, d_h] each head's output A_h V_h before W_O
    blocks.{l}.hook_attn_out      [1, T, D]     the attention output (heads through W_O, with its bias)

    l counts the run's layers from 0, as TL's blocks do. Every array is a view of the result's own
    buffers (no copy). Compare with TL's cache as, e.g.,
    np.allclose(ours["blocks.0.attn.hook_pattern"], cache["blocks.0.attn.hook_pattern"].numpy()).
    """
    names = {}
    for layer in range(result.attention.shape[0]):
        names[f"blocks.{layer}.attn.hook_pattern"] = result.attention[layer][None]
        names[f"blocks.{layer}.attn.hook_z"] = result.head_outputs(layer)[None]
        names[f"blocks.{layer}.hook_attn_out"] = result.attention_output(layer)[None]
    return names
