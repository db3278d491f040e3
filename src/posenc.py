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

This file states the math first: every public function, with its formula,
comes before the input checks and, last, the engine that evaluates the
tables this way (explained step by step in the book's Appendix A).

torch.compile and torch.jit.trace. Compiled and traced code takes a
pure-torch path (``_sin_cos_torch``): the same constants and the same
reduction in turns, then torch's float64 sin and cos (no angle addition). It
has the same accuracy and agrees with the numpy path to about 1e-16.
"""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
import torch
from torch import nn

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

LAYOUTS = ("interleaved", "concatenated")
DTYPES = (np.float16, np.float32, np.float64)


# --------------------------------------------------------------------------
# Frequencies and wavelengths: omega_i = base ** (-2 i / d), lambda_i = 2 pi / omega_i
# --------------------------------------------------------------------------


def frequencies(d_model, base=10000.0) -> np.ndarray:
    """Angular frequencies ``omega_i = base ** (-2 i / d_model)``.

    Returns a float64 array of length ``ceil(d_model / 2)``, one value per
    sin/cos pair ``i = 0 ... ceil(d_model/2) - 1``, from 1 down to
    ``base ** (-(2 * (ceil(d/2) - 1)) / d)`` (never as low as ``1 / base``),
    each correctly rounded.
    """
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    return np.array(_constants(d_model, base)[0], dtype=np.float64)


def wavelengths(d_model, base=10000.0) -> np.ndarray:
    """Wavelengths ``lambda_i = 2 pi / omega_i`` in positions (float64, correctly rounded)."""
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    return np.array(_constants(d_model, base)[1], dtype=np.float64)


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
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    if isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 1:
        raise ValueError(f"length must be a positive integer, got {length!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 2:
        raise ValueError(f"threshold must be a chord length in (0, 2), got {threshold!r}")
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
    pos = _check_positions(positions)
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    layout = _check_layout(layout)
    dt = _check_dtype(dtype)
    return _table(pos, d_model, base, layout, dt)


def exact_angles(positions, d_model, base=10000.0, *, digits=40) -> np.ndarray:
    """``p * omega_i`` with ``digits`` significant digits (mpmath), shape (n, pairs), dtype object.

    The reference the chapters and tests measure every fast path against; it
    needs no extended-precision hardware, so it is the same on every machine.
    Slow (pure Python): meant for a few hundred rows.
    """
    import mpmath

    pos = _check_positions(positions)
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    with mpmath.workdps(digits):
        omega = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model) for i in range((d_model + 1) // 2)]
        return np.array([[mpmath.mpf(float(p)) * w for w in omega] for p in pos], dtype=object)


def exact_sinusoidal(positions, d_model, base=10000.0, *, layout="interleaved", digits=40) -> np.ndarray:
    """``sinusoidal`` with ``digits`` significant digits: mpmath numbers, shape (n, d_model), dtype object.

    ``.astype(float)`` gives the correctly rounded float64 table.
    """
    import mpmath

    layout = _check_layout(layout)
    angles = exact_angles(positions, d_model, base, digits=digits)
    with mpmath.workdps(digits):
        sin = np.vectorize(mpmath.sin, otypes=[object])(angles) if angles.size else angles
        cos = np.vectorize(mpmath.cos, otypes=[object])(angles) if angles.size else angles
    return _arrange(sin, cos, _check_d_model(d_model), layout)


def layout_permutation(d_model) -> np.ndarray:
    """Channel indices ``perm`` with ``concatenated = interleaved[:, perm]``.

    The two layouts hold the same numbers in a different channel order; the
    inverse permutation is ``np.argsort(perm)``.
    """
    d_model = _check_d_model(d_model)
    h = (d_model + 1) // 2
    return np.concatenate([2 * np.arange(h), 2 * np.arange(d_model - h) + 1])


def rotation(k, d_model, base=10000.0, *, layout="interleaved") -> np.ndarray:
    """The matrix ``T(k)`` with ``PE(p + k) = T(k) @ PE(p)`` for every ``p``.

    In the interleaved layout ``T(k)`` is block diagonal: pair ``i`` is
    rotated by the angle ``k * omega_i``::

        [sin(a+b)]   [ cos b   sin b] [sin a]
        [cos(a+b)] = [-sin b   cos b] [cos a]     with b = k * omega_i

    An odd ``d_model`` raises ``ValueError``: its last channel is a lone sine,
    and ``sin(a + b)`` is not a linear function of ``sin a`` alone.
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k):
        raise ValueError(f"k must be a finite real offset, got {k!r}")
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    layout = _check_layout(layout)
    if d_model % 2:
        raise ValueError(
            f"rotation needs an even d_model, got {d_model}: the last channel of "
            "an odd-width encoding is a sine without its cosine partner, and "
            "sin(a + b) cannot be written as a fixed multiple of sin(a)."
        )
    s, c = (x[0] for x in _sin_cos([k], d_model, base))
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
        self.d_model = _check_d_model(d_model)
        self.base = _check_base(base)
        self.layout = _check_layout(layout)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
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
            return _table_torch(seq, self.d_model, self.base, self.layout, device).to(want)
        if self.pe.shape[0] < seq or self.pe.dtype != want:
            length = seq if self.pe.shape[0] == 0 else max(seq, 2 * self.pe.shape[0])
            np_dtype = np.float64 if want == torch.float64 else np.float32
            fresh = sinusoidal(length, self.d_model, self.base, layout=self.layout, dtype=np_dtype)
            self.pe = torch.from_numpy(fresh).to(self.pe.device)
        return self.pe[:seq]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.d_model, type(self).__name__)
        pe = self.table(x.shape[1], x.dtype, x.device).to(device=x.device, dtype=x.dtype)
        return self.dropout(x + pe)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, base={self.base:g}, layout={self.layout!r}"


class LearnedPositionalEmbedding(nn.Module):
    """``x -> x + E[:seq]`` with a trainable table ``E`` of shape (max_len, d_model).

    Initialised like GPT-2 and BERT (normal, std 0.02). A sequence longer than
    ``max_len`` has no rows to look up and raises ``ValueError``.
    """

    def __init__(self, max_len, d_model):
        super().__init__()
        if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 1:
            raise ValueError(f"max_len must be a positive integer, got {max_len!r}")
        self.max_len = int(max_len)
        self.d_model = _check_d_model(d_model)
        self.embedding = nn.Embedding(self.max_len, self.d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.d_model, type(self).__name__)
        seq = x.shape[1]
        if seq > self.max_len:
            raise ValueError(
                f"sequence length {seq} exceeds max_len={self.max_len}: a learned "
                f"table has no embedding for positions {self.max_len} and beyond"
            )
        return x + self.embedding.weight[:seq].to(x.dtype)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"


