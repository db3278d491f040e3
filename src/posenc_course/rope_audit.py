"""Check a Hugging Face model's rotary embedding against ``posenc``, and convert q/k weights between RoPE layouts.

For practitioners who run a checkpoint of their own: the two places where a model's positions go wrong without
an error are its rope settings (a dropped ``rope_theta``, a deleted ``rope_scaling`` block, the wrong
``rope_type``, partial rotation over the wrong width) and the layout of its query and key weights (Meta's
interleaved checkpoints against the library's half-split ``rotate_half``). Both fail quietly: the model runs,
and short prompts may look fine.

* :func:`check_rotary` reads a ``transformers`` model's rotary embedding (or builds the library's one for a
  config): its ``inv_freq``, its ``attention_scaling`` and the cos/sin it returns at the positions and dtypes
  chosen, and compares them with ``posenc.rope_parameters`` for the model's config, or for ``reference_config``,
  the config the checkpoint was trained with. The :class:`RotaryReport` it returns states the layout of the cos
  and sin, names each difference (base, rope_type, rotary width, head size, attention factor, scaling
  parameters, frequencies, cos/sin) and the first position where the angles diverge beyond the tolerance;
  ``report.ok`` when nothing does.
* :func:`interleaved_to_half_split` and :func:`half_split_to_interleaved` permute the rows of a q or k
  projection (weight or bias) head by head; :func:`convert_qk` does both projections of one attention layer
  from its config, the keys with ``num_key_value_heads`` heads (grouped-query attention).

``transformers`` is the course library's optional extra ``models``: it is imported only when a config has to be
turned into a rotary embedding, never when this module is imported.

The layout permutation is ``posenc.layout_permutation`` applied within each head: the half-split rows of a head
are its interleaved rows ``0, 2, 4, ..., 1, 3, 5, ...``. It is the permutation the library applies when it loads
a GGUF checkpoint (``modeling_gguf_pytorch_utils.LlamaTensorProcessor._reverse_permute_weights``, with the
keys' head count set to ``num_key_value_heads``), and, for projections with as many heads as the config's
``num_attention_heads``, the one of ``core_model_loading.PermuteForRope`` (which counts every tensor's heads
with ``num_attention_heads``; the library's conversion mapping applies it to vision towers and one
text-to-speech model, whose keys have as many heads as their queries; chapter 12 checks where).
``tests/test_rope_audit.py`` checks both equalities, and that a Meta-style interleaved forward on the original
weights equals the library's forward on the converted ones.
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import torch

import posenc
from posenc_course.arguments import Int, Items, Maybe, OneOf, Positions, Real, Spec, Tensor, accepts, refuse

# the report classes are what check_rotary returns (importable by name, never built by a caller)
__all__ = [
    "check_rotary",
    "interleaved_to_half_split",
    "half_split_to_interleaved",
    "convert_qk",
]

# --------------------------------------------------------------------------
# What the functions accept
# --------------------------------------------------------------------------


def _is_config(value) -> bool:
    """A transformers config (duck-typed: the library need not be imported to recognise one)."""
    return any(cls.__name__ in ("PreTrainedConfig", "PretrainedConfig") for cls in type(value).__mro__)


def _is_model(value) -> bool:
    return isinstance(value, torch.nn.Module) and _is_config(getattr(value, "config", None))


class _ModelOrConfig(Spec):
    text = "a transformers model (a torch module with a .config) or a transformers config"

    def ok(self, value) -> bool:
        return _is_model(value) or _is_config(value)


class _Config(Spec):
    text = "a transformers config (e.g. LlamaConfig(...))"

    def ok(self, value) -> bool:
        return _is_config(value)


MODEL_OR_CONFIG = _ModelOrConfig()
CONFIG = _Config()
DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)
PROJECTION = Tensor(
    (1, 2), floating=True, what="a q or k projection: a 2-D weight (rows = heads x head size) or 1-D bias"
)

# the names a RotaryReport gives its differences, in the order it reports them
DIFFERENCES = (
    "rope_type",
    "base",
    "head_dim",
    "partial_rotary_factor",
    "rotary_width",
    "scaling",
    "attention_factor",
    "frequencies",
    "cos_sin",
)
# the keys of a rope block that are not a rule's parameters: the rule, its base (posenc takes both as arguments)
# and transformers 4.x's name for the rule
_NOT_PARAMETERS = {"rope_type", "type", "rope_theta"}
_TRAINED_LENGTH = ("dynamic", "yarn", "longrope")  # the rules that may read max_position_embeddings
_BY_LENGTH = ("dynamic", "longrope")  # the rules whose frequencies depend on the sequence's length


# --------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Difference:
    """One way the model differs from the reference: ``what`` (one of ``DIFFERENCES``), both sides, a note."""

    what: str
    model: object
    reference: object
    note: str = ""

    def __str__(self) -> str:
        if self.model is None and self.reference is None:
            return f"{self.what}: {self.note}"
        note = f" ({self.note})" if self.note else ""
        return f"{self.what}: model {_fmt(self.model)}, reference {_fmt(self.reference)}{note}"


@dataclasses.dataclass(frozen=True)
class RotaryReport:
    """What :func:`check_rotary` found. ``ok`` is True when nothing differs beyond the tolerance.

    ``differences`` lists each :class:`Difference`; ``differs`` is the set of their names. ``angles_diverge_at``
    is the first position (an integer >= 0, over all positions, not only the ones checked) where a channel's
    angle differs from the reference by more than ``atol`` radians beyond float32's rounding, or None when none
    does. ``cos_sin`` maps each dtype's name to ``(largest |difference|, first checked position beyond the
    tolerance or None)``. ``layer_type`` names the layer type for models with one rope block per layer type.
    """

    ok: bool
    rotary: str
    reference: str
    layer_type: str | None
    settings: dict
    differences: tuple
    angles_diverge_at: int | None
    cos_sin: dict
    positions: tuple
    atol: float

    @property
    def differs(self) -> set:
        return {d.what for d in self.differences}

    def difference(self, what: str) -> Difference | None:
        """The difference named ``what``, or None."""
        return next((d for d in self.differences if d.what == what), None)

    def __str__(self) -> str:
        s = self.settings
        where = f" [{self.layer_type}]" if self.layer_type else ""
        span = (
            f"{self.positions[0]:,} ... {self.positions[-1]:,}" if len(self.positions) > 1 else f"{self.positions[0]:,}"
        )
        head = f"RoPE check of {self.rotary}{where} against posenc.rope_parameters for {self.reference}"
        lines = [head + (": ok" if self.ok else f": {len(self.differences)} differences")]
        lines.append(
            f"  rope_type {s['rope_type']!r}, base {s['base']:g}, rotates {s['rotary_width']} of "
            f"{s['head_dim']} channels ({s['layout']}), attention factor {s['attention_factor']:.6g}"
        )
        lines += [f"  {d}" for d in self.differences]
        if self.angles_diverge_at is None:
            lines.append(f"  angles: within {self.atol:g} rad of the reference at every position")
        else:
            lines.append(
                f"  angles first diverge (by more than {self.atol:g} rad) at position {self.angles_diverge_at:,}"
            )
        for name, (largest, first) in self.cos_sin.items():
            at = "all within tolerance" if first is None else f"first beyond tolerance at position {first:,}"
            lines.append(
                f"  cos/sin in {name} at {len(self.positions)} positions ({span}): {at}, max |diff| {largest:.3g}"
            )
        return "\n".join(lines)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}" if value else "(none)"
    if isinstance(value, (list, tuple)) and len(value) > 4:
        return f"[{_fmt(value[0])}, {_fmt(value[1])}, ..., {_fmt(value[-1])}] ({len(value)} values)"
    if value is None:
        return "(absent)"
    return repr(value) if isinstance(value, str) else str(value)


# --------------------------------------------------------------------------
# Reading a model or config
# --------------------------------------------------------------------------


def _head_dim(config, argument: str) -> int:
    head_dim = getattr(config, "head_dim", None)
    if head_dim is None:
        hidden, heads = getattr(config, "hidden_size", None), getattr(config, "num_attention_heads", None)
        if not hidden or not heads:
            refuse(
                argument,
                message=f"{argument} is a {type(config).__name__} without head_dim, hidden_size or "
                "num_attention_heads.",
            )
        head_dim = hidden // heads
    return int(head_dim)


def _rope_blocks(config, argument: str) -> dict:
    """``{layer_type or None: rope block}`` as the config states it: 5.x ``rope_parameters`` or 4.x ``rope_scaling``."""
    rope = getattr(config, "rope_parameters", None)
    if rope is None:  # transformers 4.x: rope_theta and rope_scaling attributes
        theta = getattr(config, "rope_theta", None)
        scaling = getattr(config, "rope_scaling", None)
        if theta is None and scaling is None:
            refuse(
                argument,
                message=f"{argument} is a {type(config).__name__}, which states no RoPE settings (no rope_parameters).",
            )
        rope = dict(scaling or {})
        rope.setdefault("rope_type", rope.get("type", "default"))
        rope.setdefault("rope_theta", 10000.0 if theta is None else theta)
    if not isinstance(rope, dict) or not rope:
        refuse(
            argument,
            message=f"{argument} is a {type(config).__name__} without a rope block (rope_parameters={rope!r}).",
        )
    labels = set(getattr(config, "layer_types", None) or ())
    nested = {k: v for k, v in rope.items() if k in labels}
    return {k: v for k, v in nested.items() if v is not None} if nested else {None: rope}


def _settings(config, block: dict, argument: str) -> dict:
    """What a rope block and its config say: rope_type, base, head_dim, partial_rotary_factor, scaling parameters."""
    rope_type = block.get("rope_type", block.get("type", "default"))
    if rope_type not in posenc.ROPE_TYPES:
        refuse(
            argument,
            message=f"{argument} has rope_type {rope_type!r}, which posenc does not know; "
            f"allowed: {', '.join(posenc.ROPE_TYPES)}.",
        )
    base = block.get("rope_theta", getattr(config, "rope_theta", None))
    if base is None:
        base = getattr(config, "default_theta", 10000.0)
    params = {k: v for k, v in block.items() if k not in _NOT_PARAMETERS}
    return {
        "rope_type": rope_type,
        "base": float(base),
        "head_dim": _head_dim(config, argument),
        "partial_rotary_factor": float(params.get("partial_rotary_factor", 1.0)),
        "scaling": {k: v for k, v in params.items() if k != "partial_rotary_factor"},
        "params": params,
        "max_position_embeddings": getattr(config, "max_position_embeddings", None),
    }


def _expected(settings: dict, seq_len: int, argument: str) -> tuple:
    """posenc's ``(inv_freq, attention_factor)`` for ``settings`` at a sequence of ``seq_len`` tokens."""
    params = dict(settings["params"])
    rope_type = settings["rope_type"]
    if rope_type in _TRAINED_LENGTH and settings["max_position_embeddings"] is not None:
        params.setdefault("max_position_embeddings", settings["max_position_embeddings"])
    if rope_type in _BY_LENGTH:
        params["seq_len"] = seq_len
    try:
        return posenc.rope_parameters(settings["head_dim"], settings["base"], rope_type, **params)
    except ValueError as error:
        refuse(argument, message=f"{argument} has a rope block posenc cannot read: {error}")


