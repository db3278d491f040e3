"""Slider explorers for the chapters: an anywidget drawn in the browser, plus its data.

Each explorer is an ``anywidget.AnyWidget`` whose traits are its slider
values (``pos``, ``i``, ``d_model``, ``base``, ...). It draws with
``explorers.js``, an ES module that computes the picture from those values
and paints it on canvas in the browser. The sliders a learner moves are
ipywidgets sliders linked to the traits in the browser (``widgets.jslink``),
so a slider step redraws at once, without a round trip to the kernel; the
kernel still receives every value, so ``explorer.pos`` is current and
``explorer.observe(callback, names="pos")`` works.

The pure functions ``*_data`` compute the same numbers in Python, through
``posenc``: they are the reference the browser tests compare the module
with (tests/test_explorers.py, tests/test_browser_book.py).

Use in a notebook::

    from posenc_course.explorers import FormulaExplorer
    FormulaExplorer()          # displays sliders + figure

One renderer, two outputs. An explorer displays as a MIME bundle holding the
widget view (JupyterLab, Notebook 7, VS Code, Colab) and a ``text/html``
twin for the static HTML book, where no kernel runs: a
``div.posenc-explorer`` whose ``data-spec`` describes the sliders, followed
by the same module inline, which adds range inputs and draws with the same
code. The book is told to prefer the ``text/html`` (``_config.yml``) and keeps
the module once per page (``book_build/book_assets.py``).

What the module needs besides the slider values (the rule names, ALiBi's slope,
T5's buckets, ...) travels in the spec as ``constants``: every number either
language uses is written here, once. An explorer's sliders are declared once,
in its ``SLIDERS``, default included; its traits and constructor are made from
them.
"""

from __future__ import annotations

import functools
import html
import inspect
import json
import math
from dataclasses import dataclass
from pathlib import Path

import anywidget
import ipywidgets as widgets
import numpy as np
import traitlets

import posenc
from posenc_course.arguments import Array, Either, Int, Maybe, OneOf, Real, accepts, refuse

POSITIONS_SHOWN = 200  # the x range of the formula explorer's wave plot
REGIME_THRESHOLD = 0.1  # the base explorer's criteria (posenc.pair_regimes' threshold)
OFFSET_P0, OFFSET_CURVE, ARC_POINTS = 3, 200, 30  # the offset explorer: its start p0, the dot-product curve's
# offsets -200 ... 200, and the points of each arc drawn between PE(p0) and PE(p0 + k)
BROWSER_MODULE = Path(__file__).with_name("explorers.js")
# the opening tag of the module inline in an explorer's static twin; the book keeps one per page (book_assets.py)
RENDERER_SCRIPT = '<script type="module" data-posenc-explorers>'


# --------------------------------------------------------------------------
# What each explorer draws, as plain arrays
# --------------------------------------------------------------------------

# What the *_data functions accept: what the formulas allow (the sliders keep to a part of it)
D_MODEL = Int(1, 65536)
BASE = Real(above=1, hi=1e12)
LENGTH = Int(1, 2**31)


@accepts(pos=Int(-(2**31), 2**31), i=Int(0), d_model=D_MODEL, base=BASE)
def formula_data(pos: int, i: int, d_model: int, base: float) -> dict:
    """Curves for pair ``i`` over positions 0..199 and the vector PE(pos)."""
    last = (d_model - 1) // 2
    if i > last:
        refuse("i", f"a pair index from 0 to {last} (d_model={d_model} has {last + 1} pairs)", i)
    xs = np.arange(POSITIONS_SHOWN)
    table = posenc.sinusoidal(xs, d_model, base)
    row = posenc.sinusoidal([pos], d_model, base)[0]
    cos_col = 2 * i + 1
    return {
        "x": xs,
        "sin": table[:, 2 * i],
        "cos": table[:, cos_col] if cos_col < d_model else None,
        "row": row,
        "omega": posenc.frequencies(d_model, base)[i],
        "wavelength": posenc.wavelengths(d_model, base)[i],
    }


@accepts(base=BASE, d_model=D_MODEL, length=LENGTH, threshold=Real(above=0, below=2))
def base_data(base: float, d_model: int, length: int, threshold: float = REGIME_THRESHOLD) -> dict:
    """Wavelength of every pair, the regime boundaries and counts (posenc.pair_regimes)."""
    kinds = posenc.pair_regimes(d_model, length, base, threshold=threshold)
    lam = posenc.wavelengths(d_model, base)
    return {
        "i": np.arange(lam.size),
        "wavelength": lam,
        # the same criteria written as wavelengths, for drawing
        "fine_below": 2 * np.pi / (2 * np.arcsin(threshold / 2)),
        "wrap_below": float(length),
        "constant_above": 2 * np.pi * length / threshold,
        **{name: int(mask.sum()) for name, mask in kinds.items()},
    }


