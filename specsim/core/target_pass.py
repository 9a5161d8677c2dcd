"""The target's decode passes in one C++ call: the same operators, without the Python between them.

A one-token pass of the bundled target on the position-invariant path is about 3,000 operator calls: per
layer two RMSNorms, seven linears through the fused kernel, the rotary embedding, the cache's two appends,
the attention kernel, the SiLU and two residual adds, each a few small tensor operations. Through
``LlamaForCausalLM`` every one of them is called from Python, inside module calls, keyword plumbing, a mask
builder and output records; on a 2-core CPU that costs about as much as the arithmetic
(docs/measurements/pass-profile-2026-12-05.md: 9 of 23 ms a pass outside the linears and the attention).

``target_pass`` in ``kernels/fused.cpp`` runs the same operators, in the same order, on tensors of the same
shapes and dtypes, from C++: each is the same ATen kernel the Python path calls, so a pass's logits and
cache entries are bitwise the forward's (``tests/test_target_pass.py`` compares them for every pass size
and along whole decodings). Position invariance carries over unchanged: the linears and the attention are
the invariant kernels themselves. Per layer, the pass is::

    h = rms_norm(x) * w_in                      (in float32, rounded to bfloat16, as LlamaRMSNorm)
    q, k, v = h W_qᵀ, h W_kᵀ, h W_vᵀ            (the fused row-invariant linear, rounded to bfloat16)
    q, k = rotary(q), rotary(k)                   (x cos + rotate_half(x) sin, in bfloat16)
    keys, values = cat(keys, k), cat(values, v)   (the transformers cache's own append)
    x = x + attend(q, keys, values) W_oᵀ          (the invariant attention kernel, float32)
    h = rms_norm(x) * w_post
    x = x + (silu(h W_gateᵀ) * (h W_upᵀ)) W_downᵀ
    logits = (rms_norm(x) * w_final) Eᵀ           (the last ``logits_to_keep`` positions)

:func:`install` switches a loaded model to it where it applies (a Llama-shaped bfloat16 model on the invariant
path with the fused linear kernel, on a CPU). A token tree's pass takes it too: each node's rotary rows are its
own position's (the root's position plus its depth) and the attention sees only the keys the tree's mask allows
(the context and the node's ancestors), the same kernel skipping the others. Every other call (a prefill, a pass
that asks for hidden states or carries a padding mask, a model it does not fit) takes transformers' forward as
before. ``SPECSIM_NO_TARGET_PASS=1`` switches it off, so the benchmark can time the two paths against each other
(``python -m specsim.bench --passes``).
"""

from __future__ import annotations

import torch

from specsim.core import environment, fused
from specsim.core.defaults import MAX_INVARIANT_QUERIES

ENABLED = not environment.current().no_target_pass
"""False where ``SPECSIM_NO_TARGET_PASS=1``: every pass takes transformers' forward (the previous path)."""

PER_LAYER = ("input_layernorm", "self_attn.q_proj + k_proj + v_proj", "self_attn.o_proj", "post_attention_layernorm",
             "mlp.gate_proj + up_proj", "mlp.down_proj")
"""The weights ``target_pass`` reads per layer, in its order (a "+" stacks the products' weights, :func:`pack`)."""
LINEARS = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
           "mlp.up_proj", "mlp.down_proj")

_FAST_CLASSES: dict[type, type] = {}


def why_not(model: torch.nn.Module) -> str | None:
    """Why the one-call pass does not fit this model, or None when it does."""
    from specsim.core.invariant import ATTENTION_NAME, KernelLinear

    config = getattr(model, "config", None)
    if fused.linear_kernel() is None:
        return "the fused linear kernel does not run here"
    if config is None or config.model_type != "llama" or getattr(config, "hidden_act", None) != "silu":
        return "not a Llama-shaped model"
    if getattr(config, "_attn_implementation", None) != ATTENTION_NAME:
        return "not on the position-invariant path"
    inner = getattr(model, "model", None)
    layers = list(getattr(inner, "layers", []))
    if not layers or not isinstance(getattr(model, "lm_head", None), KernelLinear):
        return "its head does not run through the fused kernel"
    for layer in layers:
        if type(layer).__name__ != "LlamaDecoderLayer":
            return f"an unexpected layer ({type(layer).__name__})"
        for name in LINEARS:
            linear = layer.get_submodule(name)
            if not isinstance(linear, KernelLinear) or linear.bias is not None:
                return f"{name} does not run through the fused kernel without a bias"
            if linear.weight.dtype != torch.bfloat16 or linear.weight.device.type != "cpu":
                return "its weights are not bfloat16 on the CPU"
        for norm in (layer.input_layernorm, layer.post_attention_layernorm):
            if norm.variance_epsilon != inner.norm.variance_epsilon:
                return "its norms do not share one epsilon"
    return None