def _rotary_class(config):
    """The library's rotary embedding class for ``config``'s model family (``<Family>RotaryEmbedding``)."""
    import importlib

    module_name = type(config).__module__.replace(".configuration_", ".modeling_")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        module = None
    found = (
        [
            obj
            for name, obj in vars(module).items()
            if isinstance(obj, type) and name.endswith("RotaryEmbedding") and "Vision" not in name
        ]
        if module
        else []
    )
    if not found:
        refuse(
            "model_or_config",
            message=f"model_or_config is a {type(config).__name__}, whose models have no rotary embedding in the "
            "library: this check is for models that use RoPE.",
        )
    family = type(config).__name__.removesuffix("Config")
    return next(
        (
            c
            for c in found
            if c.__name__ in (family + "RotaryEmbedding", family.removesuffix("Text") + "RotaryEmbedding")
        ),
        found[0],
    )


def _rotary_of(model_or_config):
    """``(rotary module, the config it was built from)``."""
    if _is_config(model_or_config):
        config = model_or_config
        _rope_blocks(config, "model_or_config")  # a config without RoPE settings is refused before building
        for blocks in _rope_blocks(config, "model_or_config").values():
            _settings(config, blocks, "model_or_config")  # an unknown rope_type: refused before the library fails
        cls = _rotary_class(config)
        try:
            return cls(config), config
        except Exception as error:  # the library could not build it: say so in one line
            refuse(
                "model_or_config",
                message=f"model_or_config is a config the library cannot build {cls.__name__} for: {error}",
            )
    found = [m for m in model_or_config.modules() if hasattr(m, "inv_freq") or hasattr(m, "rope_type")]
    if not found:
        refuse(
            "model_or_config",
            message=f"model_or_config is a {type(model_or_config).__name__}, which has no rotary embedding (no module "
            "with inv_freq): this check is for models that use RoPE.",
        )
    rotary = found[0]
    return rotary, getattr(rotary, "config", None) or model_or_config.config