@accepts(d_model=D_MODEL)
def offset_pairs(d_model: int) -> np.ndarray:
    """Four pairs spread over the faster half of the spectrum (fewer if d is small)."""
    h = (d_model + 1) // 2
    return np.unique(np.round(np.linspace(0, max(h // 2, min(3, h - 1)), 4)).astype(int))


@accepts(k=Real(-(2**31), 2**31), d_model=Int(2, 65536, even=True), base=BASE, p0=Int(-(2**31), 2**31))
def offset_data(k: float, d_model: int, base: float, p0: int = OFFSET_P0) -> dict:
    """Pairs at p0 and p0+k on the unit circle, and the dot-product curve."""
    pairs = offset_pairs(d_model)
    now = posenc.sinusoidal([p0], d_model, base)[0]
    later = posenc.rotation(k, d_model, base) @ now
    ks = np.arange(-OFFSET_CURVE, OFFSET_CURVE + 1)
    dots = posenc.sinusoidal(p0 + ks, d_model, base) @ now
    omega = posenc.frequencies(d_model, base)[pairs]
    start = np.arctan2(now[2 * pairs], now[2 * pairs + 1])
    turn = np.remainder(k * omega + np.pi, 2 * np.pi) - np.pi  # the turn, reduced to (-pi, pi]
    arcs = start[:, None] + turn[:, None] * np.linspace(0, 1, ARC_POINTS)[None, :]
    return {
        "pairs": pairs,
        "now": np.stack([now[2 * pairs + 1], now[2 * pairs]], axis=1),  # (cos, sin) = (x, y)
        "later": np.stack([later[2 * pairs + 1], later[2 * pairs]], axis=1),
        "arcs": np.stack([np.cos(arcs), np.sin(arcs)], axis=2),  # (pair, point, xy)
        "ks": ks,
        "dots": dots,
        "dot_k": float(now @ later),
    }


@accepts(base=BASE, scale=Int(1, 4096), d_model=Int(4, 65536, even=True), length=LENGTH)
def rope_scaling_data(base: float, scale: int, d_model: int, length: int) -> dict:
    """Wavelengths of RoPE pairs for a context ``scale`` times the training ``length``.

    Three curves: the model's ``base`` as trained; position interpolation,
    which divides positions by ``scale`` so every wavelength (in new
    positions) is ``scale`` times longer; and the "NTK-aware" raised base
    ``base * scale ** (d / (d - 2))``, which leaves the fastest pair alone and
    stretches the slowest pair by exactly ``scale``. ``unseen_*`` counts the
    pairs whose wavelength exceeds the training length: over training they
    never completed a turn.
    """
    plain = posenc.wavelengths(d_model, base)
    raised_base = base * scale ** (d_model / (d_model - 2))
    raised = posenc.wavelengths(d_model, raised_base)
    interpolated = plain * scale
    return {
        "i": np.arange(plain.size),
        "plain": plain,
        "interpolated": interpolated,
        "raised": raised,
        "raised_base": raised_base,
        "length": length,
        "target": length * scale,
        "unseen_plain": int(np.sum(plain > length)),
        "unseen_raised": int(np.sum(raised > length)),
        "unseen_interpolated": int(np.sum(interpolated > length)),
    }


ROPE_RULES = ("linear", "dynamic", "yarn", "llama3")  # the rule slider's values 0 ... 3, in this order
# A pair whose frequency is within this of its trained value counts as kept: not exact equality, since a rule's
# blend of two equal frequencies rounds differently in Python and in the browser.
KEPT_REL = 1e-12
# the settings of the two rules that have more than a factor: YaRN's betas, Llama 3's bands
RULE_SETTINGS = {
    "yarn": {"beta_fast": 32.0, "beta_slow": 1.0},
    "llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
}


@accepts(
    base=BASE,
    d_head=Int(4, 65536, even=True),
    length=LENGTH,
    target=LENGTH,
    rule=Either(Int(0, len(ROPE_RULES) - 1), OneOf(*ROPE_RULES)),
)
def rope_rules_data(base: float, d_head: int, length: int, target: int, rule: int) -> dict:
    """Every RoPE pair's wavelength before and after one scaling rule stretches ``length`` to ``target``.

    ``rule`` indexes :data:`ROPE_RULES` (or is one of its names); the stretch is ``s = max(target / length, 1)``:
    ``linear`` (factor s), ``dynamic`` (dynamic NTK with factor 1 at ``seq_len = target``),
    ``yarn`` (factor s, betas of :data:`RULE_SETTINGS`) and ``llama3`` (factor s, its bands there), all from
    ``posenc.rope_parameters`` with ``length`` as the trained length. ``turn_in_length`` counts the
    pairs that complete a turn within ``length`` as trained, ``turn_in_target`` those that do within
    ``target`` after scaling, ``kept`` the pairs whose frequency the rule leaves as it was (to ``KEPT_REL``).
    """
    name = rule if isinstance(rule, str) else ROPE_RULES[rule]
    s = max(target / length, 1.0)
    params = {
        "linear": {"factor": s},
        "dynamic": {"factor": 1.0, "max_position_embeddings": length, "seq_len": target},
        "yarn": {"factor": s, "original_max_position_embeddings": length, **RULE_SETTINGS["yarn"]},
        "llama3": {"factor": s, "original_max_position_embeddings": length, **RULE_SETTINGS["llama3"]},
    }[name]
    inv_before, _ = posenc.rope_parameters(d_head, base)
    inv_after, attention = posenc.rope_parameters(d_head, base, name, **params)
    before, after = 2 * np.pi / inv_before, 2 * np.pi / inv_after
    return {
        "i": np.arange(before.size),
        "before": before,
        "after": after,
        "rule": name,
        "factor": s,
        "attention_factor": attention,
        "length": length,
        "target": target,
        "turn_in_length": int(np.sum(before <= length)),
        "turn_in_target": int(np.sum(after <= target)),
        "kept": int(np.sum(np.abs(inv_after / inv_before - 1) <= KEPT_REL)),
    }


LOW_PRECISION = ("float32", "float16", "bfloat16")


@functools.cache
def _low_precision_formats() -> dict:
    """Each of :data:`LOW_PRECISION` as torch defines it, in the terms the browser rounds with: significand bits
    (the implicit one included), the smallest normal exponent and the largest finite value."""
    import torch

    formats = {}
    for name in LOW_PRECISION:
        info = torch.finfo(getattr(torch, name))
        formats[name] = {"bits": 1 - round(math.log2(info.eps)), "emin": round(math.log2(info.tiny)), "max": info.max}
    return formats


@accepts(position=Real(0, 2**40), base=BASE, d_model=D_MODEL)
def precision_data(position: int, base: float, d_model: int) -> dict:
    """Per-pair phase error of ``p * omega_i`` computed in each low-precision format.

    Uses chapter 06's ``bug_zoo.phase_error`` (float64-only reference, exact splits,
    wrapped to [0, pi]; NaN where the format overflowed). ``collides`` names
    the formats in which positions ``p`` and ``p + 1`` get identical angles on
    every pair, hence identical encoding vectors.
    """
    import torch

    from posenc_course import bug_zoo

    errors, collides = {}, []
    for name in LOW_PRECISION:
        dtype = getattr(torch, name)
        errors[name] = bug_zoo.phase_error([position], d_model, base, dtype)[0]
        angles = bug_zoo.angles_in_dtype([position, position + 1], d_model, base, dtype)
        if np.array_equal(angles[0], angles[1]):
            collides.append(name)
    return {
        "i": np.arange((d_model + 1) // 2),
        "errors": errors,
        "collides": collides,
        "unit_roundoff": {name: 2.0 ** -f["bits"] for name, f in _low_precision_formats().items()},
    }


ATTENTION_SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")  # the scheme slider's values 0 ... 5
SENTENCE = tuple("the cat sat on the mat and the dog sat on it".split())  # "the", "sat", "on" come back
ATTENTION_D = Int(2, 1024, even=True)  # a hashed table's row and column fit in 10 bits each
ALIBI_HEADS, ALIBI_HEAD = 8, 1  # one head of an 8-head ALiBi model: slope 2**-2
# a causal T5 (decoder) with few buckets, so that a 12-token sentence reaches the shared, logarithmic ones
T5_BUCKETS = {"bidirectional": False, "num_buckets": 8, "max_distance": 12}
TIE = 1e-12  # weights this close to the largest count as largest too (repeated words without positions)
LEARNED_SCALE = 0.5  # the stand-in learned table is small next to the token vectors, as at initialisation
T5_SCALE = 1.5


def _hashed(salt: int, rows: int, cols: int) -> np.ndarray:
    """A (rows, cols) table of numbers in [-1, 1) from a 32-bit integer hash of (salt, row, column).

    Integer arithmetic only, so explorers.js (``hashed``) computes the very same bits: the tables stand in for
    random ones without a random generator that would have to match across languages.
    """
    r = np.arange(rows, dtype=np.uint64)[:, None]
    c = np.arange(cols, dtype=np.uint64)[None, :]
    h = (np.uint64(salt) << np.uint64(20)) | (r << np.uint64(10)) | c
    h = (h * np.uint64(0x9E3779B1)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x45D9F3B)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(16)
    return h.astype(np.float64) / 2**31 - 1


@accepts(d=ATTENTION_D)
def attention_setup(d: int) -> dict:
    """The fixed ingredients of :class:`AttentionExplorer` for head width ``d``.

    ``words``: :data:`SENTENCE`; ``tokens``: its (12, d) token vectors, one per word, so a repeated word has
    the same vector (entries of mean square 1); ``w_q`` and ``w_k``: (d, d) projections scaled so that ``q``
    and ``k`` have entries of mean square 1; ``learned``: a (12, d) position table standing in for a learned
    one (entries of root mean square ``LEARNED_SCALE``); ``t5_table``: T5's (num_buckets, 1) table of one head.
    Every number comes from ``_hashed``: the same in Python and in the browser.
    """
    n, unit = len(SENTENCE), np.sqrt(3.0)  # a uniform number on [-1, 1) has mean square 1/3
    vocabulary = list(dict.fromkeys(SENTENCE))
    ids = [vocabulary.index(word) for word in SENTENCE]
    return {
        "words": SENTENCE,
        "tokens": unit * _hashed(1, len(vocabulary), d)[ids],
        "w_q": unit * _hashed(2, d, d) / np.sqrt(d),
        "w_k": unit * _hashed(3, d, d) / np.sqrt(d),
        "learned": LEARNED_SCALE * unit * _hashed(4, n, d),
        "t5_table": T5_SCALE * _hashed(5, T5_BUCKETS["num_buckets"], 1),
    }


def _softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores - scores.max())
    return e / e.sum()


def _first_largest(weights: np.ndarray) -> int:
    return int(np.flatnonzero(weights >= weights.max() - TIE)[0])


@accepts(
    query=Int(0, len(SENTENCE) - 1),
    scheme=Either(Int(0, len(ATTENTION_SCHEMES) - 1), OneOf(*ATTENTION_SCHEMES)),
    base=BASE,
    d=ATTENTION_D,
    tokens=Maybe(Array(2)),
)
def attention_data(query: int, scheme: int, base: float, d: int, tokens=None) -> dict:
    """One causal attention row: the scores and softmax weights of the query at ``query`` over keys 0 ... query.

    ``scheme`` indexes :data:`ATTENTION_SCHEMES` (or is one of its names): ``none`` (content only),
    ``sinusoidal`` (``posenc.sinusoidal`` added to the token vectors before projection), ``learned`` (the
    stand-in table added likewise), ``rope`` (``posenc.apply_rope`` on the projected queries and keys),
    ``alibi`` (``posenc.alibi_bias`` of head ``ALIBI_HEAD`` of ``ALIBI_HEADS``) or ``t5`` (``posenc.t5_bias``
    with ``T5_BUCKETS``); ``base`` is used by the sinusoidal and RoPE schemes. Scores are
    ``q . k / sqrt(d)`` plus the scheme's bias. ``tokens`` replaces the sentence's (12, d) token vectors.

    Returns ``scores`` and ``weights`` with the scheme, ``scores_none`` and ``weights_none`` without positions,
    ``difference`` (weights minus weights without positions), ``argmax`` and ``argmax_none`` (the first key
    whose weight is largest, to ``TIE``) and ``buckets`` (each key's T5 bucket, whatever the scheme).
    """
    name = scheme if isinstance(scheme, str) else ATTENTION_SCHEMES[scheme]
    setup = attention_setup(d)
    n = len(SENTENCE)
    if tokens is not None:
        tokens = np.asarray(tokens, dtype=np.float64)
        if tokens.shape != (n, d):
            refuse("tokens", f"None or an array of shape ({n}, {d}): one vector of width d per word", tokens)
    x = setup["tokens"] if tokens is None else tokens
    keys = np.arange(query + 1)

    def content(x, rotate=False):
        q, k = x @ setup["w_q"], x @ setup["w_k"]
        if rotate:
            q, k = posenc.apply_rope(q, base=base), posenc.apply_rope(k, base=base)
        return k[keys] @ q[query] / np.sqrt(d)

    plain = content(x)
    if name == "sinusoidal":
        scores = content(x + posenc.sinusoidal(n, d, base))
    elif name == "learned":
        scores = content(x + setup["learned"])
    elif name == "rope":
        scores = content(x, rotate=True)
    elif name == "alibi":
        scores = plain + posenc.alibi_bias(ALIBI_HEADS, n)[ALIBI_HEAD, query, keys]
    elif name == "t5":
        scores = plain + posenc.t5_bias(setup["t5_table"], n, **T5_BUCKETS)[0, query, keys]
    else:
        scores = plain
    weights, weights_none = _softmax(scores), _softmax(plain)
    return {
        "keys": keys,
        "scheme": name,
        "scores": scores,
        "scores_none": plain,
        "weights": weights,
        "weights_none": weights_none,
        "difference": weights - weights_none,
        "argmax": _first_largest(weights),
        "argmax_none": _first_largest(weights_none),
        "buckets": posenc.t5_relative_position_bucket(query - keys, **T5_BUCKETS),
    }


# --------------------------------------------------------------------------
# The widget: traits = slider values, drawn by explorers.js in the browser
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Slider:
    """One slider of an explorer, declared once: its widget, the explorer's synced trait (of the slider's name)
    and the explorer constructor's argument (range and default) are all made from it."""

    label: str
    lo: float  # a log slider's ends are exponents: 10**lo ... 10**hi
    hi: float
    step: float = 1
    default: float | str = 0  # the constructor's default, in the argument's units (a named slider: a key)
    log: bool = False
    digits: int = 3  # a log slider's readout: significant digits, with thousands separators (0: an integer)
    names: tuple[str, ...] = ()  # what each value lo ... hi shows in the readout, for a slider that picks one of these
    keys: tuple[str, ...] = ()  # ... and the name the constructor (and the data function) accepts for each
    exponent: str = ""  # a log slider whose constructor argument is its exponent, under this name

    def argument(self, name: str) -> str:
        """The constructor's argument for the slider ``name``."""
        return self.exponent or name

    def spec(self):
        """What the constructor accepts for this slider: what it can show."""
        if self.keys:
            return Either(OneOf(*self.keys), Int(self.lo, self.hi))
        if self.exponent:
            return Real(self.lo, self.hi)
        if self.log:
            return Real(10.0**self.lo, 10.0**self.hi)
        return Int(self.lo, self.hi, even=self.step == 2 and self.lo % 2 == 0)

    def value(self, argument):
        """The trait's value for a constructor argument (a named slider's index, a log slider's float)."""
        if self.keys and isinstance(argument, str):
            return self.keys.index(argument)
        if self.exponent:
            return 10.0**argument
        return float(argument) if self.log else argument

    def trait(self) -> traitlets.TraitType:
        """The explorer's synced trait, at the default's value."""
        kind = traitlets.Float if self.log else traitlets.Int
        return kind(self.value(self.default)).tag(sync=True)

    def widget(self, value, hi=None):
        """The ipywidgets slider at ``value`` (``hi``: a top that follows another slider)."""
        style = {"description_width": "initial"}
        if self.names:  # its readout shows the name; its "index" is the value (linked to the trait)
            return widgets.SelectionSlider(options=list(self.names), index=value, description=self.label, style=style)
        if self.log:
            return widgets.FloatLogSlider(
                value=value,
                base=10,
                min=self.lo,
                max=self.hi,
                step=self.step,
                description=self.label,
                style=style,
                readout_format=f",.{self.digits}r" if self.digits else ",.0f",
            )
        return widgets.IntSlider(
            value=value,
            min=self.lo,
            max=self.hi if hi is None else hi,
            step=self.step,
            description=self.label,
            style=style,
        )


def _last_pair(d_model: int) -> int:
    """The top of a pair slider that follows a width: there are ceil(d/2) pairs."""
    return (d_model + 1) // 2 - 1


def _constructor(sliders: dict):
    """An explorer's ``__init__``: one keyword argument per slider, with the slider's default."""
    parameters = [
        inspect.Parameter(slider.argument(name), inspect.Parameter.KEYWORD_ONLY, default=slider.default)
        for name, slider in sliders.items()
    ]
    signature = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *parameters])

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        Explorer.__init__(self, **{name: s.value(bound.arguments[s.argument(name)]) for name, s in sliders.items()})

    __init__.__signature__ = signature
    __init__.__doc__ = "Each argument is where its slider starts."
    return __init__


class _Declared(type(anywidget.AnyWidget)):
    """Gives an explorer class one synced trait per slider of its ``SLIDERS`` and a constructor that takes them
    (checked by ``accepts`` against what each slider can show)."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        sliders = namespace.get("SLIDERS", {})
        for key, slider in sliders.items():
            namespace[key] = slider.trait()
        if sliders:
            namespace["__init__"] = _constructor(sliders)
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if sliders:
            cls = accepts(**{slider.argument(key): slider.spec() for key, slider in sliders.items()})(cls)
        return cls


def _value_attribute(control) -> str:
    """The attribute of a slider widget that holds its value as the explorer's trait has it (a named slider's
    index)."""
    return "index" if isinstance(control, widgets.SelectionSlider) else "value"


def _digits(readout_format: str) -> int:
    """Significant digits of a log slider's readout (0: shown as a rounded integer)."""
    return 0 if readout_format.endswith("f") else int(readout_format.split(".")[1].rstrip("r"))


class Explorer(anywidget.AnyWidget, metaclass=_Declared):
    """Sliders + a canvas drawn in the browser; a subclass declares its ``SLIDERS`` and its ``kind``.

    ``SLIDERS`` maps each slider's name to its ``_Slider``, in display order: the class gets a synced trait of
    that name and a constructor taking each slider's starting value. ``constants()`` is what the renderer needs
    besides the slider values; it travels in the spec, so that no number is written in both languages.
    """

    _esm = BROWSER_MODULE
    _spec = traitlets.Dict().tag(sync=True)  # kind, slider ranges, couplings, constants: what the module needs
    kind = ""  # the name of the matching renderer in explorers.js
    couple = {}  # a pair slider -> the width slider whose value sets its range (ceil(width / 2) pairs)
    alt = "interactive figure"  # what it shows, in words, where JavaScript does not run
    SLIDERS: dict = {}

    def __init__(self, **values):
        if not type(self).SLIDERS:
            names = ", ".join(c.__name__ for c in Explorer.__subclasses__())
            refuse(
                "Explorer",
                message=f"is the base class of the explorers; display one of them: {names}.",
                function="Explorer",
            )
        for child, parent in self.couple.items():
            values[child] = min(values[child], _last_pair(values[parent]))
        super().__init__(**values)
        self.controls = {name: self.control(name, slider) for name, slider in self.SLIDERS.items()}
        for control in self.controls.values():
            control.continuous_update = True
        # in the browser: slider value <-> trait, both ways, with no kernel in between
        self.links = [
            widgets.jslink((control, _value_attribute(control)), (self, name))
            for name, control in self.controls.items()
        ]
        if self.couple:
            self.observe(self._pair_range_follows_width, names=sorted(set(self.couple.values())))
        self._spec = self.browser_spec()
        self.layout = widgets.Layout(width="100%")
        self.panel = widgets.VBox(
            [widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap")), self]
        )

    def control(self, name: str, slider: _Slider):
        """The widget of slider ``name`` at the trait's value (a pair slider up to its width's last pair)."""
        parent = self.couple.get(name)
        return slider.widget(getattr(self, name), hi=_last_pair(getattr(self, parent)) if parent else None)

    def _pair_range_follows_width(self, change):
        """A pair slider's range follows its width (the browser clamps meanwhile)."""
        top = _last_pair(change["new"])
        for child, parent in self.couple.items():
            if parent == change["name"]:
                self.controls[child].max = top
                setattr(self, child, min(getattr(self, child), top))

    def values(self) -> dict:
        """The current slider values, as the kernel last heard them."""
        return {name: getattr(self, name) for name in self.controls}

    def constants(self) -> dict:
        """What the renderer computes with besides the slider values (JSON: lists, not tuples)."""
        return {}

    def browser_spec(self) -> dict:
        """The sliders as the browser renderer needs them (log sliders in exponents, as ipywidgets)."""
        controls = []
        for name, c in self.controls.items():
            log = isinstance(c, widgets.FloatLogSlider)
            if isinstance(c, widgets.SelectionSlider):  # values 0 ... n-1, shown by their names
                named = {"min": 0, "max": len(c.options) - 1, "step": 1, "value": c.index, "names": list(c.options)}
            else:
                named = {"min": c.min, "max": c.max, "step": c.step, "value": c.value}
            controls.append(
                {
                    "name": name,
                    "label": c.description,
                    **named,
                    "log": log,
                    "digits": _digits(c.readout_format) if log else 0,
                }
            )
        return {"kind": self.kind, "controls": controls, "couple": self.couple, "constants": self.constants()}

    def static_html(self) -> str:
        """A self-contained HTML block for the static book: the spec, then explorers.js inline.

        The module's script carries ``data-posenc-explorers``: a page that shows several explorers needs it once
        (it mounts every explorer of the page), and the book keeps only the first (book_assets.py).
        """
        spec = html.escape(json.dumps(self.browser_spec()), quote=True)
        module = BROWSER_MODULE.read_text()
        if "</script" in module.lower():
            raise RuntimeError("explorers.js contains '</script', which would end its own inline <script>")
        return (
            f'<div class="posenc-explorer" data-spec="{spec}"><noscript>{html.escape(self.alt)}. This explorer '
            "needs JavaScript; run the notebook in Jupyter for the live version.</noscript>"
            f"</div>\n{RENDERER_SCRIPT}{module}</script>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        if hasattr(self.panel, "_repr_mimebundle_"):
            bundle = self.panel._repr_mimebundle_(include=include, exclude=exclude) or {}
        else:  # ipywidgets 7 (Colab's): the same view of the panel, which its widgets build in _ipython_display_
            bundle = {
                "text/plain": repr(self.panel),
                "application/vnd.jupyter.widget-view+json": {
                    "version_major": 2,
                    "version_minor": 0,
                    "model_id": self.panel.model_id,
                },
            }
        bundle["text/html"] = self.static_html()
        return bundle

    if not hasattr(widgets.Widget, "_repr_mimebundle_"):
        # ipywidgets 7 displays a widget through _ipython_display_, which IPython prefers to _repr_mimebundle_:
        # without this, Colab showed the bare canvas, without its sliders and without the static twin
        def _ipython_display_(self, **kwargs):
            from IPython.display import display

            display(self._repr_mimebundle_(), raw=True)


class FormulaExplorer(Explorer):
    """Chapter 02: one pair's sine and cosine over positions, and the whole vector PE(pos)."""

    kind = "formula"
    couple = {"i": "d_model"}
    alt = (
        f"Left: sine and cosine of the chosen pair over positions 0 to {POSITIONS_SHOWN - 1}; "
        "right: the encoding vector of the chosen position"
    )
    SLIDERS = {
        "pos": _Slider("pos", 0, POSITIONS_SHOWN - 1, default=10),
        "i": _Slider("pair i", 0, 127, default=4),
        "d_model": _Slider("d_model", 2, 256, default=64),
        "base": _Slider("base", 1, 6, 0.1, default=10000.0, log=True),
    }

    def constants(self):
        return {"positions_shown": POSITIONS_SHOWN}


class BaseExplorer(Explorer):
    """Chapter 03: how the base moves every pair's wavelength relative to a length L."""

    kind = "base"
    alt = (
        "Wavelength of every pair on a log scale, with the boundaries for pairs that "
        "separate neighbours, wrap within L, and stay nearly constant over L"
    )
    SLIDERS = {
        "base": _Slider("base", 1, 7, 0.1, default=10000.0, log=True),
        "length": _Slider("length L", 16, 8192, 16, default=512),
        "d_model": _Slider("d_model", 8, 1024, 8, default=512),
    }

    def constants(self):
        return {"threshold": REGIME_THRESHOLD}


class OffsetExplorer(Explorer):
    """Chapter 04: moving by k rotates every (sin, cos) pair by k·ω_i."""

    kind = "offset"
    alt = (
        "Left: four sine-cosine pairs on the unit circle before and after a shift by k, "
        "joined by the arc they turn through; right: the dot product PE(p)·PE(p+k) against k"
    )
    SLIDERS = {
        "k": _Slider("offset k", -200, 200, default=5),
        "d_model": _Slider("d_model", 8, 256, 2, default=64),
        "base": _Slider("base", 1, 6, 0.1, default=10000.0, log=True),
    }

    def constants(self):
        return {"p0": OFFSET_P0, "curve": OFFSET_CURVE, "arc_points": ARC_POINTS}


class RopeScalingExplorer(Explorer):
    """Chapter 08: how interpolation or an NTK-aware raised base move RoPE's wavelengths."""

    kind = "rope"
    alt = (
        "Wavelength of every RoPE pair on a log scale for the trained base, for position "
        "interpolation and for the NTK-aware raised base, with the training length and the "
        "target length marked"
    )
    SLIDERS = {
        "base": _Slider("base", 3, 7, 0.1, default=10000.0, log=True),
        "scale": _Slider("factor s", 1, 32, default=4),
        "d_model": _Slider("head dim", 16, 256, 16, default=128),
        "length": _Slider("train length L", 128, 8192, 128, default=2048),
    }


class RopeRulesExplorer(Explorer):
    """Chapter 10: every pair's wavelength before and after a scaling rule (linear, dynamic, YaRN, Llama 3)."""

    kind = "rope_rules"
    alt = (
        "Wavelength of every RoPE pair on a log scale as trained and after the chosen scaling rule "
        "stretches the trained length to the target length, with both lengths marked"
    )
    SLIDERS = {
        "base": _Slider("base", 3, 7, 0.1, default=500000.0, log=True),
        "d_head": _Slider("d_head", 16, 256, 16, default=128),
        "length": _Slider("trained length L", 512, 32768, 512, default=8192),
        "target": _Slider("target length", 512, 262144, 512, default=32768),
        "rule": _Slider(
            "rule",
            0,
            len(ROPE_RULES) - 1,
            default="yarn",
            names=("linear", "dynamic", "YaRN", "Llama 3"),
            keys=ROPE_RULES,
        ),
    }

    def constants(self):
        return {"rules": list(ROPE_RULES), "kept_rel": KEPT_REL, "settings": RULE_SETTINGS}


class PrecisionExplorer(Explorer):
    """Chapter 06: the angle error of each pair when p * omega is computed in low precision."""

    kind = "precision"
    alt = (
        "Phase error of every pair's angle at the chosen position when computed in float32, "
        "float16 and bfloat16, on a log scale, with the formats in which p and p+1 collide named"
    )
    SLIDERS = {  # the constructor takes the position's exponent, which is what its slider moves
        "position": _Slider("position p", 0, 7.2, 0.05, default=3.0, log=True, digits=0, exponent="log_position"),
        "base": _Slider("base", 2, 6, 0.1, default=10000.0, log=True),
        "d_model": _Slider("d_model", 8, 256, 8, default=64),
    }

    def constants(self):
        return {"formats": _low_precision_formats()}


class AttentionExplorer(Explorer):
    """What a position scheme does to one query's attention over a 12-word sentence (causal: keys 0 ... query).

    The scheme slider picks none, sinusoidal, learned, RoPE, ALiBi or T5 (:data:`ATTENTION_SCHEMES`);
    the panels show the query's scores, its softmax weights, and how the weights differ from those without
    positions (``attention_data`` computes the same numbers)::

        from posenc_course.explorers import AttentionExplorer
        AttentionExplorer(scheme="alibi", query=11)
    """

    kind = "attention"
    alt = (
        "For one query word of a 12-word sentence, its attention scores over the keys up to it, its softmax "
        "weights, and how the weights differ from attention without positions, for the chosen position scheme"
    )
    # the scheme last: the book's slider check moves each slider from the defaults, and base only acts on RoPE
    # and the sinusoidal encoding, the default scheme being RoPE
    SLIDERS = {
        "query": _Slider("query position", 0, len(SENTENCE) - 1, default=10),
        "base": _Slider("base", 1, 6, 0.1, default=10000.0, log=True),
        "d": _Slider("head width d", 2, 64, 2, default=16),
        "scheme": _Slider(
            "scheme",
            0,
            len(ATTENTION_SCHEMES) - 1,
            default="rope",
            names=("none", "sinusoidal", "learned", "RoPE", "ALiBi", "T5"),
            keys=ATTENTION_SCHEMES,
        ),
    }

    def constants(self):
        return {
            "schemes": list(ATTENTION_SCHEMES),
            "sentence": list(SENTENCE),
            "alibi_slope": float(posenc.alibi_slopes(ALIBI_HEADS)[ALIBI_HEAD]),
            "t5_buckets": dict(T5_BUCKETS),
            "tie": TIE,
            "learned_scale": LEARNED_SCALE,
            "t5_scale": T5_SCALE,
        }