def install(model: torch.nn.Module) -> str | None:
    """Give ``model`` the one-call decode pass where it fits; return why not, or None when installed.

    The model's class becomes a subclass whose ``forward`` takes the one call for the passes it covers and
    hands every other call to the class's own forward. A model built from it (the early-exit draft, which is
    the target's first layers) gets the same forward and reads its own layers.
    """
    reason = why_not(model)
    if reason is None:
        base = type(model)
        if base not in _FAST_CLASSES.values():
            if base not in _FAST_CLASSES:
                _FAST_CLASSES[base] = type(base.__name__, (base,), {"forward": _forward, "__module__": base.__module__,
                                                                    "__doc__": base.__doc__})
            model.__class__ = _FAST_CLASSES[base]
    return reason


def covers(model: torch.nn.Module, input_ids, past_key_values, extra: dict) -> bool:
    """Whether this call is a decode pass the one call computes exactly as the forward would."""
    return _covered(model, input_ids, past_key_values, extra) is not None


def _covered(model: torch.nn.Module, input_ids, past_key_values, extra: dict) -> tuple[torch.Tensor, ...] | None:
    """:func:`covers`, giving the pass's placement (:func:`_placed`) where it covers the call, else None."""
    from transformers.cache_utils import DynamicCache, DynamicLayer

    if not ENABLED or fused.linear_kernel() is None or model.training or any(extra.get(name) is not None for name in (
            "inputs_embeds", "labels")):
        return None
    if any(value not in (None, False) for name, value in extra.items() if name.startswith("output_")):
        return None
    if set(extra) - {"attention_mask", "position_ids", "inputs_embeds", "labels", "output_hidden_states",
                     "output_attentions", "use_cache", "return_dict"} or extra.get("return_dict") is False:
        return None
    if not (isinstance(input_ids, torch.Tensor) and input_ids.dim() == 2 and input_ids.shape[0] == 1
            and 1 <= input_ids.shape[1] <= MAX_INVARIANT_QUERIES and input_ids.device.type == "cpu"):
        return None
    if not isinstance(past_key_values, DynamicCache) or not past_key_values.layers:
        return None
    length = None
    for layer in past_key_values.layers:
        if type(layer) is not DynamicLayer or not layer.is_initialized or layer.keys.numel() == 0:
            return None
        if length not in (None, layer.keys.shape[-2]):
            return None
        length = layer.keys.shape[-2]
    if len(past_key_values.layers) != len(model.model.layers):
        return None
    return _placed(extra, input_ids.shape[1], length)


