"""Random configurations of every family attn-viz reads, as transformers' own Config classes take
them (transformers_oracle.py builds, saves and runs them). Each draw returns (kind, config, window):
kind "causal" (a *ForCausalLM), "encoder" (BertModel) or "seq2seq" (a *ForConditionalGeneration),
window the sliding window when some layer has one (so a test can run past it), else None."""
import transformers as tf


def _ids(v):
    """Special token ids inside a small vocabulary (some Config classes default to 32000 and more)."""
    return {"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0} if v > 2 else {}


def _rope(rng, kinds=("default", "linear", "llama3")):
    kind = rng.choice(kinds)
    p = {"rope_type": kind, "rope_theta": rng.choice([10000.0, 500000.0, 1000.0])}
    if kind == "linear":
        p["factor"] = rng.choice([2.0, 4.0])
    elif kind == "llama3":
        p.update(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=rng.choice([16, 8192]))
    return p


def _shape(rng):
    """Heads, KV heads and head size: one head, GQA, MQA, odd sizes."""
    heads = rng.choice([1, 2, 4, 6])
    kv = rng.choice([k for k in (1, 2, 3, heads) if heads % k == 0])
    return heads, kv, rng.choice([4, 6, 8, 10])


def _llama_like(rng):
    heads, kv, dh = _shape(rng)
    d = rng.choice([heads * dh, 12, 20, 24])
    v = rng.randint(20, 60)
    c = dict(hidden_size=d, num_attention_heads=heads, num_key_value_heads=kv, head_dim=dh,
             num_hidden_layers=rng.randint(1, 3), intermediate_size=rng.randint(8, 40), vocab_size=v,
             rms_norm_eps=rng.choice([1e-5, 1e-6]), tie_word_embeddings=rng.random() < 0.5, **_ids(v))
    return c


def llama(rng):
    c = _llama_like(rng)
    # LlamaConfig (transformers 5.24) refuses a hidden size that is not a multiple of the heads,
    # even with head_dim given; the other families take any (their odd sizes stay).
    if c["hidden_size"] % c["num_attention_heads"]:
        c["hidden_size"] = c["num_attention_heads"] * c["head_dim"]
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, mlp_bias=rng.random() < 0.5,
             hidden_act=rng.choice(["silu", "gelu", "gelu_pytorch_tanh"]))
    return "causal", tf.LlamaConfig(**c), None


def mistral(rng):
    c = _llama_like(rng)
    w = rng.choice([None, 3, 5])
    c.update(rope_parameters=_rope(rng, ("default",)), sliding_window=w)
    return "causal", tf.MistralConfig(**c), w


def ministral(rng):
    """Mistral's block with layer_types choosing the sliding layers (all of them by default). Always a
    window (64: longer than any text here): transformers' Ministral builds a sliding mask either way
    and fails without one."""
    c = _llama_like(rng)
    w = rng.choice([3, 5, 64])
    c.update(rope_parameters=_rope(rng, ("default",)), sliding_window=w)
    if rng.random() < 0.6:
        c["layer_types"] = [rng.choice(["full_attention", "sliding_attention"]) for _ in range(c["num_hidden_layers"])]
    cfg = tf.MinistralConfig(**c)
    return "causal", cfg, w if w and "sliding_attention" in cfg.layer_types else None


def starcoder2(rng):
    """LayerNorms with biases, a plain MLP, every projection biased as use_bias says, GQA, a window or none."""
    c = _llama_like(rng)
    del c["rms_norm_eps"]
    w = rng.choice([None, 3, 5])
    c.update(rope_parameters=_rope(rng, ("default", "linear")), sliding_window=w, use_bias=rng.random() < 0.7,
             norm_epsilon=rng.choice([1e-5, 1e-6]), hidden_act=rng.choice(["gelu_pytorch_tanh", "gelu"]))
    return "causal", tf.Starcoder2Config(**c), w


