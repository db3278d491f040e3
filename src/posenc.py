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
taken (3e-2 at ``p = 10**6``). Here the angles are formed in extended
precision and reduced modulo ``2 pi`` before any rounding, for a small table
of "coarse" positions ``q * 64`` and "fine" offsets ``r < 64``; every integer
position ``p = q * 64 + r`` is then assembled with the angle-addition rule
(the rotation property of chapter 04)::

    sin(a + b) = sin a cos b + cos a sin b,   cos(a + b) = cos a cos b - sin a sin b

in float64, and rounded once to the requested dtype. At every
``|p| < 2**24`` float32 results are within 2e-7 of the exact value (in fact
correctly rounded but for ~1e-12) and float64 results within 1e-9 (measured:
about 1e-12, the error of ``omega`` in long double times ``p``). The split
of ``p`` does not depend on the other positions asked for, so row ``p`` of a
table is bitwise the same in every table (and in the module whatever it was
asked before).

torch.compile and torch.jit.trace. Numpy's long double cannot be traced, so
compiled and traced code takes a pure-torch path (``_sin_cos_torch``): the
same frequencies, as turns per position split into an exact high part and a
small low part, so the reduction modulo ``2 pi`` is exact in float64; then
torch's float64 sin and cos. It has the same accuracy (measured: ~1e-12 in
float64 at ``|p| < 2**24``, ~1e-15 for ``p`` in the thousands) and agrees
with the numpy path to that accuracy.
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
    "alibi_slopes",
    "alibi_bias",
    "attention_weights",
    "self_attention",
]

LAYOUTS = ("interleaved", "concatenated")
DTYPES = (np.float16, np.float32, np.float64)

# 2*pi to more digits than any float type we use can hold.
_TWO_PI = np.longdouble("6.283185307179586476925286766559005768394")


# --------------------------------------------------------------------------
# Input checks: every public function validates here, so that bad input
# gets one clear message naming the argument and the allowed range.
# --------------------------------------------------------------------------

def _check_d_model(d_model) -> int:
    if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral):
        raise TypeError(
            f"d_model must be a positive integer, got {d_model!r} "
            f"of type {type(d_model).__name__}"
        )
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
        raise TypeError(
            f"dtype must be one of float16, float32, float64, got {dtype!r}"
        )
    return dt