def _placed(extra: dict, n: int, past: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """A token tree's pass (:func:`specsim.core.token_tree.tree_forward`) as the one call takes it: the new tokens'
    positions, (n,) int64, and the keys each may see, (1, n, past + n) booleans; both empty for a plain decode pass
    (no mask, no positions). None for a mask or positions it does not take (padding of a batch, a float mask, a
    mask without positions): those calls keep transformers' forward."""
    mask, positions = extra.get("attention_mask"), extra.get("position_ids")
    if mask is None and positions is None:
        return _NONE, _NONE
    if not (isinstance(mask, torch.Tensor) and isinstance(positions, torch.Tensor)):
        return None
    if mask.dtype != torch.bool or mask.shape != (1, 1, n, past + n) or mask.device.type != "cpu":
        return None
    if positions.dtype != torch.long or positions.shape != (1, n) or positions.device.type != "cpu":
        return None
    return positions[0], mask[:, 0]


_NONE = torch.empty(0)


def pack(model: torch.nn.Module) -> bool:
    """Lay each decoder layer's q, k and v weights side by side in one tensor, and its gate and up weights in
    another, the linears keeping views of them: the one-call pass reads each as one product (fewer, longer weight
    streams; each output is computed alone, so its value does not change), with no second copy in memory.
    Returns whether the model had the layers to pack. Call before the linears are wrapped."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None or not all(type(layer).__name__ == "LlamaDecoderLayer" for layer in layers):
        return False
    for layer in layers:
        attention, mlp = layer.self_attn, layer.mlp
        fused_weights = []
        for linears in ((attention.q_proj, attention.k_proj, attention.v_proj), (mlp.gate_proj, mlp.up_proj)):
            if any(type(linear) is not torch.nn.Linear or linear.bias is not None for linear in linears):
                return False
            stacked = torch.cat([linear.weight.detach() for linear in linears])
            start = 0
            for linear in linears:
                rows = linear.out_features
                linear.weight = torch.nn.Parameter(stacked[start:start + rows], requires_grad=False)
                start += rows
            fused_weights.append(stacked)
        layer.__dict__["_specsim_stacked"] = tuple(fused_weights)
    return True


def _stacked(layer: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """The layer's q/k/v and gate/up weights as two stacked tensors: the packed ones (:func:`pack`) while the
    linears still view them, else a stacked copy."""
    attention, mlp = layer.self_attn, layer.mlp
    packed = layer.__dict__.get("_specsim_stacked")
    if packed is not None and attention.q_proj.weight.data_ptr() == packed[0].data_ptr() \
            and mlp.gate_proj.weight.data_ptr() == packed[1].data_ptr():
        return packed
    return (torch.cat([attention.q_proj.weight, attention.k_proj.weight, attention.v_proj.weight]),
            torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]))


def _as_read(module: torch.nn.Module, parts: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The weights ``target_pass`` reads for ``module``'s product(s): on the AMX route a copy in the kernel's tile
    order (:func:`specsim.core.fused.pack_tiles`), kept on the module, so a model sharing the module (the early-exit
    draft shares the target's first layers and its head) shares the copy; elsewhere the tensor itself."""
    if fused.kernel().linear_path() != "amx":
        return parts[0] if len(parts) == 1 else torch.cat(parts)
    held = module.__dict__.get("_specsim_tiles")
    if held is None or held[0] != tuple(part.data_ptr() for part in parts):
        stacked = parts[0] if len(parts) == 1 else torch.cat(parts)
        held = (tuple(part.data_ptr() for part in parts), fused.pack_tiles(stacked))
        module.__dict__["_specsim_tiles"] = held
    return held[1]


def weights(model: torch.nn.Module) -> list[torch.Tensor]:
    """The per-layer weights in ``target_pass``'s order (:data:`PER_LAYER`), then the head's, gathered once per set
    of layers. On the AMX route each product's weights are read from a copy in the kernel's tile order: as a few
    sequential streams, the linears of a pass took 9.9 instead of 11.0 ms here, for a second copy of the linears'
    weights (270 MB for the bundled target; the modules keep theirs for the prefill and every other call)."""
    key = tuple(id(layer) for layer in model.model.layers)
    held = model.__dict__.get("_specsim_pass_weights")
    if held is None or held[0] != key:
        found = []
        for layer in model.model.layers:
            attention, mlp = layer.self_attn, layer.mlp
            qkv, gate_up = _stacked(layer)
            found += [layer.input_layernorm.weight, _as_read(attention, (qkv,)),
                      _as_read(attention.o_proj, (attention.o_proj.weight,)), layer.post_attention_layernorm.weight,
                      _as_read(mlp, (gate_up,)), _as_read(mlp.down_proj, (mlp.down_proj.weight,))]
        held = (key, found, _as_read(model.lm_head, (model.lm_head.weight,)))
        model.__dict__["_specsim_pass_weights"] = held
    return held[1]


def head(model: torch.nn.Module) -> torch.Tensor:
    """The head's weight as ``target_pass`` reads it (:func:`weights`)."""
    weights(model)
    return model.__dict__["_specsim_pass_weights"][2]


def rotary_tables(model: torch.nn.Module, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin for positions 0 .. at least ``length`` - 1, (positions, head dim), computed by the model's own
    rotary module (elementwise, so a position's row is what that module gives it in any pass), kept and doubled as
    the context grows."""
    held = model.__dict__.get("_specsim_rotary")
    if held is None or held[0].shape[0] < length:
        inner = model.model
        size = max(256, 1 << (length - 1).bit_length())
        probe = inner.embed_tokens.weight[:1].unsqueeze(0)  # only its dtype and device are read
        cos, sin = inner.rotary_emb(probe, position_ids=torch.arange(size, device=probe.device).unsqueeze(0))
        held = (cos[0].contiguous(), sin[0].contiguous())
        model.__dict__["_specsim_rotary"] = held
    return held


def one_call(model: torch.nn.Module, input_ids: torch.Tensor, cache, logits_to_keep: int,
             positions: torch.Tensor = _NONE, allowed: torch.Tensor = _NONE) -> torch.Tensor:
    """One decode pass through ``target_pass``: the logits, and the cache grown by the new positions. A token tree's
    pass gives each node's position and the keys it may see (:func:`_placed`); a plain pass gives neither."""
    inner, config, layers = model.model, model.config, cache.layers
    last = int(positions.max()) + 1 if positions.numel() else cache.get_seq_length() + input_ids.shape[1]
    cos, sin = rotary_tables(model, last)
    out = fused.kernel().target_pass(
        input_ids, inner.embed_tokens.weight, weights(model), [layer.keys for layer in layers],
        [layer.values for layer in layers], cos, sin, config.num_attention_heads, config.num_key_value_heads,
        inner.norm.variance_epsilon, inner.layers[0].self_attn.scaling, inner.norm.weight, head(model),
        int(logits_to_keep), positions, allowed)
    count = len(layers)
    for layer, keys, values in zip(layers, out[1:1 + count], out[1 + count:], strict=True):
        layer.keys, layer.values = keys, values
    return out[0]


def _forward(self, *args, **kwargs):
    """The one call for a decode pass it covers (:func:`covers`); the class's own forward for anything else."""
    extra = dict(kwargs)
    input_ids = extra.pop("input_ids", args[0] if args else None)
    cache, keep = extra.pop("past_key_values", None), extra.pop("logits_to_keep", 0)
    placed = None
    if len(args) <= 1 and isinstance(keep, int) and extra.get("use_cache") in (None, True):
        placed = _covered(self, input_ids, cache, extra)
    if placed is not None:
        from transformers.modeling_outputs import CausalLMOutputWithPast

        positions, allowed = placed
        return CausalLMOutputWithPast(logits=one_call(self, input_ids, cache, keep, positions, allowed),
                                      past_key_values=cache)
    return super(type(self), self).forward(*args, **kwargs)