# --------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------

_POSITIONS = Positions(what="a count n >= 1 (positions 0 ... n-1) or a 1-D list of integer positions >= 0")


@accepts(
    model_or_config=MODEL_OR_CONFIG,
    positions=Maybe(_POSITIONS),
    dtypes=Items(OneOf(*DTYPES), min_len=1, what="a list of torch dtypes among float32, float64, bfloat16, float16"),
    atol=Real(above=0, below=1),
    rtol=Real(lo=0, below=1e-2),
    reference_config=Maybe(CONFIG),
)
def check_rotary(
    model_or_config, positions=None, dtypes=(torch.float32,), atol=1e-4, rtol=1e-5, reference_config=None
) -> RotaryReport | list:
    """Check a model's rotary embedding against ``posenc.rope_parameters``; a :class:`RotaryReport`.

    ``model_or_config`` is a ``transformers`` model (its module that holds ``inv_freq`` is checked, as the model
    holds it) or a config (the library's rotary embedding for it is built). The reference is
    ``posenc.rope_parameters`` for ``reference_config`` when given (the config the checkpoint was trained
    with), else for the config the rotary embedding was built from.

    ``positions`` (default: ``0 ... min(max_position_embeddings, 8192) - 1``; a count ``n`` means ``0 ... n-1``) are
    evaluated in one call, as one sequence reaching ``max(positions)``: the rules that depend on the length
    (``dynamic``, ``longrope``) choose their frequencies for ``max(positions) + 1`` tokens, in the model and in
    the reference. The model's rotary embedding is copied first: the check never changes it.

    Tolerance: frequencies agree when within ``rtol`` relative (the library computes them in float32); an angle
    ``p w`` agrees when within ``atol + rtol p w`` radians; each cos/sin value in a dtype when within
    ``atol + a (eps + rtol |p w|)``, with ``a`` the attention factor and ``eps`` the dtype's. Channels beyond a
    side's rotary width count as turned by angle 0 (cos 1, sin 0), so a wrong width shows as a divergence. The
    model's cos/sin are read in the layout that fits them, stated in ``settings["layout"]``: ``"half-split"`` (the
    library's ``rotate_half``, pair ``i`` on channels ``i, i + r/2``) or ``"interleaved"`` (Cohere: ``2i, 2i+1``);
    the q/k weights must be in the same one (:func:`interleaved_to_half_split` converts them).

    Models with one rope block per layer type (``config.layer_types``, e.g. Gemma 3) get a list of reports, one
    per layer type.
    """
    rotary, config = _rotary_of(model_or_config)
    reference = reference_config if reference_config is not None else config
    ref_name = type(reference).__name__ + (" (reference_config)" if reference_config is not None else " (its own)")
    if positions is None:
        length = getattr(config, "max_position_embeddings", None) or 8192
        positions = np.arange(min(int(length), 8192))
    elif isinstance(positions, (int, np.integer)):
        positions = np.arange(int(positions))
    pos = np.asarray(positions.detach().cpu() if isinstance(positions, torch.Tensor) else positions, dtype=np.float64)
    if pos.size == 0 or np.any(pos < 0) or np.any(pos != np.round(pos)) or np.any(pos > 2**24):
        refuse("positions", message="positions must be at least one integer position from 0 to 16,777,216.")
    pos = pos.astype(np.int64)
    model_blocks = _rope_blocks(config, "model_or_config")
    ref_arg = "reference_config" if reference_config is not None else "model_or_config"  # what a refusal names
    ref_blocks = _rope_blocks(reference, ref_arg)
    reports = []
    for label, block in model_blocks.items():
        ref_block = ref_blocks.get(label, ref_blocks.get(None, next(iter(ref_blocks.values()))))
        reports.append(
            _check_one(rotary, config, block, reference, ref_block, ref_arg, label, pos, dtypes, atol, rtol, ref_name)
        )
    return reports if len(model_blocks) > 1 or next(iter(model_blocks)) is not None else reports[0]


