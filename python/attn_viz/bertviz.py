"""The bridge to BertViz: attention in the shape its head_view and model_view take."""


def to_bertviz(result):
    """(attention, tokens) for bertviz.head_view(attention, tokens) / model_view(attention, tokens).

    attention is a tuple with one [1, H, T, T] array per layer (batch of one), views of
    result.attention (no copy); torch tensors sharing that memory when torch is importable (BertViz
    takes torch tensors), NumPy arrays otherwise. tokens is the list of T token labels.
    """
    layers = tuple(result.attention[layer][None] for layer in range(result.attention.shape[0]))
    try:
        import torch
    except ImportError:
        return layers, list(result.tokens)
    return tuple(torch.from_numpy(layer) for layer in layers), list(result.tokens)