# --------------------------------------------------------------------------
# Rotary embeddings (RoPE): pair i of a query or key turned by the angle p * omega_i
# --------------------------------------------------------------------------


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
    layout = _check_layout(layout)
    base = _check_base(base)
    plain = (
        inv_freq is None
        and rotary_dim is None
        and (
            isinstance(attention_factor, numbers.Real)
            and not isinstance(attention_factor, bool)
            and attention_factor == 1.0
        )
    )
    x, is_torch, seq, d = _rope_input(x)
    if plain and d % 2:
        raise ValueError(f"apply_rope needs an even last dimension d, got {d}: RoPE rotates channel pairs")
    if not plain:
        r, inv, scale = _check_rope_keywords(d, inv_freq, rotary_dim, attention_factor)
        pos = _check_rope_positions(positions, seq)
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
                raise ValueError(f"positions must be a 1-D tensor, got shape {tuple(pos.shape)}")
        else:
            pos = torch.from_numpy(_check_positions(positions).astype(np.float64)).to(x.device)
        if pos.shape[0] != seq:
            raise ValueError(f"positions has {pos.shape[0]} entries but x has seq={seq} rows")
        sin, cos = (t.to(x.dtype) for t in _sin_cos_torch(pos, d, base))
        cat = torch.cat
    else:
        pos = _check_rope_positions(positions, seq)
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
    layout = _check_layout(layout)
    base = _check_base(base)
    x, is_torch, seq, d = _rope_input(x)
    if d % 2:
        raise ValueError(f"apply_rope_complex needs an even last dimension d, got {d}: each pair is one complex number")
    pos = _check_rope_positions(positions, seq)
    table = sinusoidal(pos, d, base)
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
    layout = _check_layout(layout)
    base = _check_base(base)
    x, is_torch, seq, d = _rope_input(x)
    if (
        isinstance(sections, (str, bytes))
        or not hasattr(sections, "__len__")
        or len(sections) < 1
        or any(isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1 for s in sections)
    ):
        raise ValueError(f"sections must be a list of positive integers (pairs per axis), got {sections!r}")
    sections = [int(s) for s in sections]
    pairs = sum(sections)
    if inv_freq is None:
        if 2 * pairs > d:
            raise ValueError(f"sections add up to {pairs} pairs, more than the d / 2 = {d // 2} pairs of x")
        inv = frequencies(2 * pairs, base)
    else:
        inv = _check_inv_freq(inv_freq)
        if inv.shape[0] != pairs:
            raise ValueError(f"inv_freq has {inv.shape[0]} entries but sections add up to {pairs} pairs")
    r, inv, scale = _check_rope_keywords(d, inv, 2 * pairs, attention_factor)
    if isinstance(positions, torch.Tensor):
        positions = positions.detach().cpu().numpy()
    pos = np.asarray(positions)
    if pos.dtype == bool or pos.dtype.kind not in "iuf" or pos.ndim != 2 or pos.shape != (seq, len(sections)):
        raise ValueError(
            f"positions must be a real array of shape (seq, n_axes) = ({seq}, {len(sections)}), "
            f"got {pos.dtype} of shape {pos.shape}"
        )
    if not np.all(np.isfinite(pos)):
        raise ValueError("positions must be finite: found NaN or infinity")
    axis = np.repeat(np.arange(len(sections)), sections)
    angle = pos.astype(np.float64)[:, axis] * inv[None, :]
    return _rotate_channels(x, np.sin(angle) * scale, np.cos(angle) * scale, layout, r)


def axial_frequencies(head_dim, n_axes=2, base=10000.0) -> np.ndarray:
    """Axial RoPE's frequencies: each of ``n_axes`` axes gets the full ladder of ``head_dim / n_axes`` channels.

    Returns ``n_axes`` copies of ``frequencies(head_dim // n_axes, base)``, one
    after the other (for ``apply_rope_axes`` with ``sections = [head_dim // (2 n_axes)] * n_axes``);
    ``head_dim`` must be a multiple of ``2 * n_axes``.
    """
    head_dim = _check_d_model(head_dim)
    if isinstance(n_axes, bool) or not isinstance(n_axes, numbers.Integral) or n_axes < 1:
        raise ValueError(f"n_axes must be a positive integer, got {n_axes!r}")
    if head_dim % (2 * n_axes):
        raise ValueError(f"head_dim must be a multiple of 2 * n_axes = {2 * n_axes}, got {head_dim}")
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