def _run(rotary, label, pos: np.ndarray, dtype) -> tuple:
    """``(cos, sin, inv_freq, attention_scaling)`` as a copy of the rotary module computes them at ``pos``."""
    module = copy.deepcopy(rotary)
    prefix = f"{label}_" if label else ""
    device = getattr(module, f"{prefix}inv_freq").device  # where the model keeps it (a GPU, say)
    x = torch.zeros(1, dtype=dtype, device=device)
    ids = torch.as_tensor(pos, dtype=torch.long, device=device)[None]
    with torch.no_grad():
        cos, sin = module(x, ids, label) if label else module(x, ids)
    inv = getattr(module, f"{prefix}inv_freq").detach().double().cpu().numpy()
    scaling = float(getattr(module, f"{prefix}attention_scaling"))
    return cos[0].double().cpu().numpy(), sin[0].double().cpu().numpy(), inv, scaling


def _arranged(pairs: np.ndarray, layout: str, width: int, fill: float) -> np.ndarray:
    """Per-pair values ``(n, r/2)`` as per-channel values ``(n, width)`` in ``layout``, ``fill`` beyond ``r``.

    Half-split (the library's ``rotate_half``): pair ``i`` on channels ``i`` and ``i + r/2``; interleaved (Cohere,
    Meta's checkpoints): on channels ``2i`` and ``2i + 1``.
    """
    doubled = np.concatenate([pairs, pairs], axis=1) if layout == "half-split" else np.repeat(pairs, 2, axis=1)
    out = np.full((pairs.shape[0], width), fill)
    out[:, : doubled.shape[1]] = doubled
    return out