def smollm3(rng):
    """Llama's block without RoPE on some layers (no_rope_layers, or every no_rope_layer_interval-th),
    with use_sliding_window a window on those layers (the layer_types SmolLM3Config makes)."""
    c = _llama_like(rng)
    layers = c["num_hidden_layers"] = rng.randint(2, 4)  # (more layers only add float32 RoPE rounding)
    use_window = rng.random() < 0.5
    w = rng.choice([3, 4]) if use_window else None
    c.update(rope_parameters=_rope(rng), use_sliding_window=use_window, sliding_window=w,
             attention_bias=rng.random() < 0.5, mlp_bias=rng.random() < 0.3)
    if rng.random() < 0.5:
        c["no_rope_layers"] = [rng.choice([0, 1]) for _ in range(layers)]
    else:
        c["no_rope_layer_interval"] = rng.choice([2, 3, 4])
    cfg = tf.SmolLM3Config(**c)
    return "causal", cfg, w if "sliding_attention" in cfg.layer_types else None


def stablelm(rng):
    """LayerNorms with biases, Llama's gated MLP, partial rotary (0.25 unless given), q/k/v biases as
    use_qkv_bias says, parallel blocks from one norm as use_parallel_residual says. Heads of
    hidden_size / heads, sized so that every factor gives an even rotary width."""
    heads, kv, _ = _shape(rng)
    dh = rng.choice([8, 16])
    v = rng.randint(20, 60)
    rope = _rope(rng, ("default", "linear"))
    if rng.random() < 0.5:
        rope["partial_rotary_factor"] = rng.choice([0.25, 0.5, 1.0])
    cfg = tf.StableLmConfig(hidden_size=heads * dh, num_attention_heads=heads, num_key_value_heads=kv,
                            num_hidden_layers=rng.randint(1, 3), intermediate_size=rng.randint(8, 40), vocab_size=v,
                            layer_norm_eps=rng.choice([1e-5, 1e-6]), rope_parameters=rope,
                            use_qkv_bias=rng.random() < 0.5, use_parallel_residual=rng.random() < 0.5,
                            hidden_act=rng.choice(["silu", "gelu"]), tie_word_embeddings=rng.random() < 0.3, **_ids(v))
    return "causal", cfg, None


def olmo(rng):
    """Llama's block with LayerNorms without weights or biases (epsilon 1e-5 whatever config.json says:
    rms_norm_eps is written to show it is not read), q/k/v/o biases as attention_bias says."""
    c = _llama_like(rng)
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, hidden_act=rng.choice(["silu", "gelu"]))
    return "causal", tf.OlmoConfig(**c), None


def olmo2(rng):
    """RMSNorms after attention and feed-forward only, q/k norms over the whole projection (GQA: the
    keys' is narrower), q/k/v/o biases as attention_bias says."""
    c = _llama_like(rng)
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, hidden_act=rng.choice(["silu", "gelu"]))
    return "causal", tf.Olmo2Config(**c), None


def granite(rng):
    """Llama's block with Granite's four multipliers, each drawn (Granite 3's own values among them) or
    left to its default of 1 (attention_multiplier 1 is not 1 / sqrt(d_h)): embeddings, scores,
    residual adds, logits; q/k/v/o and MLP biases as attention_bias and mlp_bias say."""
    c = _llama_like(rng)
    if rng.random() < 0.5:  # as the published models, and so that the GGUF form is checked more often
        c["hidden_size"] = c["num_attention_heads"] * c["head_dim"]
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, mlp_bias=rng.random() < 0.5,
             hidden_act=rng.choice(["silu", "silu", "gelu"]))
    for key, values in (("embedding_multiplier", [12.0, 0.5]), ("attention_multiplier", [0.015625, 0.125, 0.3]),
                        ("residual_multiplier", [0.22, 0.6]), ("logits_scaling", [8.0, 0.6])):
        if rng.random() < 0.75:
            c[key] = rng.choice(values)
    return "causal", tf.GraniteConfig(**c), None