def resize_grid(grid, height, width) -> np.ndarray:
    """A learned table of 2-D positions, ``grid`` of shape ``(h, w, d)``, resampled to ``(height, width, d)``.

    Each channel is treated as an ``h x w`` image and resized bicubically with
    pixel centres aligned, as ViT-style models do to run at a new resolution
    (``torch.nn.functional.interpolate(..., mode="bicubic", align_corners=False)``):
    rows and columns are resampled separately, ``R_h @ grid @ R_w.T`` per channel.
    The same size returns the grid unchanged. float64.
    """
    grid = np.asarray(grid)
    if grid.ndim != 3 or not np.issubdtype(grid.dtype, np.number) or min(grid.shape) < 1:
        raise ValueError(f"grid must be a numeric array of shape (h, w, d), got shape {grid.shape}")
    if not np.all(np.isfinite(grid)):
        raise ValueError("grid must hold finite numbers")
    for name, value in (("height", height), ("width", width)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
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


def _positive(name, value, *, at_least=None, integer=False):
    """``value`` as a float (int when ``integer``), > 0 (or >= ``at_least``), finite; else a ValueError naming it."""
    if integer:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < (at_least or 1):
            raise ValueError(f"{name} must be an integer >= {at_least or 1}, got {value!r}")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if (at_least is None and value <= 0) or (at_least is not None and value < at_least):
        rule = "> 0" if at_least is None else f">= {at_least:g}"
        raise ValueError(f"{name} must be {rule}, got {value!r}")
    return float(value)


def rotary_dim(head_dim, partial_rotary_factor=1.0) -> int:
    """How many channels of a head rotate: ``int(head_dim * partial_rotary_factor)``, which must be even.

    ``partial_rotary_factor`` is in (0, 1] (GPT-NeoX's ``rotary_pct``); the
    product is rounded down, as the library does, and must be an even number >= 2.
    """
    head_dim = _check_d_model(head_dim)
    if (
        isinstance(partial_rotary_factor, bool)
        or not isinstance(partial_rotary_factor, numbers.Real)
        or not 0 < partial_rotary_factor <= 1
    ):
        raise ValueError(f"partial_rotary_factor must be a number in (0, 1], got {partial_rotary_factor!r}")
    r = int(head_dim * partial_rotary_factor)
    if r < 2 or r % 2:
        raise ValueError(
            f"head_dim * partial_rotary_factor = {head_dim} * {partial_rotary_factor} rounds down to "
            f"{r} channels: RoPE rotates pairs, so it must be an even number >= 2"
        )
    return r


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
    base = _check_base(base)
    length = _positive("original_max_position_embeddings", original_max_position_embeddings, integer=True)
    beta_fast = _positive("beta_fast", beta_fast)
    beta_slow = _positive("beta_slow", beta_slow)
    if not beta_fast > beta_slow:
        raise ValueError(
            f"beta_fast must be greater than beta_slow (turns over the trained length: the fast "
            f"end of the ramp turns more), got beta_fast={beta_fast:g}, beta_slow={beta_slow:g}"
        )
    if not isinstance(truncate, (bool, np.bool_)):
        raise ValueError(f"truncate must be True or False, got {truncate!r}")
    low, high = _yarn_ramp_ends(dim, base, length, beta_fast, beta_slow, truncate)
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
        raise ValueError(f"rope_type {rope_type!r} needs factor (a number >= 1)")
    return _positive("factor", get("factor"), at_least=1.0)


def _rope_trained_length(rope_type: str, get) -> int:
    """``original_max_position_embeddings``: the length the model was trained on."""
    if get("original_max_position_embeddings") is None:
        raise ValueError(f"rope_type {rope_type!r} needs original_max_position_embeddings (the trained length)")
    return _positive("original_max_position_embeddings", get("original_max_position_embeddings"), integer=True)


def _rope_extension(rope_type: str, get) -> tuple:
    """``(s, L, attention_factor or None)`` for the rules that extend a trained length ``L`` (YaRN, LongRoPE).

    ``s`` is ``factor`` when given, else ``max_position_embeddings / L``.
    """
    factor = None if get("factor") is None else _positive("factor", get("factor"), at_least=1.0)
    original = _rope_trained_length(rope_type, get)
    if factor is None:
        if get("max_position_embeddings") is None:
            raise ValueError(
                f"rope_type {rope_type!r} needs factor, or max_position_embeddings to derive it "
                f"as max_position_embeddings / original_max_position_embeddings"
            )
        factor = _positive("max_position_embeddings", get("max_position_embeddings"), integer=True) / original
    given = get("attention_factor")
    return factor, original, None if given is None else _positive("attention_factor", given)


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
        raise ValueError(
            f"rope_type 'dynamic' needs at least 4 rotated channels (the exponent is dim / (dim - 2)), got {dim}"
        )
    factor = _rope_factor("dynamic", get)
    if get("max_position_embeddings") is None:
        raise ValueError("rope_type 'dynamic' needs max_position_embeddings (the trained length)")
    trained = _positive("max_position_embeddings", get("max_position_embeddings"), integer=True)
    seq_len = trained if get("seq_len") is None else _positive("seq_len", get("seq_len"), integer=True)
    seq_len = max(seq_len, trained)
    new_base = base * ((factor * seq_len / trained) - (factor - 1)) ** (dim / (dim - 2))
    return frequencies(dim, new_base), 1.0


def _rope_yarn(head_dim, base, get):
    """YaRN: ``w_i / s`` blended with ``w_i`` by ``yarn_ramp``; attention factor ``0.1 ln s + 1`` (or DeepSeek's)."""
    _, ladder = _rope_ladder(head_dim, base, get)
    factor, original, given = _rope_extension("yarn", get)
    mscale, mscale_all_dim = get("mscale"), get("mscale_all_dim")
    if (mscale is None) != (mscale_all_dim is None):
        raise ValueError(
            "mscale and mscale_all_dim go together (both numbers > 0, or both None): "
            "transformers ignores one given alone"
        )
    if given is None and mscale is not None:
        mscale = _positive("mscale", mscale)
        mscale_all_dim = _positive("mscale_all_dim", mscale_all_dim)
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
            raise ValueError(f"rope_type 'longrope' needs {name} (one positive number per rotated pair)")
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a list of numbers, got {value!r}") from None
        if arr.shape != (dim // 2,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
            raise ValueError(
                f"{name} must hold {dim // 2} finite numbers > 0 (one per rotated pair), got shape {arr.shape}"
            )
        chosen[name] = arr
    seq_len = get("seq_len")
    if seq_len is not None:
        seq_len = _positive("seq_len", seq_len, integer=True)
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
            raise ValueError(f"rope_type 'llama3' needs {name} (a number > 0)")
    low = _positive("low_freq_factor", get("low_freq_factor"))
    high = _positive("high_freq_factor", get("high_freq_factor"))
    if not high > low:
        raise ValueError(f"high_freq_factor must be greater than low_freq_factor, got {high:g} <= {low:g}")
    wavelength = 2 * math.pi / ladder
    scaled = np.where(wavelength > original / low, ladder / factor, ladder)
    blend = (original / wavelength - low) / (high - low)
    middle = ~(wavelength < original / high) & ~(wavelength > original / low)
    return np.where(middle, (1 - blend) * scaled / factor + blend * scaled, scaled), 1.0


def _rope_proportional(head_dim, base, get):
    """p-RoPE: the first pairs keep the whole head's ``base ** (-2 i / head_dim) / s``, the others never turn."""
    if head_dim % 2:
        raise ValueError(f"head_dim must be even for rope_type 'proportional', got {head_dim}")
    prf = get("partial_rotary_factor", 1.0)
    if isinstance(prf, bool) or not isinstance(prf, numbers.Real) or not 0 <= prf <= 1:
        raise ValueError(f"partial_rotary_factor must be a number in [0, 1], got {prf!r}")
    factor = _positive("factor", get("factor", 1.0))
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

    Every bad or unknown parameter raises a ValueError naming it and its allowed range.
    """
    head_dim = _check_d_model(head_dim)
    base = _check_base(base)
    if rope_type not in ROPE_TYPES:  # a tuple, not the dict: an unhashable rope_type gets this error too
        raise ValueError(f"rope_type must be one of {ROPE_TYPES}, got {rope_type!r}")
    unknown = set(params) - _ROPE_KEYS[rope_type]
    if unknown:
        raise ValueError(
            f"rope_type {rope_type!r} takes no parameter {sorted(unknown)}: "
            f"it reads only {sorted(_ROPE_KEYS[rope_type])}"
        )
    return _ROPE_RULES[rope_type](head_dim, base, params.get)


# --------------------------------------------------------------------------
# ALiBi: a linear penalty -m_h |q - k| on head h's attention scores
# --------------------------------------------------------------------------


def alibi_slopes(n_heads) -> np.ndarray:
    """ALiBi's head slopes ``m_h``: for ``n`` a power of two, ``2 ** (-8 h / n)``, h = 1..n.

    Otherwise (as in the ALiBi reference code) the slopes of the nearest
    lower power of two ``k``, followed by every other slope of ``2k`` heads.
    """
    if isinstance(n_heads, bool) or not isinstance(n_heads, numbers.Integral) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")

    def power_of_two(n):
        return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)

    k = 1 << (int(n_heads).bit_length() - 1)
    if k == n_heads:
        return power_of_two(k)
    return np.concatenate([power_of_two(k), power_of_two(2 * k)[0::2][: n_heads - k]])


def alibi_bias(n_heads, q_len, k_len=None, *, causal=True) -> np.ndarray:
    """ALiBi's attention bias, shape (n_heads, q_len, k_len).

    ``bias[h, p, s] = -m_h * (p - s)``: linear in the offset between the
    query at position ``p`` and the key at ``s``, steeper for heads with
    larger slopes. With ``causal=True`` keys after the query (``s > p``) get
    ``-inf`` (masked); with ``causal=False`` the distance is ``|p - s|``. Queries are the last
    ``q_len`` positions of the ``k_len`` keys (``k_len`` defaults to ``q_len``).
    """
    slopes = alibi_slopes(n_heads)
    for name, value in (("q_len", q_len), ("k_len", q_len if k_len is None else k_len)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    k_len = q_len if k_len is None else k_len
    if q_len > k_len:
        raise ValueError(f"q_len ({q_len}) cannot exceed k_len ({k_len}): queries are the last keys")
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
    n, exact, max_distance = _check_t5_buckets(bidirectional, num_buckets, max_distance)
    k = np.clip(_check_offset(offset), -max_distance, max_distance)  # every longer distance shares the last bucket
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
    _check_t5_buckets(bidirectional, num_buckets, max_distance)
    q_len, k_len = _check_lengths(q_len, k_len)
    table = _check_bias_table(table, num_buckets)
    offsets = np.arange(q_len)[:, None] - np.arange(k_len)[None, :]
    buckets = t5_relative_position_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    if isinstance(table, torch.Tensor):
        return table[torch.from_numpy(buckets).to(table.device)].permute(2, 0, 1)
    return np.ascontiguousarray(table[buckets].transpose(2, 0, 1))


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
    max_distance = _positive("max_distance", max_distance, integer=True)
    q_len, k_len = _check_lengths(q_len, k_len)
    relative = np.arange(k_len, dtype=np.int64)[None, :] - np.arange(q_len, dtype=np.int64)[:, None]
    return np.clip(relative, -max_distance, max_distance) + max_distance


# --------------------------------------------------------------------------
# Attention (numpy), for the chapters' experiments
# --------------------------------------------------------------------------


def attention_weights(x, w_q, w_k, *, bias=None, causal=False) -> np.ndarray:
    """The (n, n) matrix ``softmax(Q K^T / sqrt(d_k) + bias)``, rows summing to 1.

    ``x`` has shape (n, d_model); ``w_q`` and ``w_k`` have shape (d_model, d_k).
    ``bias`` (optional) is an (n, n) array added to the scores before the
    softmax (ALiBi, masks). ``causal=True`` adds the decoder's mask: the query
    at position ``p`` sees the keys ``s <= p`` only. Row ``j`` says how much
    token ``j`` attends to each token. Without the mask nothing here looks at
    where a row sits: that is chapter 01's point.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (n, d_model), got shape {x.shape}")
    w_q, w_k = _check_weights(x, w_q=w_q, w_k=w_k)
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(f"w_q and w_k must have the same width, got {w_q.shape[1]} and {w_k.shape[1]}")
    scores = (x @ w_q) @ (x @ w_k).T / math.sqrt(w_q.shape[1])
    if bias is not None:
        bias = np.asarray(bias, dtype=np.float64)
        if bias.shape != scores.shape:
            raise ValueError(f"bias must have shape {scores.shape}, got {bias.shape}")
        scores = scores + bias
    if causal:
        scores = np.where(np.triu(np.ones(scores.shape, dtype=bool), k=1), -np.inf, scores)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    return weights / weights.sum(axis=1, keepdims=True)


def self_attention(x, w_q, w_k, w_v, *, bias=None, causal=False) -> np.ndarray:
    """Single-head self-attention ``attention_weights(x, w_q, w_k) @ (x @ w_v)``.

    Shapes, ``bias`` and ``causal`` as in ``attention_weights``; ``w_v`` is
    (d_model, d_v); returns (n, d_v).
    """
    weights = attention_weights(x, w_q, w_k, bias=bias, causal=causal)
    (w_v,) = _check_weights(np.asarray(x, dtype=np.float64), w_v=w_v)
    return weights @ (np.asarray(x, dtype=np.float64) @ w_v)


# --------------------------------------------------------------------------
# Input checks: every public function validates here, so that bad input
# gets one clear message naming the argument and the allowed range.
# --------------------------------------------------------------------------


def _check_d_model(d_model) -> int:
    if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral):
        raise TypeError(f"d_model must be a positive integer, got {d_model!r} of type {type(d_model).__name__}")
    if d_model < 1:
        raise ValueError(f"d_model must be a positive integer (>= 1), got {d_model}")
    return int(d_model)


def _check_base(base) -> float:
    if isinstance(base, bool) or not isinstance(base, numbers.Real):
        raise TypeError(f"base must be a real number > 1, got {base!r}")
    base = float(base)
    # comparisons, not math.isfinite: under torch.compile(dynamic=True) base is a symbolic float
    if not -math.inf < base < math.inf or base <= 1.0:
        raise ValueError(f"base must be a finite number > 1, got {base}")
    return base


def _check_layout(layout) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def _check_dtype(dtype) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt not in [np.dtype(t) for t in DTYPES]:
        raise TypeError(f"dtype must be one of float16, float32, float64, got {dtype!r}")
    return dt


def _check_positions(positions) -> np.ndarray:
    """Return positions as a 1-D integer or float64 array."""
    if isinstance(positions, bool):
        raise TypeError("positions must be an int count or a 1-D array of numbers, got a bool")
    if isinstance(positions, numbers.Integral):
        if positions < 0:
            raise ValueError(f"positions, given as a count, must be >= 0, got {positions}")
        return np.arange(int(positions), dtype=np.int64)
    arr = _number_array("positions", positions, "iuf", "an int count or a 1-D array of real numbers")
    if arr.ndim != 1:
        raise ValueError(f"positions must be a 1-D array (one position per row), got an array of shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError("positions must be finite: found NaN or infinity")
        return arr.astype(np.float64)
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        # as int64 they would wrap around to negative positions: a silently wrong table
        raise ValueError(
            f"integer positions must be below 2**63, got {int(arr.max())} (pass floats for larger "
            "positions; accuracy is documented for |p| < 2**24)"
        )
    return arr.astype(np.int64)


def _number_array(name: str, value, kinds: str, what: str) -> np.ndarray:
    """``value`` (a torch tensor, numpy array, nested list or number) as a numpy array of dtype kind in ``kinds``.

    ``what`` says what ``name`` must be, for the TypeError raised otherwise (ragged lists, text, bools).
    """
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{name} must be {what}: {exc}") from None
    if arr.dtype == bool or arr.dtype.kind not in kinds:
        raise TypeError(f"{name} must be {what}, got an array of dtype {arr.dtype}")
    return arr


def _check_input(x, d_model: int, name: str):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} expects a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3:
        raise ValueError(
            f"{name} expects x of shape (batch, seq, d_model) with 3 dimensions, got shape {tuple(x.shape)}"
        )
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} was built for d_model={d_model}, but x has last dimension {x.shape[-1]} (shape {tuple(x.shape)})"
        )
    if not x.is_floating_point():
        raise TypeError(f"{name} expects a floating-point x, got dtype {x.dtype}")