def _reference_pairs(pos: np.ndarray, inv: np.ndarray, factor: float) -> tuple:
    """The reference's ``a cos(p w_i)`` and ``a sin(p w_i)`` per pair: posenc's rotation of the unit pairs (1, 0)."""
    half = len(inv)
    unit = np.zeros((len(pos), 2 * half))
    unit[:, :half] = 1.0  # each pair (1, 0): turned, it reads (a cos, a sin)
    turned = posenc.apply_rope(unit, pos, inv_freq=inv, attention_factor=factor, layout="concatenated")
    return turned[:, :half], turned[:, half:]


def _cos_sin(runs: dict, pos, ref_inv, ref_factor, width, atol, rtol) -> tuple:
    """``(layout, {dtype name: (largest |difference|, first position beyond the tolerance or None)})``.

    The model's cos/sin are compared with the reference laid out both ways; its layout is the one that fits
    (half-split unless interleaved fits better).
    """
    ref_cos, ref_sin = _reference_pairs(pos, ref_inv, ref_factor)
    found = {}
    for layout in ("half-split", "interleaved"):
        cos_ref = _arranged(ref_cos, layout, width, 1.0)
        sin_ref = _arranged(ref_sin, layout, width, 0.0)
        angle = np.abs(pos[:, None] * _arranged(ref_inv[None, :], layout, width, 0.0))
        result = {}
        for dtype, (cos, sin, _, _) in runs.items():
            cos = np.concatenate([cos, np.ones((len(pos), width - cos.shape[1]))], axis=1)
            sin = np.concatenate([sin, np.zeros((len(pos), width - sin.shape[1]))], axis=1)
            gap = np.maximum(np.abs(cos - cos_ref), np.abs(sin - sin_ref))
            allowed = atol + ref_factor * (torch.finfo(dtype).eps + rtol * angle)
            beyond = np.flatnonzero(np.any(gap > allowed, axis=1))
            result[str(dtype).removeprefix("torch.")] = (float(gap.max()), int(pos[beyond[0]]) if beyond.size else None)
        found[layout] = result
    misses = {layout: sum(first is not None for _, first in r.values()) for layout, r in found.items()}
    layout = "interleaved" if misses["interleaved"] < misses["half-split"] else "half-split"
    return layout, found[layout]


def _per_channel(inv: np.ndarray, width: int) -> np.ndarray:
    """Each half-split channel's frequency, 0 for the channels that do not turn."""
    return _arranged(inv[None, :], "half-split", width, 0.0)[0]


