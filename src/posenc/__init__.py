"""The one place where the course's positional-encoding math lives.

Notation (used in every chapter):

* ``p``        a position (any real number; usually 0, 1, 2, ...)
* ``d_model``  the width ``d`` of the encoding vector
* ``i``        the index of a sin/cos *pair*, ``i = 0 ... ceil(d/2) - 1``
* ``omega_i``  the angular frequency of pair ``i``: ``base ** (-2 i / d)``
* ``lambda_i`` its wavelength in positions: ``2 pi / omega_i``

The sinusoidal encoding of the original Transformer is::

    PE(p, 2i)   = sin(p * omega_i)
    PE(p, 2i+1) = cos(p * omega_i)

That is the ``"interleaved"`` layout. The ``"concatenated"`` layout (the
ordering of tensor2tensor, fairseq and many diffusion models, which also
divide the exponent by ``h - 1``: see chapter 06) stores the ``ceil(d/2)``
sines first and then the ``floor(d/2)`` cosines. For odd ``d`` the last pair
has only its sine.

Accuracy. The textbook recipe computes ``p * omega`` in float32, so the angle
itself is wrong by about ``|p * omega| * 6e-8`` radians before the sine is
taken (3e-2 at ``p = 10**6``). Here nothing is wider than float64, so the
numbers are the same on every IEEE-754 machine (numpy's extended type is
plain float64 on Windows and macOS arm64; the course never uses it):

* the constants are exact float64 splits, derived once per ``(d_model, base)``
  with mpmath: the turns per position ``omega_i / (2 pi) = hi + lo``, with
  ``hi`` a multiple of ``2**-29`` (so ``k * hi`` is exact for integers
  ``|k| < 2**26``) and ``lo`` the small rest;
* an angle is reduced in turns, exactly: for ``p = k + e`` the fractional part
  of ``k * hi`` is exact, the rest ``k * lo + e * (hi + lo)`` is small, and
  only the reduced angle (``|t| <= 1/2`` turn) is multiplied by ``2 pi`` and
  given to float64 ``sin`` and ``cos`` (error about 2e-16);
* a table of integer positions ``p = 64 q + r`` needs that only for the rows
  ``64 q`` and ``r < 64``; every entry is then assembled with the
  angle-addition rule (the rotation property of chapter 04)::

    sin(a + b) = sin a cos b + cos a sin b,   cos(a + b) = cos a cos b - sin a sin b

  in float64 (4 multiplications and 2 additions per pair) and rounded once
  to the requested dtype. Fractional positions take the reduction directly.

At every ``|p| < 2**24`` float32 results are within 2e-7 of the exact value
(in fact within 3.0e-8, half a float32 spacing) and float64 results within 1e-9
(in fact below 1e-15). The split of ``p``, the path a row takes and every
operation on it depend on ``p`` alone (one IEEE operation per numpy call, no
fused multiply-add), so row ``p`` of a table is bitwise the same in every
table (and in the module whatever it was asked before).

torch.compile and torch.jit.trace. Compiled and traced code takes a
pure-torch path (``_engine.sin_cos_torch``): the same constants and the same
reduction in turns, then torch's float64 sin and cos (no angle addition). It
has the same accuracy and agrees with the numpy path to about 1e-16.

Where things are. ``posenc`` is a package so that this file holds the math
alone: every public function, its formula and what it accepts. Two private
modules beside it keep the rest out of the reader's way:

* ``_engine``: how the tables are evaluated as described above (the exact
  constants, angle addition, the threads of a large table, the torch path and
  its custom op), explained step by step in the book's Appendix A;
* ``_checks``: the specs of the arguments that recur (``D_MODEL``, ``BASE``,
  ``LAYOUT``, ...) and the checks that one declaration cannot state.

A bad argument gets the course's one-line ``ArgumentError`` (from
``posenc_course.arguments``, also a ``ValueError`` and a ``TypeError``) naming
the function, the argument and what is allowed, e.g.
``sinusoidal: d_model must be an integer >= 1, not 'x'.``

A package, rather than private modules next to a ``posenc.py``, because the
grader runs a private copy of it (``grading/reference.py``): executed again
under another name, the package's relative imports give the copy its own
engine and checks, out of a notebook's reach, and nothing but ``posenc`` is
added to the installed top level.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from posenc_course.arguments import Anything, ArgumentError, Array, Bool, Int, Items, Maybe, OneOf, Real, accepts

from . import _checks, _engine
from ._checks import (
    BASE,
    BIAS_TABLE,
    COUNT,
    D_MODEL,
    DTYPE,
    DTYPES as DTYPES,  # the dtypes and layouts the functions accept
    INV_FREQ,
    LAYOUT,
    LAYOUTS as LAYOUTS,
    LENGTH_OR_NONE,
    MATRIX,
    POSITIONS,
    ROPE_INPUT,
    ROPE_POSITIONS,
    T5_SETTINGS,
    refuse,
)

__all__ = [
    "frequencies",
    "wavelengths",
    "sinusoidal",
    "layout_permutation",
    "pair_regimes",
    "rotation",
    "SinusoidalPositionalEncoding",
    "LearnedPositionalEmbedding",
    "apply_rope",
    "apply_rope_complex",
    "apply_rope_axes",
    "ROPE_TYPES",
    "rope_parameters",
    "rotary_dim",
    "yarn_ramp",
    "axial_frequencies",
    "resize_grid",
    "alibi_slopes",
    "alibi_bias",
    "t5_relative_position_bucket",
    "t5_bias",
    "shaw_relative_positions",
    "attention_weights",
    "self_attention",
]


# --------------------------------------------------------------------------
# Frequencies and wavelengths: omega_i = base ** (-2 i / d), lambda_i = 2 pi / omega_i
# --------------------------------------------------------------------------


@accepts(d_model=D_MODEL, base=BASE)
def frequencies(d_model, base=10000.0) -> np.ndarray:
    """Angular frequencies ``omega_i = base ** (-2 i / d_model)``.

    Returns a float64 array of length ``ceil(d_model / 2)``, one value per
    sin/cos pair ``i = 0 ... ceil(d_model/2) - 1``, from 1 down to
    ``base ** (-(2 * (ceil(d/2) - 1)) / d)`` (never as low as ``1 / base``),
    each correctly rounded.
    """
    return np.array(_engine.constants(int(d_model), float(base))[0], dtype=np.float64)


@accepts(d_model=D_MODEL, base=BASE)
def wavelengths(d_model, base=10000.0) -> np.ndarray:
    """Wavelengths ``lambda_i = 2 pi / omega_i`` in positions (float64, correctly rounded)."""
    return np.array(_engine.constants(int(d_model), float(base))[1], dtype=np.float64)


@accepts(d_model=D_MODEL, length=COUNT, base=BASE, threshold=Real(above=0, below=2, what="a chord length in (0, 2)"))
def pair_regimes(d_model, length, base=10000.0, *, threshold=0.1) -> dict:
    """Which pairs are fast, slow or wrapping over a sequence of ``length`` positions.

    Pair ``i`` moves around its unit circle by the angle ``omega_i`` per step;
    a shift by ``k`` moves it along a chord of length ``2 |sin(k omega_i / 2)|``.
    Returns boolean masks over the pairs:

    * ``"fine"``: one step moves it by at least ``threshold`` on its circle,
      ``2 sin(omega_i / 2) >= threshold``: it separates neighbouring positions;
    * ``"constant"``: its whole phase advance over the sequence is below
      ``threshold`` radians, ``length * omega_i < threshold``: nearly constant;
    * ``"wraps"``: its wavelength is at most ``length``, so it repeats inside it.
    """
    omega = frequencies(d_model, base)
    return {
        "fine": 2 * np.sin(np.minimum(omega, np.pi) / 2) >= threshold,
        "constant": length * omega < threshold,
        "wraps": wavelengths(d_model, base) <= length,
    }


# --------------------------------------------------------------------------
# The sinusoidal table, PE(p, 2i) = sin(p omega_i), PE(p, 2i+1) = cos(p omega_i),
# and the rotation that shifts it
# --------------------------------------------------------------------------


@accepts(positions=POSITIONS, d_model=D_MODEL, base=BASE, layout=LAYOUT, dtype=DTYPE)
def sinusoidal(positions, d_model, base=10000.0, *, layout="interleaved", dtype=np.float64):
    """The sinusoidal positional-encoding table.

    ``positions`` is an int ``n`` (meaning positions ``0 ... n-1``) or a 1-D
    array-like of positions (ints or floats, any sign, fractional allowed).
    Returns an array of shape ``(n_positions, d_model)`` and dtype ``dtype``
    (float16, float32 or float64) with, in the interleaved layout,
    ``out[:, 2i] = sin(p * omega_i)`` and ``out[:, 2i+1] = cos(p * omega_i)``.
    In the concatenated layout the ``ceil(d/2)`` sine columns come first.

    Accuracy: within 2e-7 of the exact value in float32 and 1e-9 in float64
    for every ``|p| < 2**24`` (float16 is exact up to its own rounding).
    Row ``p`` depends only on ``(p, d_model, base, layout, dtype)``: it is
    bitwise the same whatever other positions are in ``positions``.
    """
    return _engine.table(_checks.positions(positions), int(d_model), float(base), layout, np.dtype(dtype))


@accepts(positions=POSITIONS, d_model=D_MODEL, base=BASE, digits=Int(1))
def exact_angles(positions, d_model, base=10000.0, *, digits=40) -> np.ndarray:
    """``p * omega_i`` with ``digits`` significant digits (mpmath), shape (n, pairs), dtype object.

    The reference the chapters and tests measure every fast path against; it
    needs no extended-precision hardware, so it is the same on every machine.
    Slow (pure Python): meant for a few hundred rows.
    """
    import mpmath

    pos, d_model, base = _checks.positions(positions), int(d_model), float(base)
    with mpmath.workdps(digits):
        omega = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model) for i in range((d_model + 1) // 2)]
        return np.array([[mpmath.mpf(float(p)) * w for w in omega] for p in pos], dtype=object)


@accepts(positions=POSITIONS, d_model=D_MODEL, base=BASE, layout=LAYOUT, digits=Int(1))
def exact_sinusoidal(positions, d_model, base=10000.0, *, layout="interleaved", digits=40) -> np.ndarray:
    """``sinusoidal`` with ``digits`` significant digits: mpmath numbers, shape (n, d_model), dtype object.

    ``.astype(float)`` gives the correctly rounded float64 table.
    """
    import mpmath

    angles = exact_angles(positions, d_model, base, digits=digits)
    with mpmath.workdps(digits):
        sin = np.vectorize(mpmath.sin, otypes=[object])(angles) if angles.size else angles
        cos = np.vectorize(mpmath.cos, otypes=[object])(angles) if angles.size else angles
    return _engine.arrange(sin, cos, int(d_model), layout)


@accepts(d_model=D_MODEL)
def layout_permutation(d_model) -> np.ndarray:
    """Channel indices ``perm`` with ``concatenated = interleaved[:, perm]``.

    The two layouts hold the same numbers in a different channel order; the
    inverse permutation is ``np.argsort(perm)``.
    """
    h = (d_model + 1) // 2
    return np.concatenate([2 * np.arange(h), 2 * np.arange(d_model - h) + 1])


@accepts(k=Real(what="a finite real offset"), d_model=D_MODEL, base=BASE, layout=LAYOUT)
def rotation(k, d_model, base=10000.0, *, layout="interleaved") -> np.ndarray:
    """The matrix ``T(k)`` with ``PE(p + k) = T(k) @ PE(p)`` for every ``p``.

    In the interleaved layout ``T(k)`` is block diagonal: pair ``i`` is
    rotated by the angle ``k * omega_i``::

        [sin(a+b)]   [ cos b   sin b] [sin a]
        [cos(a+b)] = [-sin b   cos b] [cos a]     with b = k * omega_i

    An odd ``d_model`` raises ``ValueError``: its last channel is a lone sine,
    and ``sin(a + b)`` is not a linear function of ``sin a`` alone.
    """
    if d_model % 2:
        refuse(
            "d_model",
            message=f"needs an even d_model, not {d_model}: the last channel of an odd-width encoding is a sine "
            "without its cosine partner, and sin(a + b) cannot be written as a fixed multiple of sin(a).",
        )
    s, c = (x[0] for x in _engine.sin_cos([k], int(d_model), float(base)))
    t = np.zeros((d_model, d_model))
    idx = np.arange(0, d_model, 2)
    t[idx, idx] = c
    t[idx, idx + 1] = s
    t[idx + 1, idx] = -s
    t[idx + 1, idx + 1] = c
    if layout == "concatenated":
        perm = layout_permutation(d_model)
        t = t[np.ix_(perm, perm)]
    return t


# --------------------------------------------------------------------------
# torch modules
# --------------------------------------------------------------------------


@accepts(d_model=D_MODEL, base=BASE, layout=LAYOUT, dropout=Real(0, below=1, what="a probability in [0, 1)"))
class SinusoidalPositionalEncoding(nn.Module):
    """``x -> dropout(x + PE[:seq])`` for inputs of shape (batch, seq, d_model).

    There is no length limit: the table is computed on first use and grown
    (doubling) when a longer input arrives. It is a non-persistent buffer,
    never a parameter, so optimisers, weight initialisation and checkpoints
    leave it alone. The result has ``x``'s dtype and device; float64 inputs
    get a float64 table, all others a float32 table cast to their dtype.
    Output for a given ``seq`` never depends on earlier calls.

    Works under ``torch.compile(..., fullgraph=True)`` (any backend, any
    ``seq``, growing or not) and ``torch.jit.trace`` (a trace keeps the
    dtype it was traced with, as traces do, and works for every ``seq``):
    there the table is computed in the graph (see ``table``).
    """

    def __init__(self, d_model, base=10000.0, *, layout="interleaved", dropout=0.0):
        super().__init__()
        self.d_model, self.base, self.layout = int(d_model), float(base), layout
        self.dropout = nn.Dropout(float(dropout))
        self.register_buffer("pe", torch.zeros(0, self.d_model), persistent=False)

    def table(self, seq: int, dtype=torch.float32, device=None) -> torch.Tensor:
        """The first ``seq`` rows of the encoding, shape (seq, d_model).

        Float64 for ``dtype=torch.float64``, float32 otherwise. Eagerly the
        rows come from ``sinusoidal`` and are cached in the buffer ``pe``
        (grown by doubling; row ``p`` is bitwise the same whatever was asked
        before). Under ``torch.compile`` or ``torch.jit.trace`` they are
        computed in the graph by the torch path instead, on ``device``
        (default: the buffer's), for any ``seq``, without numpy and without
        touching the buffer; they agree with the cached rows to the
        documented accuracy (in practice to the last bit, or one float32 ulp).
        """
        want = torch.float64 if dtype == torch.float64 else torch.float32
        if torch.compiler.is_compiling() or torch.jit.is_tracing():
            device = self.pe.device if device is None else device
            return _engine.table_torch(seq, self.d_model, self.base, self.layout, device).to(want)
        if self.pe.shape[0] < seq or self.pe.dtype != want:
            length = seq if self.pe.shape[0] == 0 else max(seq, 2 * self.pe.shape[0])
            np_dtype = np.float64 if want == torch.float64 else np.float32
            fresh = sinusoidal(length, self.d_model, self.base, layout=self.layout, dtype=np_dtype)
            self.pe = torch.from_numpy(fresh).to(self.pe.device)
        return self.pe[:seq]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _checks.module_input(x, self.d_model, type(self).__name__)
        pe = self.table(x.shape[1], x.dtype, x.device).to(device=x.device, dtype=x.dtype)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, base={self.base:g}, layout={self.layout!r}"


@accepts(max_len=COUNT, d_model=D_MODEL)
class LearnedPositionalEmbedding(nn.Module):
    """``x -> x + E[:seq]`` with a trainable table ``E`` of shape (max_len, d_model).

    Initialised like GPT-2 and BERT (normal, std 0.02). A sequence longer than
    ``max_len`` has no rows to look up and raises ``ValueError``.
    """

    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len, self.d_model = int(max_len), int(d_model)
        self.embedding = nn.Embedding(self.max_len, self.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _checks.module_input(x, self.d_model, type(self).__name__)
        seq = x.shape[1]
        if seq > self.max_len:
            refuse(
                "x",
                message=f"x has sequence length {seq}, which exceeds max_len={self.max_len}: a learned table has "
                f"no embedding for positions {self.max_len} and beyond.",
                function=type(self).__name__,
            )
        return x + self.embedding.weight[:seq].to(x.dtype)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"


# --------------------------------------------------------------------------
# Rotary embeddings (RoPE): pair i of a query or key turned by the angle p * omega_i
# --------------------------------------------------------------------------


@accepts(
    x=ROPE_INPUT,
    positions=ROPE_POSITIONS,
    base=BASE,
    layout=LAYOUT,
    inv_freq=INV_FREQ,
    rotary_dim=Maybe(Int(2, even=True)),
    attention_factor=Real(above=0),
)
def apply_rope(
    x, positions=None, base=10000.0, *, layout="interleaved", inv_freq=None, rotary_dim=None, attention_factor=1.0
):
    """Rotate each (x_a, x_b) pair of ``x`` by the angle ``p * omega_i`` (RoPE).

    ``x`` is a numpy array or torch tensor of shape (..., seq, d) with even
    ``d``; ``positions`` (default ``0 ... seq-1``) gives each row's position.
    Pair ``i`` is channels (2i, 2i+1) in the ``"interleaved"`` layout (the
    RoFormer paper, GPT-J) and channels (i, i + d/2) in the
    ``"concatenated"`` layout (GPT-NeoX, LLaMA's ``rotate_half``)::

        x_a' = x_a cos(p w_i) - x_b sin(p w_i)
        x_b' = x_a sin(p w_i) + x_b cos(p w_i)

    This is chapter 04's rotation applied to queries and keys, so that
    ``apply_rope(q, p) . apply_rope(k, s)`` depends on ``p - s`` only. The
    angles are as accurate as in ``sinusoidal``. Returns the same type,
    dtype and device as ``x``. Torch tensors take the pure-torch path, so
    ``torch.compile(fullgraph=True)`` and ``torch.jit.trace`` work (under
    torch.compile ``positions`` may be None or a 1-D tensor, whose values are
    then not checked for NaN).

    As models configure it (chapter 10), three keywords:

    * ``rotary_dim`` (even, ``2 <= rotary_dim <= d``, default ``d``): only the
      first ``rotary_dim`` channels rotate (``partial_rotary_factor``, GPT-NeoX's
      ``rotary_pct``); the layout applies inside them (pair ``i`` is channels
      ``(i, i + rotary_dim/2)`` when concatenated) and the other channels pass
      through unchanged;
    * ``inv_freq``: the frequency of each rotated pair, e.g. from
      ``rope_parameters`` (then ``base`` is not used, and ``rotary_dim``
      defaults to ``2 * len(inv_freq)``); the angles ``p * inv_freq`` are then
      formed directly in float64 (error about ``|p * w| * 1.1e-16`` radians);
    * ``attention_factor`` (> 0): multiplies the rotated channels, as the
      library multiplies cos and sin (YaRN's temperature: the score of two
      rotated channels grows by its square).
    """
    base = float(base)
    plain = inv_freq is None and rotary_dim is None and attention_factor == 1.0
    x, is_torch, seq, d = _checks.rope_input(x)
    if plain:
        _checks.even_width(d, "RoPE rotates channel pairs")
    else:
        r, inv = _checks.rope_keywords(d, inv_freq, rotary_dim)
        pos, scale = _checks.rope_positions(positions, seq), float(attention_factor)
        if inv is None:  # the default frequencies of the rotated width: the accurate table
            table = sinusoidal(pos, r, base)
            sin, cos = table[:, 0::2], table[:, 1::2]
        else:
            angle = pos.astype(np.float64)[:, None] * inv[None, :]
            sin, cos = np.sin(angle), np.cos(angle)
        return _rotate_channels(x, sin * scale, cos * scale, layout, r)
    if is_torch:
        if positions is None:
            pos = torch.arange(seq, dtype=torch.float64, device=x.device)
        elif isinstance(positions, torch.Tensor) and torch.compiler.is_compiling():
            pos = positions  # checked for shape below; values are not inspected in a graph
            if pos.dim() != 1:
                refuse("positions", message=f"positions must be a 1-D tensor, not shape {tuple(pos.shape)}.")
        else:
            pos = torch.from_numpy(_checks.positions(positions).astype(np.float64)).to(x.device)
        if pos.shape[0] != seq:
            refuse("positions", message=f"positions has {pos.shape[0]} entries but x has seq={seq} rows: one per row.")
        sin, cos = (t.to(x.dtype) for t in _engine.sin_cos_torch(pos, d, base))
        cat = torch.cat
    else:
        pos = _checks.rope_positions(positions, seq)
        table = sinusoidal(pos, d, base, dtype=np.float64 if x.dtype == np.float64 else np.float32)
        sin, cos = table[:, 0::2].astype(x.dtype), table[:, 1::2].astype(x.dtype)
        cat = np.concatenate
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2 :]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    if layout == "concatenated":
        return cat([ra, rb], -1)
    stacked = torch.stack([ra, rb], -1) if is_torch else np.stack([ra, rb], -1)
    return stacked.reshape(x.shape)


@accepts(x=ROPE_INPUT, positions=ROPE_POSITIONS, base=BASE, layout=LAYOUT)
def apply_rope_complex(x, positions=None, base=10000.0, *, layout="interleaved"):
    """RoPE in complex numbers, as Meta's LLaMA reference code and EleutherAI's rotary post write it.

    Read each rotated pair as one complex number ``z = x_a + i x_b``. Turning
    the pair by the angle ``t = p * w_i`` is then a single multiplication by
    ``e^{i t} = cos t + i sin t``::

        (x_a + i x_b)(cos t + i sin t) = (x_a cos t - x_b sin t) + i (x_a sin t + x_b cos t)

    whose real and imaginary parts are ``apply_rope``'s two lines. This
    function does exactly that: it views the pairs of ``x`` as complex numbers
    (``torch.view_as_complex``), multiplies them by a table of unit complex
    numbers ``e^{i p w_i}`` (LLaMA's ``freqs_cis``, shape (seq, d/2)) and reads
    the pairs back (``torch.view_as_real``). The unit numbers are built from
    the accurate sines and cosines of ``sinusoidal``, not from ``p * w_i``
    rounded and handed to a complex exponential, so the result equals
    ``apply_rope(x, positions, base, layout=layout)`` to rounding.

    Arguments as in ``apply_rope``: ``x`` a numpy array or torch tensor of
    shape (..., seq, d) with even ``d``; ``positions`` (default ``0 ... seq-1``);
    pair ``i`` is channels (2i, 2i+1) when ``"interleaved"`` (Meta's LLaMA
    code) and (i, i + d/2) when ``"concatenated"``. Returns the same type,
    dtype and device as ``x``. float64 inputs are multiplied in complex128,
    float32 in complex64; float16 and bfloat16 inputs are computed in float32
    (complex64) and the result is rounded to their dtype once, because torch
    supports complex numbers of half precision in few operations.
    """
    x, is_torch, seq, d = _checks.rope_input(x)
    _checks.even_width(d, "each pair is one complex number")
    table = sinusoidal(_checks.rope_positions(positions, seq), d, base)
    h = d // 2
    t = x if is_torch else torch.from_numpy(np.ascontiguousarray(x))
    work = torch.float64 if t.dtype == torch.float64 else torch.float32  # half types: complex32 is barely supported
    t = t.to(work)
    freqs_cis = torch.complex(torch.from_numpy(table[:, 1::2]), torch.from_numpy(table[:, 0::2]))  # cos + i sin
    freqs_cis = freqs_cis.to(device=t.device, dtype=torch.complex128 if work == torch.float64 else torch.complex64)
    if layout == "interleaved":
        pairs = t.reshape(*t.shape[:-1], h, 2)
    else:
        pairs = torch.stack([t[..., :h], t[..., h:]], -1)
    turned = torch.view_as_real(torch.view_as_complex(pairs.contiguous()) * freqs_cis)
    if layout == "interleaved":
        out = turned.flatten(-2)
    else:
        out = torch.cat([turned[..., 0], turned[..., 1]], -1)
    if is_torch:
        return out.to(x.dtype)
    return out.numpy().astype(x.dtype, copy=False)


def _rotate_channels(x, sin, cos, layout: str, r: int):
    """Rotate the first ``r`` channels of ``x`` by the angles whose sin and cos (seq, r/2, float64) are given."""
    h = r // 2
    if isinstance(x, torch.Tensor):
        sin = torch.from_numpy(np.ascontiguousarray(sin)).to(device=x.device, dtype=x.dtype)
        cos = torch.from_numpy(np.ascontiguousarray(cos)).to(device=x.device, dtype=x.dtype)
        cat, stack = torch.cat, torch.stack
    else:
        sin, cos = sin.astype(x.dtype), cos.astype(x.dtype)
        cat, stack = np.concatenate, np.stack
    rot, rest = x[..., :r], x[..., r:]
    if layout == "interleaved":
        a, b = rot[..., 0::2], rot[..., 1::2]
    else:
        a, b = rot[..., :h], rot[..., h:]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    if layout == "concatenated":
        rotated = cat([ra, rb], -1)
    else:
        rotated = stack([ra, rb], -1).reshape(rot.shape)
    return cat([rotated, rest], -1) if r < x.shape[-1] else rotated


@accepts(
    x=ROPE_INPUT,
    positions=Array(2, what="a real array of shape (seq, n_axes)"),
    sections=Items(Int(1), min_len=1, what="a list of positive integers (pairs per axis)"),
    base=BASE,
    inv_freq=INV_FREQ,
    layout=LAYOUT,
    attention_factor=Real(above=0),
)
def apply_rope_axes(
    x, positions, sections, base=10000.0, *, inv_freq=None, layout="concatenated", attention_factor=1.0
):
    """RoPE over several position axes (2-D image patches, multimodal RoPE's time, height, width).

    ``positions`` has shape (seq, n_axes): row ``j`` is token ``j``'s position
    along each axis. ``sections`` (n_axes positive integers, summing to the
    number of rotated pairs) splits the pairs between the axes in order: the
    first ``sections[0]`` pairs turn with axis 0, the next ``sections[1]``
    with axis 1, and so on (``mrope_section`` of Qwen2-VL). Pair ``i`` of the
    ``inv_freq`` ladder (default ``frequencies(d, base)``) is rotated by
    ``positions[:, axis(i)] * inv_freq[i]``. For axial 2-D RoPE, where each
    axis has its own full ladder, pass ``inv_freq=axial_frequencies(d, 2, base)``.
    Rotated channels are the first ``2 * sum(sections)``; the layout and
    ``attention_factor`` are as in ``apply_rope``.
    """
    x, is_torch, seq, d = _checks.rope_input(x)
    sections = [int(s) for s in sections]
    pairs = sum(sections)
    if inv_freq is None:
        if 2 * pairs > d:
            refuse("sections", message=f"sections add up to {pairs} pairs, more than the d / 2 = {d // 2} pairs of x.")
        inv = frequencies(2 * pairs, base)
    else:
        inv = _checks.inv_freq(inv_freq)
        if inv.shape[0] != pairs:
            refuse("inv_freq", message=f"inv_freq has {inv.shape[0]} entries but sections add up to {pairs} pairs.")
    r, inv = _checks.rope_keywords(d, inv, 2 * pairs)
    scale = float(attention_factor)
    pos = _checks.matrix("positions", positions)
    if pos.shape != (seq, len(sections)):
        refuse("positions", f"a real array of shape (seq, n_axes) = ({seq}, {len(sections)})", positions)
    _checks.finite("positions", pos)
    axis = np.repeat(np.arange(len(sections)), sections)
    angle = pos.astype(np.float64)[:, axis] * inv[None, :]
    return _rotate_channels(x, np.sin(angle) * scale, np.cos(angle) * scale, layout, r)


@accepts(head_dim=D_MODEL, n_axes=COUNT, base=BASE)
def axial_frequencies(head_dim, n_axes=2, base=10000.0) -> np.ndarray:
    """Axial RoPE's frequencies: each of ``n_axes`` axes gets the full ladder of ``head_dim / n_axes`` channels.

    Returns ``n_axes`` copies of ``frequencies(head_dim // n_axes, base)``, one
    after the other (for ``apply_rope_axes`` with ``sections = [head_dim // (2 n_axes)] * n_axes``);
    ``head_dim`` must be a multiple of ``2 * n_axes``.
    """
    if head_dim % (2 * n_axes):
        refuse("head_dim", f"a multiple of 2 * n_axes = {2 * n_axes}", head_dim)
    return np.tile(frequencies(head_dim // n_axes, base), n_axes)


# --------------------------------------------------------------------------
# A learned table of 2-D positions at another grid size (chapter 13)
# --------------------------------------------------------------------------


def _cubic(t, a=-0.75):
    """Keys' cubic convolution kernel with a = -0.75, the one PyTorch's and OpenCV's bicubic use."""
    t = np.abs(t)
    near = (a + 2) * t**3 - (a + 3) * t**2 + 1
    far = a * t**3 - 5 * a * t**2 + 8 * a * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _resize_matrix(n_old: int, n_new: int) -> np.ndarray:
    """(n_new, n_old) weights of bicubic resampling along one axis: pixel centres aligned
    (``align_corners=False``), reads beyond the border clamped to the border."""
    x = (np.arange(n_new) + 0.5) * (n_old / n_new) - 0.5  # where each new row falls among the old ones
    start = np.floor(x).astype(np.int64)
    weights = np.zeros((n_new, n_old))
    for offset in (-1, 0, 1, 2):
        j = start + offset
        np.add.at(weights, (np.arange(n_new), np.clip(j, 0, n_old - 1)), _cubic(x - j))
    return weights


@accepts(grid=Array(3, what="a numeric array of shape (h, w, d)"), height=COUNT, width=COUNT)
def resize_grid(grid, height, width) -> np.ndarray:
    """A learned table of 2-D positions, ``grid`` of shape ``(h, w, d)``, resampled to ``(height, width, d)``.

    Each channel is treated as an ``h x w`` image and resized bicubically with
    pixel centres aligned, as ViT-style models do to run at a new resolution
    (``torch.nn.functional.interpolate(..., mode="bicubic", align_corners=False)``):
    rows and columns are resampled separately, ``R_h @ grid @ R_w.T`` per channel.
    The same size returns the grid unchanged. float64.
    """
    grid = np.asarray(grid)
    _checks.finite("grid", grid)
    rows, cols = _resize_matrix(grid.shape[0], int(height)), _resize_matrix(grid.shape[1], int(width))
    return np.einsum("ij,jkd,lk->ild", rows, grid.astype(np.float64), cols)


# --------------------------------------------------------------------------
# RoPE as models configure it: the scaling rules (chapter 10)
# --------------------------------------------------------------------------
# Each rule maps a config's numbers to the frequency of every rotated pair and to an attention factor that
# multiplies cos and sin. Derived from the papers (position interpolation, NTK-aware and dynamic NTK,
# YaRN, LongRoPE, Llama 3, p-RoPE); tests/test_posenc_rope_scaling.py checks every rule against Hugging Face
# transformers' ROPE_INIT_FUNCTIONS. Frequencies are float64, the ladder itself correctly rounded.

# the keyword arguments each rope_type reads (anything else is an error, not silently ignored)
_ROPE_KEYS = {
    "default": {"partial_rotary_factor"},
    "linear": {"partial_rotary_factor", "factor"},
    "dynamic": {"partial_rotary_factor", "factor", "max_position_embeddings", "seq_len"},
    "yarn": {
        "partial_rotary_factor",
        "factor",
        "max_position_embeddings",
        "original_max_position_embeddings",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "truncate",
        "attention_factor",
    },
    "longrope": {
        "partial_rotary_factor",
        "factor",
        "max_position_embeddings",
        "original_max_position_embeddings",
        "short_factor",
        "long_factor",
        "seq_len",
        "attention_factor",
    },
    "llama3": {
        "partial_rotary_factor",
        "factor",
        "original_max_position_embeddings",
        "low_freq_factor",
        "high_freq_factor",
    },
    "proportional": {"partial_rotary_factor", "factor"},
}


PARTIAL_ROTARY_FACTOR = Real(above=0, hi=1, what="a number in (0, 1]")


@accepts(head_dim=D_MODEL, partial_rotary_factor=PARTIAL_ROTARY_FACTOR)
def rotary_dim(head_dim, partial_rotary_factor=1.0) -> int:
    """How many channels of a head rotate: ``int(head_dim * partial_rotary_factor)``, which must be even.

    ``partial_rotary_factor`` is in (0, 1] (GPT-NeoX's ``rotary_pct``); the
    product is rounded down, as the library does, and must be an even number >= 2.
    """
    r = int(head_dim * partial_rotary_factor)
    if r < 2 or r % 2:
        refuse(
            "partial_rotary_factor",
            message=f"head_dim * partial_rotary_factor = {head_dim} * {partial_rotary_factor} rounds down to "
            f"{r} channels: RoPE rotates pairs, so it must be an even number >= 2.",
        )
    return r


@accepts(
    head_dim=D_MODEL,
    base=BASE,
    original_max_position_embeddings=COUNT,
    beta_fast=Real(above=0),
    beta_slow=Real(above=0),
    truncate=Bool(),
    partial_rotary_factor=PARTIAL_ROTARY_FACTOR,
)
def yarn_ramp(
    head_dim,
    base,
    original_max_position_embeddings,
    *,
    beta_fast=32.0,
    beta_slow=1.0,
    truncate=True,
    partial_rotary_factor=1.0,
) -> np.ndarray:
    """YaRN's ramp over the pairs: 0 where a pair keeps its frequency, 1 where it is fully interpolated.

    Pair ``i`` of a ``dim``-channel rotation turns ``L / lambda_i`` times over
    the trained length ``L``; solving ``L / lambda_i = beta`` for ``i`` gives
    the (fractional) pair ``dim * ln(L / (2 pi beta)) / (2 ln base)``. The
    ramp rises linearly from 0 at the pair where ``beta_fast`` turns fit
    (faster pairs: unchanged) to 1 at the pair where ``beta_slow`` turns fit
    (slower pairs: interpolated). With ``truncate`` the two ends are rounded
    outwards to whole pairs; they are clipped to ``[0, dim - 1]`` (as the
    library does; the ramp value itself lies in [0, 1]).
    """
    dim = rotary_dim(head_dim, partial_rotary_factor)
    beta_fast, beta_slow = float(beta_fast), float(beta_slow)
    if not beta_fast > beta_slow:
        refuse(
            "beta_fast",
            message=f"beta_fast must be greater than beta_slow (turns over the trained length: the fast "
            f"end of the ramp turns more), not beta_fast={beta_fast:g}, beta_slow={beta_slow:g}.",
        )
    length = int(original_max_position_embeddings)
    low, high = _yarn_ramp_ends(dim, float(base), length, beta_fast, beta_slow, truncate)
    return np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def _yarn_ramp_ends(dim: int, base: float, length: int, beta_fast: float, beta_slow: float, truncate: bool):
    """The (fractional) pairs where ``yarn_ramp`` leaves 0 and reaches 1, for checked arguments."""

    def pair_at(turns):
        return dim * math.log(length / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = pair_at(beta_fast), pair_at(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001  # a step, not a division by zero (the library's choice)
    return low, high


def _yarn_mscale(factor, m=1.0):
    """YaRN's attention temperature: sqrt(1/t) = 0.1 m ln(s) + 1 for s > 1 (1 otherwise)."""
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def _rope_ladder(head_dim: int, base: float, get):
    """``(dim, w)``: how many channels rotate, and the default ladder ``w_i = base ** (-2 i / dim)`` over them."""
    dim = rotary_dim(head_dim, get("partial_rotary_factor", 1.0))
    return dim, frequencies(dim, base)


def _rope_factor(rope_type: str, get) -> float:
    """The stretch ``s = factor`` a rule cannot do without (a number >= 1)."""
    if get("factor") is None:
        refuse("factor", message=f"rope_type {rope_type!r} needs factor (a number >= 1).")
    return _checks.positive("factor", get("factor"), at_least=1.0)


def _rope_trained_length(rope_type: str, get) -> int:
    """``original_max_position_embeddings``: the length the model was trained on."""
    if get("original_max_position_embeddings") is None:
        refuse(
            "original_max_position_embeddings",
            message=f"rope_type {rope_type!r} needs original_max_position_embeddings (the trained length).",
        )
    return _checks.positive("original_max_position_embeddings", get("original_max_position_embeddings"), integer=True)


def _rope_extension(rope_type: str, get) -> tuple:
    """``(s, L, attention_factor or None)`` for the rules that extend a trained length ``L`` (YaRN, LongRoPE).

    ``s`` is ``factor`` when given, else ``max_position_embeddings / L``.
    """
    factor = None if get("factor") is None else _checks.positive("factor", get("factor"), at_least=1.0)
    original = _rope_trained_length(rope_type, get)
    if factor is None:
        if get("max_position_embeddings") is None:
            refuse(
                "factor",
                message=f"rope_type {rope_type!r} needs factor, or max_position_embeddings to derive it "
                f"as max_position_embeddings / original_max_position_embeddings.",
            )
        factor = _checks.positive("max_position_embeddings", get("max_position_embeddings"), integer=True) / original
    given = get("attention_factor")
    return factor, original, None if given is None else _checks.positive("attention_factor", given)


def _rope_default(head_dim, base, get):
    """RoFormer: ``w_i``."""
    return _rope_ladder(head_dim, base, get)[1], 1.0


def _rope_linear(head_dim, base, get):
    """Position interpolation: ``w_i / s``, every position squeezed into the trained range."""
    _, ladder = _rope_ladder(head_dim, base, get)
    return ladder / _rope_factor("linear", get), 1.0


def _rope_dynamic(head_dim, base, get):
    """Dynamic NTK: the default ladder with ``base * (s L / L_max - (s - 1)) ** (dim / (dim - 2))`` as its base."""
    dim, _ = _rope_ladder(head_dim, base, get)
    if dim < 4:
        refuse(
            "head_dim",
            message=f"rope_type 'dynamic' needs at least 4 rotated channels (the exponent is dim / (dim - 2)), "
            f"not {dim}.",
        )
    factor = _rope_factor("dynamic", get)
    if get("max_position_embeddings") is None:
        refuse(
            "max_position_embeddings",
            message="rope_type 'dynamic' needs max_position_embeddings (the trained length).",
        )
    trained = _checks.positive("max_position_embeddings", get("max_position_embeddings"), integer=True)
    seq_len = trained if get("seq_len") is None else _checks.positive("seq_len", get("seq_len"), integer=True)
    seq_len = max(seq_len, trained)
    new_base = base * ((factor * seq_len / trained) - (factor - 1)) ** (dim / (dim - 2))
    return frequencies(dim, new_base), 1.0


def _rope_yarn(head_dim, base, get):
    """YaRN: ``w_i / s`` blended with ``w_i`` by ``yarn_ramp``; attention factor ``0.1 ln s + 1`` (or DeepSeek's)."""
    _, ladder = _rope_ladder(head_dim, base, get)
    factor, original, given = _rope_extension("yarn", get)
    mscale, mscale_all_dim = get("mscale"), get("mscale_all_dim")
    if (mscale is None) != (mscale_all_dim is None):
        refuse(
            "mscale",
            message="mscale and mscale_all_dim go together (both numbers > 0, or both None): "
            "transformers ignores one given alone.",
        )
    if given is None and mscale is not None:
        mscale = _checks.positive("mscale", mscale)
        mscale_all_dim = _checks.positive("mscale_all_dim", mscale_all_dim)
        given = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
    elif given is None:
        given = _yarn_mscale(factor)
    ramp = yarn_ramp(
        head_dim,
        base,
        original,
        beta_fast=get("beta_fast", 32.0),
        beta_slow=get("beta_slow", 1.0),
        truncate=get("truncate", True),
        partial_rotary_factor=get("partial_rotary_factor", 1.0),
    )
    keep = 1 - ramp  # the share of each pair that keeps (extrapolates) its trained frequency
    return (ladder / factor) * (1 - keep) + ladder * keep, given


def _rope_longrope(head_dim, base, get):
    """LongRoPE: ``w_i / f_i``, ``f`` the short or the long per-pair factors; attention ``sqrt(1 + ln s / ln L)``."""
    dim, ladder = _rope_ladder(head_dim, base, get)
    factor, original, given = _rope_extension("longrope", get)
    chosen = {}
    for name in ("short_factor", "long_factor"):
        value = get(name)
        if value is None:
            refuse(name, message=f"rope_type 'longrope' needs {name} (one positive number per rotated pair).")
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.shape != (dim // 2,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            refuse(name, f"a list of {dim // 2} finite numbers > 0 (one per rotated pair)", value)
        chosen[name] = arr
    seq_len = get("seq_len")
    if seq_len is not None:
        seq_len = _checks.positive("seq_len", seq_len, integer=True)
    rescale = chosen["long_factor"] if seq_len is not None and seq_len > original else chosen["short_factor"]
    if given is None:
        given = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original))
    return ladder / rescale, given


def _rope_llama3(head_dim, base, get):
    """Llama 3: slow pairs ``w_i / s``, fast pairs ``w_i``, a linear blend between (by turns over ``L``)."""
    _, ladder = _rope_ladder(head_dim, base, get)
    factor = _rope_factor("llama3", get)
    original = _rope_trained_length("llama3", get)
    for name in ("low_freq_factor", "high_freq_factor"):
        if get(name) is None:
            refuse(name, message=f"rope_type 'llama3' needs {name} (a number > 0).")
    low = _checks.positive("low_freq_factor", get("low_freq_factor"))
    high = _checks.positive("high_freq_factor", get("high_freq_factor"))
    if not high > low:
        refuse(
            "high_freq_factor",
            message=f"high_freq_factor must be greater than low_freq_factor, not {high:g} <= {low:g}.",
        )
    wavelength = 2 * math.pi / ladder
    scaled = np.where(wavelength > original / low, ladder / factor, ladder)
    blend = (original / wavelength - low) / (high - low)
    middle = ~(wavelength < original / high) & ~(wavelength > original / low)
    return np.where(middle, (1 - blend) * scaled / factor + blend * scaled, scaled), 1.0


def _rope_proportional(head_dim, base, get):
    """p-RoPE: the first pairs keep the whole head's ``base ** (-2 i / head_dim) / s``, the others never turn."""
    if head_dim % 2:
        refuse("head_dim", "an even integer for rope_type 'proportional'", head_dim)
    prf = get("partial_rotary_factor", 1.0)
    if not Real(0, 1).ok(prf):
        refuse("partial_rotary_factor", "a number in [0, 1]", prf)
    factor = _checks.positive("factor", get("factor", 1.0))
    turning = int(prf * head_dim // 2)
    inv = np.zeros(head_dim // 2)
    inv[:turning] = frequencies(head_dim, base)[:turning]
    return inv / factor, 1.0


# rope_type -> its rule: (head_dim, base, get) -> (inv_freq, attention_factor), with ``get`` the config's
# parameters' ``dict.get``. The one list of the known types: ROPE_TYPES and rope_parameters' error read it.
_ROPE_RULES = {
    "default": _rope_default,
    "linear": _rope_linear,
    "dynamic": _rope_dynamic,
    "yarn": _rope_yarn,
    "longrope": _rope_longrope,
    "llama3": _rope_llama3,
    "proportional": _rope_proportional,
}
ROPE_TYPES = tuple(_ROPE_RULES)


@accepts(head_dim=D_MODEL, base=BASE, rope_type=OneOf(*_ROPE_RULES))
def rope_parameters(head_dim, base=10000.0, rope_type="default", **params) -> tuple:
    """The inverse frequencies and attention factor a RoPE config implies: ``(inv_freq, attention_factor)``.

    ``inv_freq`` is a float64 array, one frequency (radians per position) per
    rotated pair: ``rotary_dim(head_dim, partial_rotary_factor) / 2`` of them
    (``head_dim / 2`` for ``proportional``); pass it to ``apply_rope(...,
    inv_freq=..., attention_factor=..., layout="concatenated")``. With
    ``w_i = base ** (-2 i / dim)`` the default ladder and ``s = factor``:

    * ``"default"``: ``w_i`` (RoFormer).
    * ``"linear"`` (position interpolation): ``w_i / s``; needs ``factor >= 1``.
    * ``"dynamic"`` (dynamic NTK): the default ladder with the base raised to
      ``base * (s L / L_max - (s - 1)) ** (dim / (dim - 2))``, ``L = max(seq_len,
      max_position_embeddings)`` (``seq_len`` defaults to ``max_position_embeddings``,
      where nothing changes); needs ``factor``, ``max_position_embeddings`` and ``dim >= 4``.
    * ``"yarn"``: ``w_i / s`` blended with ``w_i`` by ``yarn_ramp`` (``beta_fast``
      = 32, ``beta_slow`` = 1, ``truncate`` = True); the attention factor is
      ``attention_factor`` if given, else ``0.1 ln s + 1``, or with ``mscale``
      and ``mscale_all_dim`` (DeepSeek) ``(0.1 mscale ln s + 1) / (0.1
      mscale_all_dim ln s + 1)``. ``factor`` defaults to ``max_position_embeddings /
      original_max_position_embeddings``.
    * ``"longrope"``: ``w_i / f_i`` with the per-pair ``short_factor`` (when
      ``seq_len`` is None or ``<= original_max_position_embeddings``) or
      ``long_factor``; attention factor ``sqrt(1 + ln s / ln L_orig)`` (1 if
      ``s <= 1``) unless ``attention_factor`` is given; ``factor`` defaults to
      ``max_position_embeddings / original_max_position_embeddings``.
    * ``"llama3"``: with ``L = original_max_position_embeddings``, pairs whose
      wavelength is above ``L / low_freq_factor`` are divided by ``s``, those
      below ``L / high_freq_factor`` keep ``w_i``, and those between get
      ``(1 - g) w_i / s + g w_i`` with ``g = (L / lambda_i - low_freq_factor) /
      (high_freq_factor - low_freq_factor)``.
    * ``"proportional"`` (p-RoPE): the first ``int(partial_rotary_factor *
      head_dim // 2)`` pairs keep the full head's ``base ** (-2 i / head_dim)``
      (divided by ``factor``, default 1), the rest get frequency 0: they never
      turn. ``partial_rotary_factor`` may be 0 here (no pair turns).

    Every bad or unknown parameter raises an ArgumentError naming it and its allowed range.
    """
    unknown = set(params) - _ROPE_KEYS[rope_type]
    if unknown:
        refuse(
            sorted(unknown)[0],
            message=f"rope_type {rope_type!r} takes no parameter {sorted(unknown)}: "
            f"it reads only {sorted(_ROPE_KEYS[rope_type])}.",
        )
    try:
        return _ROPE_RULES[rope_type](int(head_dim), float(base), params.get)
    except ArgumentError as error:
        error.function = None  # a config parameter, whichever helper checked it: the learner called rope_parameters
        raise


# --------------------------------------------------------------------------
# ALiBi: a linear penalty -m_h |q - k| on head h's attention scores
# --------------------------------------------------------------------------


@accepts(n_heads=COUNT)
def alibi_slopes(n_heads) -> np.ndarray:
    """ALiBi's head slopes ``m_h``: for ``n`` a power of two, ``2 ** (-8 h / n)``, h = 1..n.

    Otherwise (as in the ALiBi reference code) the slopes of the nearest
    lower power of two ``k``, followed by every other slope of ``2k`` heads.
    """

    def power_of_two(n):
        return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)

    k = 1 << (int(n_heads).bit_length() - 1)
    if k == n_heads:
        return power_of_two(k)
    return np.concatenate([power_of_two(k), power_of_two(2 * k)[0::2][: n_heads - k]])


@accepts(n_heads=COUNT, q_len=COUNT, k_len=LENGTH_OR_NONE, causal=Bool())
def alibi_bias(n_heads, q_len, k_len=None, *, causal=True) -> np.ndarray:
    """ALiBi's attention bias, shape (n_heads, q_len, k_len).

    ``bias[h, p, s] = -m_h * (p - s)``: linear in the offset between the
    query at position ``p`` and the key at ``s``, steeper for heads with
    larger slopes. With ``causal=True`` keys after the query (``s > p``) get
    ``-inf`` (masked); with ``causal=False`` the distance is ``|p - s|``. Queries are the last
    ``q_len`` positions of the ``k_len`` keys (``k_len`` defaults to ``q_len``).
    """
    slopes = alibi_slopes(n_heads)
    k_len = q_len if k_len is None else k_len
    if q_len > k_len:
        refuse("q_len", message=f"q_len ({q_len}) cannot exceed k_len ({k_len}): queries are the last keys.")
    qi = np.arange(k_len - q_len, k_len)[:, None]
    kj = np.arange(k_len)[None, :]
    distance = (qi - kj).astype(np.float64)
    if causal:
        bias = -slopes[:, None, None] * distance[None]
        return np.where(distance[None] < 0, -np.inf, bias)
    return -slopes[:, None, None] * np.abs(distance)[None]


# --------------------------------------------------------------------------
# Learned relative positions: one learned entry per offset, or per range of offsets
# (T5's buckets, Shaw et al.'s clipped offsets)
# --------------------------------------------------------------------------


@accepts(offset=Anything("an integer or an array of integers"), **T5_SETTINGS)
def t5_relative_position_bucket(offset, *, bidirectional=True, num_buckets=32, max_distance=128) -> np.ndarray:
    """T5's bucket of each offset ``k = p - s``: int64, of ``offset``'s shape, values in ``0 ... num_buckets-1``.

    T5 (Raffel et al.) learns one number per head and bucket and adds it to
    the attention score of every query-key pair whose offset falls in that
    bucket. Near offsets get a bucket each, far ones share logarithmically
    wider buckets. With ``n`` buckets per direction, ``e = n // 2`` and
    ``M = max_distance``, a distance ``r >= 0`` goes to:

    * bucket ``r`` when ``r < e`` (one bucket per distance);
    * otherwise bucket ``e + j``, ``j`` the largest integer ``<= n - e - 1``
      with ``(r / e) ** (n - e) >= (M / e) ** j``, i.e.
      ``j = floor((n - e) log(r / e) / log(M / e))``: bucket ``e + j`` starts at
      the distance ``e (M / e) ** (j / (n - e))``, rounded up. The last bucket,
      ``n - 1``, holds every longer distance; it starts before ``M`` (with the
      defaults, bidirectional, at distance 91): ``M`` is where the ramp would
      reach a bucket past the last.

    ``bidirectional=True`` (T5's encoder): ``n = num_buckets // 2`` per
    direction and ``r = |k|``; keys at or behind the query (``k >= 0``) use
    buckets ``0 ... n-1``, keys ahead of it (``k < 0``) buckets ``n ... 2n-1``,
    so bucket ``n`` (distance 0, ahead) is never used, nor, for odd
    ``num_buckets``, the last one. ``bidirectional=False`` (the decoder):
    ``n = num_buckets`` and ``r = max(k, 0)``: keys ahead share bucket 0 with
    the query's own position (the causal mask hides them anyway).

    Sign. ``offset`` is the book's ``k = p - s``, the query's position minus
    the key's (``k > 0``: the key lies ``k`` tokens back). Hugging Face's
    ``T5Attention._relative_position_bucket`` takes the opposite,
    ``s - p`` (memory position minus query position): this function of ``k``
    is that one of ``-k``.

    Arithmetic. The bucket boundaries are computed exactly, with integers
    (``r ** (n - e) * e ** j >= M ** j * e ** (n - e)``), so a distance lying on
    a boundary opens its bucket. transformers evaluates the logarithms in
    float32: for T5's settings, and for every ``num_buckets`` in 8, 32, 64
    with any ``max_distance`` up to 400 (tested), the buckets are the same at
    every offset; for a few unusual settings float32 rounding puts a distance
    on or next to a boundary into the neighbouring bucket (causal,
    ``num_buckets=17``, ``max_distance=27``: ``(18/8) ** 9 = (27/8) ** 6``, so
    distance 18 opens bucket 14, where transformers says 13).

    ``num_buckets`` is an integer from 4 (bidirectional) or 2 (causal), so
    that ``e >= 1``, to 4096; ``max_distance`` an integer from ``e + 1`` to 2**40.
    """
    n, exact, max_distance = _checks.t5_buckets(bidirectional, num_buckets, max_distance)
    k = np.clip(_checks.offset(offset), -max_distance, max_distance)  # every longer distance shares the last bucket
    r = np.abs(k) if bidirectional else np.maximum(k, 0)
    far = exact + np.searchsorted(_t5_starts(n, exact, max_distance), r, side="right")
    bucket = np.where(r < exact, r, far).astype(np.int64)
    return bucket + n * (k < 0) if bidirectional else bucket


@functools.lru_cache(maxsize=64)
def _t5_starts(n: int, exact: int, max_distance: int) -> np.ndarray:
    """The distance where each logarithmic bucket ``exact + j``, j = 1 ... n - exact - 1, starts (read-only int64)."""
    wide = n - exact
    starts = []
    for j in range(1, wide):
        # the least r with r**wide >= target, from a float estimate off by a step at most (max_distance <= 2**40)
        target = max_distance**j * exact ** (wide - j)
        r = max(exact, int(exact * (max_distance / exact) ** (j / wide)))
        while r**wide < target:
            r += 1
        while (r - 1) ** wide >= target:
            r -= 1
        starts.append(r)
    starts = np.array(starts, dtype=np.int64)
    starts.setflags(write=False)
    return starts


@accepts(table=BIAS_TABLE, q_len=COUNT, k_len=LENGTH_OR_NONE, **T5_SETTINGS)
def t5_bias(table, q_len, k_len=None, *, bidirectional=True, num_buckets=32, max_distance=128):
    """T5's additive attention bias from its learned table: shape (n_heads, q_len, k_len).

    ``table`` has shape (num_buckets, n_heads), one learned number per bucket
    and head (the weight of T5's ``relative_attention_bias`` embedding): a
    numpy array or torch tensor, and the result is of the same kind (a tensor
    keeps the table's gradient). Queries sit at positions ``0 ... q_len-1``
    and keys at ``0 ... k_len-1`` (``k_len`` defaults to ``q_len``)::

        bias[h, p, s] = table[t5_relative_position_bucket(p - s), h]

    ``bidirectional``, ``num_buckets`` and ``max_distance`` as in
    ``t5_relative_position_bucket`` (an encoder's self-attention is
    bidirectional, a decoder's is not). It depends on ``p - s`` only, like
    ALiBi's bias, but is learned and flat beyond the last bucket's start.
    """
    _checks.t5_buckets(bidirectional, num_buckets, max_distance)
    k_len = q_len if k_len is None else k_len
    table = _checks.bias_table(table, num_buckets)
    offsets = np.arange(q_len)[:, None] - np.arange(k_len)[None, :]
    buckets = t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    if isinstance(table, torch.Tensor):
        return table[torch.from_numpy(buckets).to(table.device)].permute(2, 0, 1)
    return np.ascontiguousarray(table[buckets].transpose(2, 0, 1))


@accepts(q_len=COUNT, k_len=LENGTH_OR_NONE, max_distance=COUNT)
def shaw_relative_positions(q_len, k_len=None, *, max_distance) -> np.ndarray:
    """Shaw et al.'s clipped relative positions: the row of each (query, key) pair in a table of 2M + 1 embeddings.

    Shaw, Uszkoreit and Vaswani (2018) learn ``2M + 1`` vectors, for the
    relative positions ``-M ... M`` (``M = max_distance``), and give the pair
    of query ``i`` and key ``j`` the one for ``clip(j - i, -M, M)``: every key
    further than ``M`` tokens away, on either side, shares an end vector. This
    returns the int64 array of shape (q_len, k_len) with::

        index[i, j] = clip(j - i, -M, M) + M        (0 ... 2M)

    the row of that vector when the table's row 0 is position ``-M``. Queries
    sit at positions ``0 ... q_len-1``, keys at ``0 ... k_len-1`` (``k_len``
    defaults to ``q_len``); the diagonal (a token and itself) is ``M``.

    Sign. Shaw's relative position ``j - i`` is the key's position minus the
    query's, the opposite of the book's offset ``k = p - s``: a key ``k``
    tokens back (``k > 0``) has index ``M - min(k, M)``, below ``M``.
    ``max_distance`` is an integer >= 1; ``q_len`` and ``k_len`` integers >= 1.
    """
    k_len = q_len if k_len is None else k_len
    relative = np.arange(k_len, dtype=np.int64)[None, :] - np.arange(q_len, dtype=np.int64)[:, None]
    return np.clip(relative, -max_distance, max_distance) + max_distance


# --------------------------------------------------------------------------
# Attention (numpy), for the chapters' experiments
# --------------------------------------------------------------------------


@accepts(x=MATRIX, w_q=MATRIX, w_k=MATRIX, bias=Maybe(MATRIX), causal=Bool())
def attention_weights(x, w_q, w_k, *, bias=None, causal=False) -> np.ndarray:
    """The (n, n) matrix ``softmax(Q K^T / sqrt(d_k) + bias)``, rows summing to 1.

    ``x`` has shape (n, d_model); ``w_q`` and ``w_k`` have shape (d_model, d_k).
    ``bias`` (optional) is an (n, n) array added to the scores before the
    softmax (ALiBi, masks). ``causal=True`` adds the decoder's mask: the query
    at position ``p`` sees the keys ``s <= p`` only. Row ``j`` says how much
    token ``j`` attends to each token. Without the mask nothing here looks at
    where a row sits: that is chapter 01's point.
    """
    x = _checks.matrix("x", x)
    w_q, w_k = _checks.matrix("w_q", w_q, rows=x.shape[1]), _checks.matrix("w_k", w_k, rows=x.shape[1])
    if w_q.shape[1] != w_k.shape[1]:
        refuse("w_k", message=f"w_q and w_k must have the same width, not {w_q.shape[1]} and {w_k.shape[1]}.")
    scores = (x @ w_q) @ (x @ w_k).T / math.sqrt(w_q.shape[1])
    if bias is not None:
        bias = _checks.matrix("bias", bias)
        if bias.shape != scores.shape:
            refuse("bias", f"an array of shape {scores.shape}", bias)
        scores = scores + bias
    if causal:
        scores = np.where(np.triu(np.ones(scores.shape, dtype=bool), k=1), -np.inf, scores)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=1, keepdims=True)


@accepts(x=MATRIX, w_q=MATRIX, w_k=MATRIX, w_v=MATRIX, bias=Maybe(MATRIX), causal=Bool())
def self_attention(x, w_q, w_k, w_v, *, bias=None, causal=False) -> np.ndarray:
    """Single-head self-attention ``attention_weights(x, w_q, w_k) @ (x @ w_v)``.

    Shapes, ``bias`` and ``causal`` as in ``attention_weights``; ``w_v`` is
    (d_model, d_v); returns (n, d_v).
    """
    weights = attention_weights(x, w_q, w_k, bias=bias, causal=causal)
    x = _checks.matrix("x", x)
    return weights @ (x @ _checks.matrix("w_v", w_v, rows=x.shape[1]))