def _rope_input(x):
    """``x`` as the RoPE functions take it: a torch tensor, or a float numpy array, of shape (..., seq, d).

    Returns ``(x, is_torch, seq, d)``.
    """
    is_torch = isinstance(x, torch.Tensor)
    if not is_torch:
        x = np.asarray(x)
        if x.dtype.kind not in "f":
            x = x.astype(np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, d), got shape {tuple(x.shape)}")
    return x, is_torch, x.shape[-2], int(x.shape[-1])  # int(): under torch.jit.trace a size is a tensor


def _check_rope_positions(positions, seq: int) -> np.ndarray:
    """RoPE's ``positions`` (default ``0 ... seq-1``) checked: one position per row of ``x``."""
    pos = _check_positions(seq if positions is None else positions)
    if pos.shape[0] != seq:
        raise ValueError(f"positions has {pos.shape[0]} entries but x has seq={seq} rows")
    return pos


def _check_rope_keywords(d: int, inv_freq, rotary_dim, attention_factor):
    """``(rotary_dim, inv_freq or None, attention_factor)`` checked against a last dimension ``d``."""
    if (
        isinstance(attention_factor, bool)
        or not isinstance(attention_factor, numbers.Real)
        or not 0 < attention_factor < math.inf
    ):
        raise ValueError(f"attention_factor must be a finite number > 0, got {attention_factor!r}")
    inv = None
    if inv_freq is not None:
        inv = _check_inv_freq(inv_freq)
    if rotary_dim is None:
        rotary_dim = d if inv is None else 2 * inv.shape[0]
    if (
        isinstance(rotary_dim, bool)
        or not isinstance(rotary_dim, numbers.Integral)
        or rotary_dim < 2
        or rotary_dim % 2
        or rotary_dim > d
    ):
        raise ValueError(
            f"rotary_dim must be an even integer with 2 <= rotary_dim <= d = {d}, "
            f"got {rotary_dim!r} (inv_freq has one entry per rotated pair)"
        )
    if inv is not None and inv.shape[0] != rotary_dim // 2:
        raise ValueError(
            f"inv_freq must have rotary_dim / 2 = {rotary_dim // 2} entries (one per rotated pair), got {inv.shape[0]}"
        )
    return int(rotary_dim), inv, float(attention_factor)