def _check_one(rotary, config, block, reference, ref_block, ref_arg, label, pos, dtypes, atol, rtol, ref_name):
    model = _settings(config, block, "model_or_config")
    ref = _settings(reference, ref_block, ref_arg)
    seq_len = int(pos.max()) + 1
    ref_inv, ref_factor = _expected(ref, seq_len, ref_arg)
    runs = {dtype: _run(rotary, label, pos, dtype) for dtype in dtypes}
    _, _, inv, factor = runs[dtypes[0]]
    rope_type = rotary.rope_type[label] if label else getattr(rotary, "rope_type", model["rope_type"])
    differences = []

    def differ(what, mine, theirs, note=""):
        differences.append(Difference(what, mine, theirs, note))

    if rope_type != ref["rope_type"]:
        differ("rope_type", rope_type, ref["rope_type"], "the scaling rule")
    if not math.isclose(model["base"], ref["base"], rel_tol=1e-12):
        differ("base", model["base"], ref["base"], "rope_theta")
    if model["head_dim"] != ref["head_dim"]:
        differ("head_dim", model["head_dim"], ref["head_dim"])
    if model["partial_rotary_factor"] != ref["partial_rotary_factor"]:
        differ("partial_rotary_factor", model["partial_rotary_factor"], ref["partial_rotary_factor"])
    if 2 * len(inv) != 2 * len(ref_inv):
        differ("rotary_width", 2 * len(inv), 2 * len(ref_inv), "channels of a head that turn")
    if _differ(model["scaling"], ref["scaling"]):
        differ("scaling", _changed(model["scaling"], ref["scaling"]), _changed(ref["scaling"], model["scaling"]))
    if abs(factor - ref_factor) > atol:
        differ("attention_factor", factor, ref_factor, "multiplies cos and sin")
    width = max(model["head_dim"], ref["head_dim"], 2 * len(inv), 2 * len(ref_inv))
    w_model, w_ref = _per_channel(inv, width), _per_channel(ref_inv, width)
    if len(inv) == len(ref_inv):
        relative = np.abs(inv - ref_inv) / np.maximum(np.abs(ref_inv), np.finfo(float).tiny)
        off = np.flatnonzero((np.abs(inv - ref_inv) > rtol * np.abs(ref_inv)) & (relative > 0))
        if off.size:
            worst = int(off[np.argmax(relative[off])])
            differ(
                "frequencies",
                float(inv[worst]),
                float(ref_inv[worst]),
                f"{off.size} of {len(inv)} pairs differ, first pair {int(off[0])}; largest relative difference "
                f"{relative[worst]:.3g} at pair {worst}",
            )
    # the first integer position where some channel's angle differs by more than atol + rtol p w
    excess = np.abs(w_model - w_ref) - rtol * w_ref
    growing = excess > 0
    angles_at = int(np.min(np.floor(atol / excess[growing]))) + 1 if np.any(growing) else None
    layout, cos_sin = _cos_sin(runs, pos, ref_inv, ref_factor, width, atol, rtol)
    for name, (_, first) in cos_sin.items():
        if first is not None:
            differ("cos_sin", None, None, f"in {name}, first beyond tolerance at position {first:,}")
    order = {name: i for i, name in enumerate(DIFFERENCES)}
    differences.sort(key=lambda d: order[d.what])
    settings = {
        "rope_type": rope_type,
        "base": model["base"],
        "head_dim": model["head_dim"],
        "rotary_width": 2 * len(inv),
        "attention_factor": factor,
        "layout": layout,
    }
    return RotaryReport(
        ok=not differences,
        rotary=type(rotary).__name__,
        reference=ref_name,
        layer_type=label,
        settings=settings,
        differences=tuple(differences),
        angles_diverge_at=angles_at,
        cos_sin=cos_sin,
        positions=tuple(int(p) for p in pos),
        atol=float(atol),
    )


def _differ(mine: dict, theirs: dict) -> bool:
    return any(not _same(mine.get(k), theirs.get(k)) for k in set(mine) | set(theirs))


def _changed(mine: dict, theirs: dict) -> dict:
    """The entries of ``mine`` that ``theirs`` lacks or states otherwise (None for a missing one)."""
    return {k: mine.get(k) for k in sorted(set(mine) | set(theirs)) if not _same(mine.get(k), theirs.get(k))}


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-12)
    return a == b


# --------------------------------------------------------------------------
# Layout conversion of q/k projections
# --------------------------------------------------------------------------