def _check_positions(positions) -> np.ndarray:
    """Return positions as a 1-D integer or float64 array."""
    if isinstance(positions, bool):
        raise TypeError("positions must be an int count or a 1-D array of numbers, got a bool")
    if isinstance(positions, numbers.Integral):
        if positions < 0:
            raise ValueError(
                f"positions, given as a count, must be >= 0, got {positions}"
            )
        return np.arange(int(positions), dtype=np.int64)
    if isinstance(positions, torch.Tensor):
        positions = positions.detach().cpu().numpy()
    try:
        arr = np.asarray(positions)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"positions must be a 1-D array of numbers: {exc}") from None
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(
            f"positions must be an int count or a 1-D array of real numbers, "
            f"got an array of dtype {arr.dtype}"
        )
    if arr.ndim != 1:
        raise ValueError(
            f"positions must be a 1-D array (one position per row), "
            f"got an array of shape {arr.shape}"
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError("positions must be finite: found NaN or infinity")
        return arr.astype(np.float64)
    return arr.astype(np.int64)


# --------------------------------------------------------------------------
# Frequencies
# --------------------------------------------------------------------------

def _omega_ld(d_model: int, base: float) -> np.ndarray:
    """omega_i in extended precision (long double), i = 0 ... ceil(d/2)-1."""
    i = np.arange((d_model + 1) // 2, dtype=np.longdouble)
    return np.power(np.longdouble(base), -2 * i / d_model)


def frequencies(d_model, base=10000.0) -> np.ndarray:
    """Angular frequencies ``omega_i = base ** (-2 i / d_model)``.

    Returns a float64 array of length ``ceil(d_model / 2)``, one value per
    sin/cos pair ``i = 0 ... ceil(d_model/2) - 1``, from 1 down to
    ``base ** (-(2 * (ceil(d/2) - 1)) / d)`` (never as low as ``1 / base``).
    """
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    return _omega_ld(d_model, base).astype(np.float64)


def wavelengths(d_model, base=10000.0) -> np.ndarray:
    """Wavelengths ``lambda_i = 2 pi / omega_i`` in positions (float64)."""
    d_model = _check_d_model(d_model)
    base = _check_base(base)
    return (_TWO_PI / _omega_ld(d_model, base)).astype(np.float64)


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
# The table
# --------------------------------------------------------------------------

def _sin_cos(positions: np.ndarray, omega: np.ndarray):
    """Accurate sin and cos of ``positions[:, None] * omega`` as float64.

    The angle is formed and reduced modulo 2 pi in long double, so the
    float64 sine sees an argument in [0, 2 pi) that is correct to ~1e-16.
    """
    angle = np.asarray(positions, dtype=np.longdouble)[:, None] * omega[None, :]
    reduced = np.fmod(angle, _TWO_PI).astype(np.float64)
    return np.sin(reduced), np.cos(reduced)


# Integer positions p = q * _BLOCK + r (0 <= r < _BLOCK) are assembled from a
# coarse angle and a fine one. The split depends on p alone, never on the
# other positions asked for, so a row is the same in every table.
_BLOCK = 64


def _sin_cos_rows(positions: np.ndarray, omega: np.ndarray):
    """sin and cos of ``p * omega`` (float64, shape (n, pairs)); row p depends on p only.

    Integer positions use the angle-addition rule on exact coarse and fine
    tables, one IEEE operation per numpy call (no fused multiply-add, no
    code path that depends on where an element sits in the array).
    """
    integral = positions.dtype.kind in "iu"
    if not integral and np.all(positions == np.round(positions)) and np.all(np.abs(positions) < 2.0**62):
        positions, integral = positions.astype(np.int64), True  # integer-valued floats too
    if not integral:
        return _sin_cos(positions, omega)
    s_r, c_r = _sin_cos(np.arange(_BLOCK), omega)  # fine: b = r * omega
    start, n = (int(positions[0]), positions.shape[0]) if positions.shape[0] else (0, 0)
    if n and np.array_equal(positions, np.arange(start, start + n)):
        # A contiguous run: whole coarse blocks broadcast against the fine table.
        q0 = start // _BLOCK
        nq = (start + n - 1) // _BLOCK - q0 + 1
        s_q, c_q = _sin_cos((q0 + np.arange(nq)) * _BLOCK, omega)
        s_q, c_q, s_r, c_r = s_q[:, None], c_q[:, None], s_r[None], c_r[None]
        cut = slice(start - q0 * _BLOCK, start - q0 * _BLOCK + n)
    else:
        q, r = np.divmod(positions, _BLOCK)
        uq, inverse = np.unique(q, return_inverse=True)
        s_q, c_q = (t[inverse.reshape(-1)] for t in _sin_cos(uq * _BLOCK, omega))
        s_r, c_r, cut = s_r[r], c_r[r], slice(None)
    # sin(a + b) = sin a cos b + cos a sin b;  cos(a + b) = cos a cos b - sin a sin b
    sin = s_q * c_r + c_q * s_r
    cos = c_q * c_r - s_q * s_r
    h = omega.shape[0]
    return sin.reshape(-1, h)[cut], cos.reshape(-1, h)[cut]


def _arrange(sin, cos, d_model: int, layout: str):
    """Lay sines and cosines (numpy or torch, shape (n, pairs)) out as channels."""
    stack, cat = (torch.stack, torch.cat) if isinstance(sin, torch.Tensor) else (np.stack, np.concatenate)
    if layout == "interleaved":
        return stack([sin, cos], -1).reshape(sin.shape[0], 2 * sin.shape[1])[:, :d_model]
    return cat([sin, cos[:, : d_model - sin.shape[1]]], -1)


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
    sin, cos = _sin_cos_rows(pos, _omega_ld(d_model, base))
    return np.ascontiguousarray(_arrange(sin, cos, d_model, layout), dtype=dt)


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
    s, c = (x[0] for x in _sin_cos(np.array([k], dtype=np.float64), _omega_ld(d_model, base)))
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
# The table in torch (for torch.compile and torch.jit.trace)
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _turns(d_model: int, base: float) -> tuple:
    """``omega_i / 2 pi`` (turns per position) split as ``hi + lo``: two tuples of floats.

    Computed from ``_omega_ld`` in plain Python and numpy, never traced: a
    trace (torch.jit.trace) records the numbers as constants, and under
    torch.compile they come from the custom op ``posenc::turns`` (below).
    Each ``hi`` is a multiple of ``2**-29`` below ``1/4``, so ``p * hi`` is
    exact in float64 for every integer ``|p| < 2**26``; ``|lo| <= 2**-30``.
    """
    f = _omega_ld(d_model, base) / _TWO_PI
    hi = np.round(f * 2.0**29) / 2.0**29
    return tuple(hi.astype(np.float64).tolist()), tuple((f - hi).astype(np.float64).tolist())


# Under torch.compile the long-double numbers cannot be traced, so a custom op hands them to the graph:
# Dynamo and Inductor see an opaque call with known output shapes (the fake implementation), and the
# real one runs at call time (a cached lookup). A custom op, not ``torch.compiler.assume_constant_result``,
# because that decorator imports torch._dynamo (seconds) when posenc is imported; this costs a millisecond.
@torch.library.custom_op("posenc::turns", mutates_args=())
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
    given to sin and cos lies in [-pi, pi] and is within ~1e-15 of
    ``p * omega_i mod 2 pi`` for ``|p| < 2**24`` (plus the ~1e-19 relative
    error of ``omega_i`` itself). Only tensor arithmetic: it traces.
    """
    if torch.compiler.is_compiling():
        hi, lo = _turns_op(d_model, base, positions.device)
    else:
        hi, lo = (torch.tensor(t, dtype=torch.float64, device=positions.device) for t in _turns(d_model, base))
    p = positions.to(torch.float64)[:, None]
    k = torch.round(p)
    whole = k * hi
    turns = (whole - torch.round(whole)) + (k * lo + (p - k) * (hi + lo))
    angle = turns * (2 * math.pi)
    return torch.sin(angle), torch.cos(angle)


def _table_torch(seq: int, d_model: int, base: float, layout: str, device) -> torch.Tensor:
    """Rows ``0 ... seq-1`` of the table in torch float64 (what a compiled or traced module uses)."""
    positions = torch.arange(seq, dtype=torch.float64, device=device)
    return _arrange(*_sin_cos_torch(positions, d_model, base), d_model, layout)


# --------------------------------------------------------------------------
# torch modules
# --------------------------------------------------------------------------

def _check_input(x, d_model: int, name: str):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} expects a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 3:
        raise ValueError(
            f"{name} expects x of shape (batch, seq, d_model) with 3 dimensions, "
            f"got shape {tuple(x.shape)}"
        )
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} was built for d_model={d_model}, but x has last dimension "
            f"{x.shape[-1]} (shape {tuple(x.shape)})"
        )
    if not x.is_floating_point():
        raise TypeError(f"{name} expects a floating-point x, got dtype {x.dtype}")


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
# Rotary embeddings (RoPE) and ALiBi
# --------------------------------------------------------------------------

def apply_rope(x, positions=None, base=10000.0, *, layout="interleaved"):
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
    """
    layout = _check_layout(layout)
    base = _check_base(base)
    is_torch = isinstance(x, torch.Tensor)
    if not is_torch:
        x = np.asarray(x)
        if x.dtype.kind not in "f":
            x = x.astype(np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, d), got shape {tuple(x.shape)}")
    seq, d = x.shape[-2], int(x.shape[-1])  # int(): under torch.jit.trace a size is a tensor
    if d % 2:
        raise ValueError(f"apply_rope needs an even last dimension d, got {d}: RoPE rotates channel pairs")
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
        pos = _check_positions(seq if positions is None else positions)
        if pos.shape[0] != seq:
            raise ValueError(f"positions has {pos.shape[0]} entries but x has seq={seq} rows")
        table = sinusoidal(pos, d, base, dtype=np.float64 if x.dtype == np.float64 else np.float32)
        sin, cos = table[:, 0::2].astype(x.dtype), table[:, 1::2].astype(x.dtype)
        cat = np.concatenate
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x[..., : d // 2], x[..., d // 2:]
    ra, rb = a * cos - b * sin, a * sin + b * cos
    if layout == "concatenated":
        return cat([ra, rb], -1)
    stacked = torch.stack([ra, rb], -1) if is_torch else np.stack([ra, rb], -1)
    return stacked.reshape(x.shape)


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