def qwen2(rng):
    c = _llama_like(rng)
    w = rng.choice([3, 4])
    c.update(rope_parameters=_rope(rng), use_sliding_window=rng.random() < 0.7, sliding_window=w,
             max_window_layers=rng.randint(0, c["num_hidden_layers"]))
    cfg = tf.Qwen2Config(**c)
    return "causal", cfg, w if "sliding_attention" in cfg.layer_types else None


def qwen3(rng):
    c = _llama_like(rng)
    w = rng.choice([3, 4])
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, use_sliding_window=rng.random() < 0.5,
             sliding_window=w, max_window_layers=rng.randint(0, c["num_hidden_layers"]))
    cfg = tf.Qwen3Config(**c)
    return "causal", cfg, w if "sliding_attention" in cfg.layer_types else None


def phi3(rng):
    heads, kv, dh = _shape(rng)
    dh = rng.choice([4, 8, 12])  # int(head_dim * factor) even: attn-viz refuses an odd rotary width
    v = rng.randint(20, 60)
    w = rng.choice([None, 4])
    # Phi-3 has no head_dim key: hidden_size / heads.
    cfg = tf.Phi3Config(hidden_size=heads * dh, num_attention_heads=heads, num_key_value_heads=kv,
                        num_hidden_layers=rng.randint(1, 3), intermediate_size=rng.randint(8, 40), vocab_size=v,
                        rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                         "partial_rotary_factor": rng.choice([1.0, 0.5])},
                        sliding_window=w, tie_word_embeddings=rng.random() < 0.5, **_ids(v))
    return "causal", cfg, w


def _gemma(rng):
    heads, kv, dh = _shape(rng)
    v = rng.randint(20, 60)
    w = rng.choice([3, 5])
    return dict(hidden_size=heads * rng.choice([dh, 3, 5]), num_attention_heads=heads, num_key_value_heads=kv,
                head_dim=dh, num_hidden_layers=rng.randint(1, 4), intermediate_size=rng.randint(8, 40), vocab_size=v,
                sliding_window=w, query_pre_attn_scalar=rng.choice([dh, 16, 7]),
                final_logit_softcapping=rng.choice([None, 30.0, 3.0]), attention_bias=rng.random() < 0.3, **_ids(v)), w


def gemma(rng):
    """Gemma 1: Gemma 2 without soft-caps, post-norms, query_pre_attn_scalar and windows; its MLP reads
    hidden_act (GemmaConfig turns "gelu" into gelu_pytorch_tanh; transformers_oracle.py writes "gelu" back
    into some config.json files, as Gemma's releases have it)."""
    heads, kv, dh = _shape(rng)
    v = rng.randint(20, 60)
    cfg = tf.GemmaConfig(hidden_size=heads * rng.choice([dh, 3, 5]), num_attention_heads=heads, num_key_value_heads=kv,
                         head_dim=dh, num_hidden_layers=rng.randint(1, 4), intermediate_size=rng.randint(8, 40),
                         vocab_size=v, attention_bias=rng.random() < 0.3, rope_parameters=_rope(rng),
                         hidden_act="gelu_pytorch_tanh",
                         tie_word_embeddings=rng.random() < 0.8, **_ids(v))
    return "causal", cfg, None


def cohere(rng):
    """Parallel blocks from the one input_layernorm, LayerNorms without biases, RoPE on interleaved
    pairs, logits times logit_scale (drawn, or its default 0.0625), q/k/v/o biases as attention_bias says."""
    c = _llama_like(rng)
    del c["rms_norm_eps"]
    c.update(rope_parameters=_rope(rng), attention_bias=rng.random() < 0.5, layer_norm_eps=rng.choice([1e-5, 1e-6]),
             hidden_act=rng.choice(["silu", "silu", "gelu"]), tie_word_embeddings=rng.random() < 0.7)
    if rng.random() < 0.7:
        c["logit_scale"] = rng.choice([0.5, 2.0, 0.125])
    return "causal", tf.CohereConfig(**c), None


