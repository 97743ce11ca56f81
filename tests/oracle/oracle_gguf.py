"""A transformers model written as the GGUF file llama.cpp's convert_hf_to_gguf.py makes of it, F32, so
that transformers_oracle.py checks a family's GGUF form against transformers too:
  llama, mistral  LlamaModel (MistralForCausalLM is registered there): architecture llama, q/k rows
                  permuted for llama.cpp's interleaved RoPE, no sliding window written;
  olmo            OlmoModel: q/k rows permuted as llama's, no norm tensors (OLMo's have none);
  granite         GraniteModel: q/k rows permuted as llama's, the multipliers as embedding_scale,
                  attention.scale, residual_scale and logit_scale;
  gemma           GemmaModel: architecture gemma, every norm weight stored as 1 + w, rows as they are;
  qwen2, qwen3, starcoder2, stablelm, olmo2: rows as they are (stablelm: rope.dimension_count, and
                  no ffn_norm in parallel blocks, as StableLMModel writes them; olmo2: its norms after
                  attention and feed-forward as post_attention_norm and post_ffw_norm, Olmo2Model's).
The tokenizer is a stand-in SentencePiece vocabulary of one piece per embedding row (the CLI opens a
tokenizer even for --tokens)."""
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from make_synthetic_gguf import ALIGNMENT, ARRAY, F32, I32, STRING, U32, gguf_string, metadata_value  # noqa: E402


def write_gguf(path, metadata, tensors):
    """metadata: [(key, kind, value)]; tensors: [(name, float32 array in its row-major shape)]."""
    out = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(metadata))]
    out += [gguf_string(key) + metadata_value(kind, value) for key, kind, value in metadata]
    offset, blobs = 0, []
    for name, array in tensors:
        dims = list(reversed(array.shape))  # ggml: innermost first
        out.append(gguf_string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims) +
                   struct.pack("<IQ", 0, offset))
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        blobs.append(data + b"\0" * (-len(data) % ALIGNMENT))
        offset += len(blobs[-1])
    head = b"".join(out)
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % ALIGNMENT) + b"".join(blobs))


def architecture(config):
    """The general.architecture convert_hf_to_gguf.py writes for the model, or None (no GGUF form here)."""
    return {"llama": "llama", "mistral": "llama", "gemma": "gemma", "qwen2": "qwen2", "qwen3": "qwen3",
            "starcoder2": "starcoder2", "stablelm": "stablelm", "olmo": "olmo", "olmo2": "olmo2",
            "granite": "granite", "cohere": "command-r"}.get(config.model_type)


def _permute(w, heads):
    """LlamaModel.permute: each head's rows from Hugging Face's half-split order to interleaved pairs."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def convert(model, config, path):
    arch = architecture(config)
    gemma = arch == "gemma"
    # LlamaModel permutes q/k rows for llama.cpp's interleaved RoPE; Qwen2Model, Qwen3Model and
    # GemmaModel keep them (llama.cpp turns their heads by halves, as transformers does).
    permuted = arch in ("llama", "olmo", "granite")
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    p = arch + "."
    rope = getattr(config, "rope_parameters", None) or {}
    metadata = [("general.architecture", STRING, arch),
                (p + "context_length", U32, config.max_position_embeddings),
                (p + "embedding_length", U32, config.hidden_size),
                (p + "block_count", U32, config.num_hidden_layers),
                (p + "feed_forward_length", U32, config.intermediate_size),
                (p + "attention.head_count", U32, heads),
                (p + "attention.head_count_kv", U32, kv),
                # Starcoder2's and StableLM's LayerNorms: add_layer_norm_eps; the others' RMSNorms:
                # add_layer_norm_rms_eps
                (p + "attention.layer_norm_epsilon", F32, config.norm_epsilon) if arch == "starcoder2" else
                (p + "attention.layer_norm_epsilon", F32, config.layer_norm_eps) if arch in ("stablelm", "command-r") else
                (p + "attention.layer_norm_epsilon", F32, 1e-5) if arch == "olmo" else  # OlmoModel: OlmoLayerNorm's
                (p + "attention.layer_norm_rms_epsilon", F32, config.rms_norm_eps),
                (p + "rope.freq_base", F32, rope.get("rope_theta", 10000.0))]
    if permuted:
        metadata += [(p + "rope.dimension_count", U32, head_dim)]
    elif arch == "stablelm":  # StableLMModel: the rotary features of a head of hidden_size / heads
        metadata += [(p + "rope.dimension_count", U32, int(head_dim * rope.get("partial_rotary_factor", 1.0)))]
    else:
        metadata += [(p + "attention.key_length", U32, head_dim), (p + "attention.value_length", U32, head_dim)]
    if arch == "granite":
        metadata += [(p + "embedding_scale", F32, config.embedding_multiplier),
                     (p + "attention.scale", F32, config.attention_multiplier),
                     (p + "residual_scale", F32, config.residual_multiplier),
                     (p + "logit_scale", F32, config.logits_scaling)]
    if arch == "command-r":
        metadata += [(p + "logit_scale", F32, config.logit_scale)]
    v = config.vocab_size
    tokens = ["<unk>", "<s>", "</s>"] + [f"\u2581w{i}" for i in range(3, v)]
    metadata += [("tokenizer.ggml.model", STRING, "llama"), ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens),
                 ("tokenizer.ggml.scores", (ARRAY, F32), [0.0] * 3 + [-1.0] * (v - 3)),
                 ("tokenizer.ggml.token_type", (ARRAY, I32), [2, 3, 3] + [1] * (v - 3)),
                 ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
                 ("tokenizer.ggml.unknown_token_id", U32, 0)]
    state = {k: t.detach().double().numpy() for k, t in model.state_dict().items()}
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    if arch == "olmo2":
        names.update({"post_attention_layernorm": "post_attention_norm", "post_feedforward_layernorm": "post_ffw_norm"})
    tensors = [("token_embd.weight", state["model.embed_tokens.weight"])]
    for layer in range(config.num_hidden_layers):
        for hf, gg in names.items():
            for kind in ("weight", "bias"):
                key = f"model.layers.{layer}.{hf}.{kind}"
                if key not in state:
                    continue
                w = state[key]
                if permuted and hf in ("self_attn.q_proj", "self_attn.k_proj"):
                    w = _permute(w, heads if hf == "self_attn.q_proj" else kv)
                if gemma and hf.endswith("layernorm"):
                    w = w + 1
                tensors.append((f"blk.{layer}.{gg}.{kind}", w))
    if "model.norm.weight" in state:  # (OLMo's LayerNorms have no tensors)
        tensors.append(("output_norm.weight", state["model.norm.weight"] + (1 if gemma else 0)))
    if "model.norm.bias" in state:
        tensors.append(("output_norm.bias", state["model.norm.bias"]))
    if not config.tie_word_embeddings:
        tensors.append(("output.weight", state["lm_head.weight"]))
    write_gguf(path, metadata, tensors)