def _head_order(weight, n_heads: int, rotary_dim, argument: str = "weight") -> tuple:
    """``(head size, the within-head permutation interleaved -> half-split)``, or a one-line error."""
    rows = weight.shape[0]
    if rows % n_heads:
        refuse(
            "n_heads",
            message=f"n_heads={n_heads} does not divide the {rows} rows of {argument} "
            "(for keys under grouped-query attention, pass num_key_value_heads).",
        )
    size = rows // n_heads
    width = size if rotary_dim is None else rotary_dim
    if width > size:
        refuse(
            "rotary_dim",
            message=f"rotary_dim={width} is more than the head size {size} ({rows} rows / {n_heads} heads).",
        )
    if width % 2:
        refuse(
            "rotary_dim" if rotary_dim is not None else "n_heads",
            message=f"{argument}: {rows} rows / {n_heads} heads = {size} channels a head, an odd number: RoPE "
            "rotates pairs (check n_heads, or give rotary_dim).",
        )
    return size, np.concatenate([posenc.layout_permutation(width), np.arange(width, size)])


def _permute_heads(weight, n_heads: int, order: np.ndarray):
    size = weight.shape[0] // n_heads
    heads = weight.reshape(n_heads, size, *weight.shape[1:])
    return heads[:, torch.as_tensor(order)].reshape(weight.shape).contiguous()


@accepts(weight=PROJECTION, n_heads=Int(1), rotary_dim=Maybe(Int(2, even=True)))
def interleaved_to_half_split(weight, n_heads, *, rotary_dim=None):
    """Rows of a q or k projection from Meta's interleaved layout to the library's half-split one, head by head.

    ``weight`` is ``(n_heads * head_size, in_features)`` (or a bias of ``n_heads * head_size``); in each head,
    interleaved pair ``i`` is rows ``(2i, 2i+1)``, half-split pair ``i`` is rows ``(i, i + r/2)``. Only the first
    ``rotary_dim`` rows of a head rotate (default: all). For keys under grouped-query attention ``n_heads`` is
    ``num_key_value_heads``. Returns a new tensor; :func:`half_split_to_interleaved` is its inverse.
    """
    _, order = _head_order(weight, n_heads, rotary_dim)
    return _permute_heads(weight, n_heads, order)


@accepts(weight=PROJECTION, n_heads=Int(1), rotary_dim=Maybe(Int(2, even=True)))
def half_split_to_interleaved(weight, n_heads, *, rotary_dim=None):
    """The inverse of :func:`interleaved_to_half_split`: rows back to pairs ``(2i, 2i+1)`` in each head."""
    _, order = _head_order(weight, n_heads, rotary_dim)
    return _permute_heads(weight, n_heads, np.argsort(order))


@accepts(
    config=CONFIG,
    q=PROJECTION,
    k=PROJECTION,
    to=OneOf("half_split", "interleaved"),
)
def convert_qk(config, q, k, *, to="half_split") -> tuple:
    """One attention layer's ``(q, k)`` projections (weights or biases) converted for ``config``, as a pair.

    The queries have ``num_attention_heads`` heads, the keys ``num_key_value_heads`` (grouped-query attention);
    the head size is ``config.head_dim`` (else ``hidden_size / num_attention_heads``), the rotated width the
    config's ``partial_rotary_factor`` of it. ``to="half_split"`` reads Meta's interleaved rows (the library's
    layout after), ``to="interleaved"`` the reverse.
    """
    heads = getattr(config, "num_attention_heads", None)
    if not heads:
        refuse("config", message=f"config is a {type(config).__name__} without num_attention_heads.")
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    size = _head_dim(config, "config")
    blocks = _rope_blocks(config, "config")
    prf = next(iter(blocks.values())).get("partial_rotary_factor", 1.0)
    try:
        width = posenc.rotary_dim(size, prf) if prf != 1.0 else None
    except ValueError as error:
        refuse("config", message=f"config has a partial rotation posenc cannot read: {error}")
    out = []
    for name, weight, n in (("q", q, heads), ("k", k, kv_heads)):
        if weight.shape[0] != n * size:
            refuse(
                name,
                message=f"{name} has {weight.shape[0]} rows; the config's {n} heads of {size} channels "
                f"make {n * size}.",
            )
        _, order = _head_order(weight, n, width, name)
        out.append(_permute_heads(weight, n, order if to == "half_split" else np.argsort(order)))
    return tuple(out)