def _check_inv_freq(inv_freq) -> np.ndarray:
    if isinstance(inv_freq, torch.Tensor):
        inv_freq = inv_freq.detach().cpu().double().numpy()
    try:
        inv = np.asarray(inv_freq, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"inv_freq must be a 1-D array of frequencies, got {type(inv_freq).__name__}") from None
    if inv.ndim != 1 or inv.shape[0] < 1:
        raise ValueError(f"inv_freq must be a non-empty 1-D array (one frequency per pair), got shape {inv.shape}")
    if not np.all(np.isfinite(inv)) or np.any(inv < 0):
        raise ValueError("inv_freq must hold finite frequencies >= 0 (radians per position)")
    return inv


def _check_lengths(q_len, k_len) -> tuple:
    """``(q_len, k_len)``, both integers >= 1; ``k_len`` defaults to ``q_len``."""
    q_len = _positive("q_len", q_len, integer=True)
    return q_len, q_len if k_len is None else _positive("k_len", k_len, integer=True)


# Bounds on T5's settings, far beyond any model's (32 buckets up to 128): they keep _t5_starts' integer powers
# small, and max_distance exact in int64 and in the float estimate of each bucket's start.
_T5_MAX_BUCKETS = 4096
_T5_MAX_DISTANCE = 2**40