def gemma2(rng):
    c, w = _gemma(rng)
    c.update(attn_logit_softcapping=rng.choice([None, 50.0, 2.0]), rope_parameters=_rope(rng, ("default",)))
    return "causal", tf.Gemma2Config(**c), w


def gemma3_text(rng):
    c, w = _gemma(rng)
    c.update(attn_logit_softcapping=rng.choice([None, 2.0]), sliding_window_pattern=rng.choice([2, 3, 6]),
             rope_parameters={"full_attention": _rope(rng, ("default", "linear")),
                              "sliding_attention": {"rope_type": "default", "rope_theta": rng.choice([10000.0, 500.0])}})
    if rng.random() < 0.3:
        c["layer_types"] = [rng.choice(["full_attention", "sliding_attention"]) for _ in range(c["num_hidden_layers"])]
    cfg = tf.Gemma3TextConfig(**c)
    return "causal", cfg, w if "sliding_attention" in cfg.layer_types else None


def gpt2(rng):
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    cfg = tf.GPT2Config(n_embd=heads * rng.choice([3, 4, 8]), n_head=heads, n_layer=rng.randint(1, 3),
                        n_inner=rng.choice([None, 13]), n_positions=64, vocab_size=v,
                        activation_function=rng.choice(["gelu_new", "gelu", "gelu_pytorch_tanh"]),
                        layer_norm_epsilon=rng.choice([1e-5, 1e-6]), tie_word_embeddings=rng.random() < 0.7,
                        bos_token_id=1, eos_token_id=2)
    return "causal", cfg, None