def _check_t5_buckets(bidirectional, num_buckets, max_distance) -> tuple:
    """``(n, e, max_distance)``: buckets per direction, exact buckets among them, and the checked distance."""
    if not isinstance(bidirectional, (bool, np.bool_)):
        raise ValueError(f"bidirectional must be True or False, got {bidirectional!r}")
    least = 4 if bidirectional else 2  # so that each direction has at least one exact bucket
    if (
        isinstance(num_buckets, bool)
        or not isinstance(num_buckets, numbers.Integral)
        or not least <= num_buckets <= _T5_MAX_BUCKETS
    ):
        why = "half for each direction, half of those exact" if bidirectional else "half of them exact"
        raise ValueError(
            f"num_buckets must be an integer from {least} to {_T5_MAX_BUCKETS} when bidirectional="
            f"{bool(bidirectional)} ({why}), got {num_buckets!r}"
        )
    n = int(num_buckets) // 2 if bidirectional else int(num_buckets)
    exact = n // 2
    if (
        isinstance(max_distance, bool)
        or not isinstance(max_distance, numbers.Integral)
        or not exact < max_distance <= _T5_MAX_DISTANCE
    ):
        raise ValueError(
            f"max_distance must be an integer from {exact + 1} to 2**40: more than the {exact} exact buckets (the "
            f"logarithmic buckets span the distances {exact} ... max_distance), got {max_distance!r}"
        )
    return n, exact, int(max_distance)


def _check_offset(offset) -> np.ndarray:
    """Offsets as an int64 array (any shape)."""
    arr = _number_array("offset", offset, "iu", "an integer or an array of integers")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"offset must be below 2**63, got {int(arr.max())}")
    return arr.astype(np.int64)


def _check_bias_table(table, num_buckets: int):
    """A learned table of shape (num_buckets, n_heads): a floating torch tensor, or a float numpy array."""
    if isinstance(table, torch.Tensor):
        if not table.is_floating_point():
            raise TypeError(f"table must hold floating-point numbers, got dtype {table.dtype}")
    else:
        table = _number_array("table", table, "iuf", f"an array of real numbers of shape ({num_buckets}, n_heads)")
        if table.dtype.kind != "f":
            table = table.astype(np.float64)
    if table.ndim != 2 or table.shape[0] != num_buckets or table.shape[1] < 1:
        raise ValueError(
            f"table must have shape (num_buckets, n_heads) = ({num_buckets}, n_heads >= 1), got {tuple(table.shape)}"
        )
    return table


def _check_weights(x: np.ndarray, **weights) -> list:
    checked = []
    for name, w in weights.items():
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 2 or w.shape[0] != x.shape[1]:
            raise ValueError(
                f"{name} must have shape ({x.shape[1]}, d), matching x's last "
                f"dimension {x.shape[1]}, got shape {w.shape}"
            )
        checked.append(w)
    return checked


# ==================================================================================================================
# The engine: exact angles, fast tables. Appendix A of the book, "Accurate angles without high precision
# everywhere" (appendix/fast_angles.ipynb), explains it step by step. Everything above states what is computed;
# what follows is how it is computed to within one rounding of the exact value, and fast. It changes no formula:
# exact_sinusoidal (mpmath, 40 digits) is the reference the tests hold it to.
# ==================================================================================================================


# Exact float64 constants, derived once per (d_model, base)

# 2 pi rounded to float64 (relative error 4e-17): only ever multiplies a reduced
# angle in turns, |t| <= 1/2 + 2**-6, so it adds less than 2e-16 radians.
_TWO_PI = 2 * math.pi
# Each turns-per-position constant is split as hi + lo with hi a multiple of 2**-_HI_BITS;
# hi < 1/4, so k * hi is exact in float64 for every integer |k| < 2**(53 - 27 + ...) = 2**26.
_HI_BITS = 29


@functools.lru_cache(maxsize=256)
def _constants(d_model: int, base: float) -> tuple:
    """``(omega, wavelength, hi, lo)``: four tuples of float64, one entry per pair.

    Derived once from mpmath at 160 bits, so they are the same on every machine
    and need no type wider than float64: ``omega_i`` and ``2 pi / omega_i``
    correctly rounded, and the turns per position ``f_i = omega_i / (2 pi)``
    as an exact split ``hi + lo`` (``hi`` a multiple of ``2**-29`` below 1/4,
    ``lo`` the rest rounded to float64, ``|lo| <= 2**-30``: ``hi + lo`` equals
    ``f_i`` to about ``2**-83``). Never traced: torch.jit.trace records the
    numbers as constants, torch.compile gets them from the custom op
    ``posenc::turns`` (the grader's private copy has its own).
    """
    import mpmath  # here, not at import: ``import posenc`` stays cheap

    pairs = (d_model + 1) // 2
    with mpmath.workprec(160):
        b, two_pi, scale = mpmath.mpf(base), 2 * mpmath.pi, mpmath.mpf(2) ** _HI_BITS
        omega = [mpmath.power(b, mpmath.mpf(-2 * i) / d_model) for i in range(pairs)]
        turns = [w / two_pi for w in omega]
        hi = [mpmath.nint(f * scale) / scale for f in turns]  # exact: a multiple of 2**-29
        return (
            tuple(float(w) for w in omega),
            tuple(float(two_pi / w) for w in omega),
            tuple(float(h) for h in hi),
            tuple(float(f - h) for f, h in zip(turns, hi)),
        )


def _turns(d_model: int, base: float) -> tuple:
    """``omega_i / 2 pi`` (turns per position) split as ``hi + lo``: two tuples of floats.

    Each ``hi`` is a multiple of ``2**-29`` below ``1/4``, so ``p * hi`` is
    exact in float64 for every integer ``|p| < 2**26``; ``|lo| <= 2**-30``.
    """
    return _constants(d_model, base)[2:]


# Accurate sin and cos of any position: the angle reduced in turns