def gpt_neo(rng):
    """GPT-2's block with separate q/k/v projections (no biases), unscaled scores, learned positions and
    a window of window_size keys on the layers attention_types calls local (or attention_layers, which
    GPTNeoConfig keeps over attention_types); intermediate_size 4 D when None."""
    heads = rng.choice([1, 2, 4])
    layers = rng.randint(1, 4)
    v = rng.randint(20, 60)
    if layers % 2 == 0 and rng.random() < 0.5:  # as the published models: global and local alternating
        types = [[["global", "local"], layers // 2]]
    else:
        types = [[[rng.choice(["global", "local"])], 1] for _ in range(layers)]
    w = rng.choice([2, 3, 5, 256])
    cfg = tf.GPTNeoConfig(hidden_size=heads * rng.choice([3, 4, 8]), num_heads=heads, num_layers=layers,
                          attention_types=types, window_size=w, intermediate_size=rng.choice([None, 13]),
                          max_position_embeddings=64, vocab_size=v,
                          activation_function=rng.choice(["gelu_new", "gelu", "relu"]),
                          layer_norm_epsilon=rng.choice([1e-5, 1e-6]), tie_word_embeddings=rng.random() < 0.7,
                          bos_token_id=1, eos_token_id=2)
    return "causal", cfg, w if "local" in cfg.attention_layers and w < 64 else None


def opt(rng):
    """q/k/v/out_proj and fc1/fc2 biased as enable_bias says, learned positions offset by 2, norms before
    the sublayers (with or without the final one) or after each residual add (OPT-350m), ReLU or GELU."""
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    before = rng.random() < 0.6
    cfg = tf.OPTConfig(hidden_size=heads * rng.choice([3, 4, 8]), num_attention_heads=heads,
                       num_hidden_layers=rng.randint(1, 3), ffn_dim=rng.randint(8, 40), vocab_size=v,
                       max_position_embeddings=64, do_layer_norm_before=before,
                       _remove_final_layer_norm=before and rng.random() < 0.3, enable_bias=rng.random() < 0.7,
                       activation_function=rng.choice(["relu", "relu", "gelu"]), tie_word_embeddings=rng.random() < 0.7,
                       pad_token_id=1, bos_token_id=2, eos_token_id=2)
    return "causal", cfg, None


def gpt_bigcode(rng):
    """GPT-2's block with nn.Linear layers and one key/value head ([q; k; v] in c_attn), every projection
    biased, learned positions, scale_attn_weights either way, n_inner 4 D when None."""
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    cfg = tf.GPTBigCodeConfig(n_embd=heads * rng.choice([3, 4, 8]), n_head=heads, n_layer=rng.randint(1, 3),
                              n_inner=rng.choice([None, 13]), n_positions=64, vocab_size=v, multi_query=True,
                              activation_function=rng.choice(["gelu_pytorch_tanh", "gelu"]),
                              layer_norm_epsilon=rng.choice([1e-5, 1e-6]), scale_attn_weights=rng.random() < 0.7,
                              tie_word_embeddings=rng.random() < 0.7, bos_token_id=1, eos_token_id=2)
    return "causal", cfg, None


def gpt_neox(rng):
    heads = rng.choice([1, 2, 4])
    dh = rng.choice([8, 16])  # an even rotary width at every factor: attn-viz refuses an odd one
    v = rng.randint(20, 60)
    cfg = tf.GPTNeoXConfig(hidden_size=heads * dh, num_attention_heads=heads, num_hidden_layers=rng.randint(1, 3),
                           intermediate_size=rng.randint(8, 40), vocab_size=v, max_position_embeddings=64,
                           rope_parameters={"rope_type": "default", "rope_theta": rng.choice([10000.0, 100.0]),
                                            "partial_rotary_factor": rng.choice([0.25, 0.5, 1.0])},
                           use_parallel_residual=rng.random() < 0.6, hidden_act=rng.choice(["gelu", "gelu_new"]),
                           tie_word_embeddings=rng.random() < 0.3, **_ids(v))
    return "causal", cfg, None


def bert(rng):
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    cfg = tf.BertConfig(hidden_size=heads * rng.choice([3, 4, 8]), num_attention_heads=heads,
                        num_hidden_layers=rng.randint(1, 3), intermediate_size=rng.randint(8, 40), vocab_size=v,
                        max_position_embeddings=64, type_vocab_size=rng.choice([1, 2]),
                        layer_norm_eps=rng.choice([1e-12, 1e-5]), hidden_act=rng.choice(["gelu", "gelu_new"]), pad_token_id=0)
    return "encoder", cfg, None


def bart(rng):
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    cfg = tf.BartConfig(d_model=heads * rng.choice([3, 4, 8]), encoder_layers=rng.randint(1, 3), decoder_layers=rng.randint(1, 3),
                        encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=rng.randint(8, 30),
                        decoder_ffn_dim=rng.randint(8, 30), vocab_size=v, max_position_embeddings=64,
                        scale_embedding=rng.random() < 0.5, activation_function=rng.choice(["gelu", "relu"]),
                        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=None)
    return "seq2seq", cfg, None


def t5(rng):
    heads = rng.choice([1, 2, 4])
    v = rng.randint(20, 60)
    gated = rng.random() < 0.5
    cfg = tf.T5Config(d_model=rng.choice([8, 12, 16]), d_kv=rng.choice([3, 4, 8]), d_ff=rng.randint(8, 30), num_layers=rng.randint(1, 3),
                      num_decoder_layers=rng.randint(1, 3), num_heads=heads, vocab_size=v,
                      relative_attention_num_buckets=rng.choice([8, 32]), relative_attention_max_distance=rng.choice([20, 128]),
                      feed_forward_proj="gated-gelu" if gated else "relu", tie_word_embeddings=not gated,
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return "seq2seq", cfg, None


FAMILIES = {f.__name__: f for f in (llama, mistral, ministral, starcoder2, smollm3, stablelm, olmo, olmo2, granite, cohere, qwen2, qwen3, phi3, gemma, gemma2, gemma3_text, gpt2, gpt_neo, opt, gpt_bigcode, gpt_neox, bert, bart, t5)}