def _reduced_turns(positions: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``p * omega_i / (2 pi)`` reduced to about [-1/2, 1/2] turns, float64 only, shape (n, pairs).

    For ``p = k + e`` (``k`` the nearest integer, ``|e| <= 1/2``, both exact)
    ``k * hi`` is exact and so is its distance to the nearest integer; what
    is left, ``k * lo + e * (hi + lo)``, is below 0.1 turn for ``|p| < 2**24``
    (``k * lo`` below ``2**-6``, ``e * f`` up to ``f_0 / 2 = 1 / (4 pi)``), so
    each of its roundings errs by at most ``2**-57``. Every step is one IEEE
    operation (no fused multiply-add), so an entry depends on its ``p`` and
    ``i`` only. The torch path (``_sin_cos_torch``) does the same operations.
    """
    p = positions[:, None]
    k = np.round(p)
    whole = k * hi
    return (whole - np.round(whole)) + (k * lo + (p - k) * (hi + lo))


def _sin_cos_turns(positions: np.ndarray, hi: np.ndarray, lo: np.ndarray):
    """Accurate float64 sin and cos of ``positions[:, None] * omega`` (within ~2e-16 for |p| < 2**24)."""
    angle = _reduced_turns(positions.astype(np.float64), hi, lo) * _TWO_PI
    return np.sin(angle), np.cos(angle)


def _sin_cos(positions, d_model: int, base: float):
    """``_sin_cos_turns`` for ``(d_model, base)``'s frequencies."""
    hi, lo = (np.array(t, dtype=np.float64) for t in _turns(d_model, base))
    return _sin_cos_turns(np.asarray(positions, dtype=np.float64), hi, lo)


def _layout_views(table: np.ndarray, h: int, layout: str):
    """The sine and cosine channels of a table (last axis: channels) as two views."""
    if layout == "interleaved":
        return table[..., 0::2], table[..., 1::2]
    return table[..., :h], table[..., h:]


# Integer positions are split as p = 4096 a + 64 b + r (0 <= b, r < 64), from p alone: never from
# the other positions asked for, so a row is the same in every table. Accurate float64 sin and cos
# (the reduction in turns) are needed only for the rows 4096 a; the steps 64 b and r are the same
# for every table of a given (d_model, base) and are kept. A row is assembled by angle addition,
# twice, as one complex product per pair:
#
#     w(A + B) = w(A) * conj(e(B)),   w(t) = sin t + i cos t,   e(t) = cos t + i sin t
#
# (w(t) = i conj(e(t)), and e(A + B) = e(A) e(B)). In memory a complex number is its real part
# followed by its imaginary part, so the rows w(p) of all pairs *are* the interleaved table
# [sin, cos, sin, cos, ...]: numpy's complex multiply (one pass, in registers) writes them, rounded
# once to the table's dtype. Every entry gets the same operations whatever the table's length or
# which rows are asked (numpy's vector loop, its tail included, runs the same complex multiply).
_BLOCK = 64
_CHUNK = 2  # blocks of 64 rows assembled at a time: buffers of 128 rows stay in cache


def _w(s: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``w = s + i c`` (complex128), exact."""
    w = np.empty(s.shape, dtype=np.complex128)
    w.real, w.imag = s, c
    return w


def _steps(d_model: int, base: float, step: int) -> np.ndarray:
    """``conj(e(B))`` for ``B = k * step * omega``, k = 0 ... 63, shape (64, pairs) (read-only).

    Kept per constants (the cache is keyed on ``_turns``' values, not on ``(d_model, base)``).
    """
    return _steps_for(*_turns(d_model, base), step)


@functools.lru_cache(maxsize=16)
def _steps_for(hi: tuple, lo: tuple, step: int) -> np.ndarray:
    hi, lo = np.array(hi, dtype=np.float64), np.array(lo, dtype=np.float64)
    s, c = _sin_cos_turns(np.arange(_BLOCK, dtype=np.int64) * step, hi, lo)
    g = _w(c, -s)  # cos B - i sin B
    g.setflags(write=False)
    return g


def _coarse_rows(q: np.ndarray, d_model: int, base: float, hi, lo) -> np.ndarray:
    """``w`` of the rows ``64 q`` (q = 64 a + b), each from its own q only, shape (len(q), pairs)."""
    a, b = np.divmod(q, _BLOCK)
    ua, inverse = np.unique(a, return_inverse=True)
    w_a = _w(*_sin_cos_turns(ua * (_BLOCK * _BLOCK), hi, lo))
    return w_a[inverse.reshape(-1)] * _steps(d_model, base, _BLOCK)[b]


def _complex_target(out: np.ndarray, layout: str):
    """A float64 table seen as (n, pairs) complex numbers ``w = sin + i cos``, when its layout and width allow it.

    Only float64: the products are written there as they are. A narrower table is rounded from a buffer of
    products instead (float32: numpy's casting loop, ``out=`` complex64 with ``casting="same_kind"``, took
    1.5 times as long as multiplying into a buffer in cache and assigning; float16 has no complex type).
    """
    if out.dtype == np.float64 and layout == "interleaved" and out.shape[1] % 2 == 0 and out.flags.c_contiguous:
        return out.view(np.complex128)
    return None


def _put(w: np.ndarray, out: np.ndarray, dst, layout: str) -> None:
    """Rows ``w`` (complex128) into ``out[dst]`` as the table's channels (rounded once to out's dtype)."""
    h = w.shape[1]
    if layout == "interleaved":
        out[dst] = w.view(np.float64)[:, : out.shape[1]]
    else:
        out[dst, :h] = w.real
        out[dst, h:] = w.imag[:, : out.shape[1] - h]


def _assemble_run(start: int, n: int, d_model: int, base: float, layout: str, hi, lo, out) -> None:
    """Rows ``start ... start+n-1`` (integers), written into ``out`` (n, d_model).

    Large tables are shared out among ``torch.get_num_threads()`` threads (numpy
    releases the GIL in its loops), by whole chunks: every entry gets the same
    operations whichever thread computes it, so the bits do not depend on the
    number of threads. Threads are started per call and joined before return
    (nothing survives a fork).
    """
    q0 = start // _BLOCK
    nq = (start + n - 1) // _BLOCK - q0 + 1
    w_q = _coarse_rows(q0 + np.arange(nq, dtype=np.int64), d_model, base, hi, lo)
    g = _steps(d_model, base, 1)
    direct = _complex_target(out, layout)
    h = w_q.shape[1]

    def work(chunks):
        buffer = np.empty((_CHUNK, _BLOCK, h), dtype=np.complex128)
        for b0 in chunks:
            b1 = min(b0 + _CHUNK, nq)
            first = (q0 + b0) * _BLOCK  # the position of the chunk's first row
            lo_row, hi_row = max(first, start), min(first + (b1 - b0) * _BLOCK, start + n)
            dst = slice(lo_row - start, hi_row - start)
            if direct is not None and lo_row == first and hi_row - first == (b1 - b0) * _BLOCK:
                target = direct[dst].reshape(b1 - b0, _BLOCK, h)  # whole blocks: straight into the table
                np.multiply(w_q[b0:b1, None], g, out=target)
                continue
            t = buffer[: b1 - b0]
            np.multiply(w_q[b0:b1, None], g, out=t)
            _put(t.reshape(-1, h)[lo_row - first : hi_row - first], out, dst, layout)

    chunks = list(range(0, nq, _CHUNK))
    threads = min(torch.get_num_threads(), 8, len(chunks), max(1, (n * d_model) >> 19))
    if threads <= 1:
        return work(chunks)
    import threading

    helpers = [threading.Thread(target=work, args=(chunks[t::threads],)) for t in range(1, threads)]
    for helper in helpers:
        helper.start()
    try:
        work(chunks[0::threads])
    finally:
        for helper in helpers:
            helper.join()


def _assemble_rows(ints: np.ndarray, d_model: int, base: float, layout: str, hi, lo, out, where) -> None:
    """Rows of any integer positions (the same operations as ``_assemble_run``), into ``out[where]``."""
    q, r = np.divmod(ints, _BLOCK)
    uq, inverse = np.unique(q, return_inverse=True)
    inverse = inverse.reshape(-1)
    w_q = _coarse_rows(uq, d_model, base, hi, lo)
    g = _steps(d_model, base, 1)
    step = _CHUNK * _BLOCK
    for j0 in range(0, ints.shape[0], step):
        j = slice(j0, j0 + step)
        _put(w_q[inverse[j]] * g[r[j]], out, where[j], layout)


def _table(pos: np.ndarray, d_model: int, base: float, layout: str, dt: np.dtype) -> np.ndarray:
    """The table of ``sinusoidal`` (checked arguments), written straight into its final dtype and layout.

    Integer positions (and integer-valued floats below ``2**53``) are
    assembled by angle addition (see ``_BLOCK``) in float64 and rounded once;
    other positions get the direct float64 path. Which path a row takes, and
    every operation on it, depends on its own position only.
    """
    n, h = pos.shape[0], (d_model + 1) // 2
    hi, lo = (np.array(t, dtype=np.float64) for t in _turns(d_model, base))
    out = np.empty((n, d_model), dtype=dt)
    if n == 0:
        return out
    if pos.dtype.kind == "f":
        integral = (pos == np.round(pos)) & (np.abs(pos) < 2.0**53)
    else:
        integral = np.ones(n, dtype=bool)
    if integral.all():
        ints = pos.astype(np.int64)
        start = int(ints[0])
        if ints[-1] - start == n - 1 and np.array_equal(ints, np.arange(start, start + n)):
            _assemble_run(start, n, d_model, base, layout, hi, lo, out)
        else:
            _assemble_rows(ints, d_model, base, layout, hi, lo, out, np.arange(n))
        return out
    where = np.flatnonzero(integral)
    if where.size:
        _assemble_rows(pos[where].astype(np.int64), d_model, base, layout, hi, lo, out, where)
    where = np.flatnonzero(~integral)
    s, c = _sin_cos_turns(pos[where], hi, lo)
    sin_out, cos_out = _layout_views(out, h, layout)
    sin_out[where], cos_out[where] = s, c[:, : cos_out.shape[1]]
    return out


def _arrange(sin, cos, d_model: int, layout: str):
    """Lay sines and cosines (numpy or torch, shape (n, pairs)) out as channels."""
    stack, cat = (torch.stack, torch.cat) if isinstance(sin, torch.Tensor) else (np.stack, np.concatenate)
    if layout == "interleaved":
        return stack([sin, cos], -1).reshape(sin.shape[0], 2 * sin.shape[1])[:, :d_model]
    return cat([sin, cos[:, : d_model - sin.shape[1]]], -1)


# The same in torch, for torch.compile and torch.jit.trace


# Under torch.compile the constants (derived with mpmath) cannot be traced, so a custom op hands them to the graph:
# Dynamo and Inductor see an opaque call with known output shapes (the fake implementation), and the
# real one runs at call time (a cached lookup). A custom op, not ``torch.compiler.assume_constant_result``,
# because that decorator imports torch._dynamo (seconds) when posenc is imported; this costs a millisecond.
# The op is registered in torch's process-wide registry under a namespace named after this module: the grader
# executes this file a second time as a private module (grading/reference.py), and a second registration of one
# name makes torch destroy the first, leaving the first module's op pointing at freed dispatcher state.
_OP_NAMESPACE = __name__.replace(".", "_")


@torch.library.custom_op(f"{_OP_NAMESPACE}::turns", mutates_args=())
def _turns_op(d_model: int, base: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    return tuple(torch.tensor(t, dtype=torch.float64, device=device) for t in _turns(d_model, base))


@_turns_op.register_fake
def _turns_op_fake(d_model, base, device):
    pairs = (d_model + 1) // 2
    return tuple(torch.empty(pairs, dtype=torch.float64, device=device) for _ in range(2))


def _sin_cos_torch(positions: torch.Tensor, d_model: int, base: float):
    """sin and cos of ``p * omega_i`` in torch float64, shape (n, pairs).

    The angle is formed in turns and reduced exactly: for ``p = k + e`` (``k``
    an integer, ``|e| <= 1/2``) the product ``k * hi`` is exact and so is its
    fractional part; what is left (``k * lo + e * f``) is small. The angle
    given to sin and cos lies in about [-pi, pi] and is within ~2e-16 of
    ``p * omega_i mod 2 pi`` for ``|p| < 2**24``: the same operations as the
    numpy path's ``_reduced_turns``, in the same order. Only tensor
    arithmetic: it traces.
    """
    if torch.compiler.is_compiling():
        hi, lo = _turns_op(d_model, base, positions.device)
    else:
        hi, lo = (torch.tensor(t, dtype=torch.float64, device=positions.device) for t in _turns(d_model, base))
    p = positions.to(torch.float64)[:, None]
    k = torch.round(p)
    whole = k * hi
    turns = (whole - torch.round(whole)) + (k * lo + (p - k) * (hi + lo))
    angle = turns * _TWO_PI
    return torch.sin(angle), torch.cos(angle)


def _table_torch(seq: int, d_model: int, base: float, layout: str, device) -> torch.Tensor:
    """Rows ``0 ... seq-1`` of the table in torch float64 (what a compiled or traced module uses)."""
    positions = torch.arange(seq, dtype=torch.float64, device=device)
    return _arrange(*_sin_cos_torch(positions, d_model, base), d_model, layout)
