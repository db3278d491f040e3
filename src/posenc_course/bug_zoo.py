"""Positional-encoding mistakes found in real code, each as a small function, with its fix.

Chapter 7 ("Implementations") shows every bug, the check that catches it and the fix. The buggy
versions are written the way people write them; do not use them for anything
else.

====  ==============================================  =========================================
bug   buggy                                           fixed
====  ==============================================  =========================================
1     ``doubled_frequencies``, ``doubled_exponent``   ``posenc.sinusoidal``
2     ``tutorial_recipe`` (odd ``d_model``),          ``recipe_fixed``
      ``recipe_angles_table`` (its float32 angles)
3     ``cosine_own_frequency``                        ``posenc.sinusoidal``
4     ``add_along_batch`` (batch-first input)         ``add_along_seq``
5     ``ParameterTable`` + ``init_all_parameters``    ``posenc.SinusoidalPositionalEncoding``
6     ``HalfAngleEncoding`` after ``.half()``         ``posenc.SinusoidalPositionalEncoding``
====  ==============================================  =========================================

The checks that catch them:

* ``toeplitz_defect``: ``PE @ PE.T`` of a correct table depends on ``p - s``
  only; this measures how far a table is from that.
* ``rotation_residual``: how far ``PE(p + k)`` is from ``T(k) PE(p)`` with
  ``posenc.rotation``; ``best_linear_residual``: how far it is from *any*
  linear map of ``PE(p)``.
* ``duplicate_rows``: how many positions share their vector with an earlier one.

Precision (bug 6 in numbers): ``angles_in_dtype`` forms ``p * omega`` in a
given torch dtype, ``phase_error`` compares it with the exact angle.

Layout variants: ``VARIANTS``, ``variant_table``, ``identify_variant`` and
``mystery_table`` (a table from a variant the caller is not told).

This module is the one gallery of these bugs: the chapters, the grader's bank
(its models of mistakes and the wrong answers it is tested with), the tests
and the benchmarks all import them from here, and none writes them again.
The bank may: this module ships in the same wheel as ``grading`` (which
imports ``posenc_course`` already), so the grader's worker, forked or
spawned, imports it wherever the bank runs. The bank only names mistakes
with it: the grader's expected values never come from here but from its
private copy of ``posenc`` (``grading.reference``). So that a notebook that
patches ``posenc`` cannot move a model of a mistake either, the bugs use
numpy and torch only, never ``posenc`` (the checks and the fixes below may).
A home inside ``grading`` would not do: the chapters would then import the
grader's internals to show a bug.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

import posenc
from posenc_course.arguments import Array, InstanceOf, Int, OneOf, Positions, Real, Tensor, accepts, refuse

__all__ = [
    "doubled_frequencies",
    "doubled_exponent",
    "recipe_frequencies",
    "tutorial_recipe",
    "recipe_angles_table",
    "recipe_fixed",
    "cosine_own_frequency",
    "seq_first_table",
    "add_along_batch",
    "add_along_seq",
    "ParameterTable",
    "init_all_parameters",
    "HalfAngleEncoding",
    "low_precision_table",
    "gram",
    "toeplitz_defect",
    "rotation_residual",
    "best_linear_residual",
    "duplicate_rows",
    "TORCH_DTYPES",
    "angles_in_dtype",
    "phase_error",
    "VARIANTS",
    "variant_table",
    "identify_variant",
    "mystery_table",
]


# What the bugs and checks accept: what the correct versions accept, so that only the bug differs
N = Int(0, 2**24, what="a number of positions from 0 to 16,777,216")
D_MODEL = Int(1, 65536)
BASE = Real(above=1)
TABLE = Array(2, what="a 2-D table (positions x channels) of real numbers")
SHIFT = Int(1, what="an offset k >= 1")
DTYPE = OneOf(
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    what="a torch float dtype: torch.float64, torch.float32, torch.float16 or torch.bfloat16",
)


def _interleave(sin: torch.Tensor, cos: torch.Tensor, d_model: int) -> torch.Tensor:
    out = torch.empty(sin.shape[0], 2 * sin.shape[1], dtype=sin.dtype)
    out[:, 0::2], out[:, 1::2] = sin, cos
    return out[:, :d_model]


def _positions(positions, dtype: torch.dtype) -> torch.Tensor:
    """A count ``n`` as the positions 0 ... n-1, or the list of positions given, in ``dtype``."""
    if isinstance(positions, (int, np.integer)):
        return torch.arange(int(positions), dtype=dtype)
    return torch.as_tensor(np.asarray(positions, dtype=np.float64)).to(dtype)


# --------------------------------------------------------------------------
# Bug 1: the doubled exponent
# --------------------------------------------------------------------------


@accepts(d_model=D_MODEL, base=BASE)
def doubled_frequencies(d_model, base=10000.0) -> np.ndarray:
    """Bug 1 itself: the frequencies of a loop over channels
    ``c = 0, 2, 4, ...`` that still writes ``2 * c / d``."""
    out = []
    for c in range(0, d_model, 2):  # c = 0, 2, 4, ... is a CHANNEL index
        out.append(base ** (-2 * c / d_model))  # bug: 2 * c = 4 i
    return np.array(out)


@accepts(n=Positions(), d_model=D_MODEL, base=BASE)
def doubled_exponent(n, d_model, base=10000.0) -> np.ndarray:
    """Bug 1. The table of ``doubled_frequencies``, for positions
    ``0 ... n-1`` (or the list of positions ``n``).

    ``c`` already is ``2i``, so pair ``i`` gets ``base ** (-4i/d)``: the
    frequency of pair ``2i``. Right shape, values in [-1, 1], wrong numbers.
    Fix: ``posenc.sinusoidal`` (or ``c // 2`` in the exponent).
    """
    position = _positions(n, torch.float64).numpy()
    angle = np.outer(position, doubled_frequencies(d_model, base))
    pe = np.zeros((len(position), d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)[:, : d_model // 2]
    return pe


# --------------------------------------------------------------------------
# Bug 2: the tutorial recipe and odd d_model (and its float32 angles)
# --------------------------------------------------------------------------


@accepts(d_model=D_MODEL, base=BASE, dtype=DTYPE)
def recipe_frequencies(
    d_model,
    base=10000.0,
    dtype=torch.float32,
) -> torch.Tensor:
    """The common torch recipe's frequencies (its ``div_term``): the
    exponent and the ``exp`` both in ``dtype``, a few roundings off in
    float32."""
    step = -math.log(base) / d_model
    return torch.exp(torch.arange(0, d_model, 2, dtype=dtype) * step)


@accepts(n=Positions(), d_model=D_MODEL, base=BASE, dtype=DTYPE)
def tutorial_recipe(
    n,
    d_model,
    base=10000.0,
    dtype=torch.float32,
) -> torch.Tensor:
    """Bug 2 (and bug 6 with ``dtype=torch.float16``): the common torch
    recipe.

    Every step runs in ``dtype``. For odd ``d_model >= 3`` there is one more
    sine column than cosine columns, and ``pe[:, 1::2] = cos(...)`` raises a
    ``RuntimeError`` (a shape mismatch; at width 1 the cosine broadcasts
    into an empty slice). In float32 the angles are off by up to a few times
    ``p * omega * 6e-8`` radians.
    """
    position = _positions(n, dtype).unsqueeze(1)  # 0 ... n-1, or the list n
    pe = torch.zeros(len(position), d_model, dtype=dtype)
    div_term = recipe_frequencies(d_model, base, dtype)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


@accepts(positions=Positions(), d_model=D_MODEL, base=BASE, dtype=DTYPE)
def recipe_angles_table(positions, d_model, base=10000.0, dtype=torch.float32) -> torch.Tensor:
    """The recipe's precision without its shape error: positions and
    ``recipe_frequencies`` in ``dtype``, every width (the cosines cut to the
    ``d_model // 2`` odd columns), for the positions ``0 ... n-1`` or a list."""
    angle = _positions(positions, dtype)[:, None] * recipe_frequencies(d_model, base, dtype)
    return _interleave(torch.sin(angle), torch.cos(angle), d_model)


@accepts(n=N, d_model=D_MODEL, base=BASE)
def recipe_fixed(n, d_model, base=10000.0) -> torch.Tensor:
    """Bug 2 fixed: the cosine is cut to the ``d_model // 2`` odd columns.

    The angles are formed in float64 and only the result is rounded to
    float32, which also removes the recipe's precision loss (within 1e-7 of
    ``posenc`` for positions below about 10**7).
    """
    pe = torch.zeros(n, d_model, dtype=torch.float64)
    position = torch.arange(n, dtype=torch.float64).unsqueeze(1)
    channels = torch.arange(0, d_model, 2, dtype=torch.float64)
    div_term = torch.exp(channels * (-math.log(base) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]
    return pe.float()


# --------------------------------------------------------------------------
# Bug 3: the cosine with its own frequency
# --------------------------------------------------------------------------


@accepts(n=N, d_model=D_MODEL, base=BASE)
def cosine_own_frequency(n, d_model, base=10000.0) -> np.ndarray:
    """Bug 3. Channel ``j`` uses ``base ** (-j / d)``: the cosine of pair
    ``i`` (channel ``2i + 1``) gets exponent ``(2i + 1)/d``, not its sine's
    ``2i/d``.

    A sine and a cosine of different frequencies are not a point on a
    circle: no rotation maps ``PE(p)`` to ``PE(p + k)``. Fix:
    ``posenc.sinusoidal``.
    """
    position = np.arange(n, dtype=np.float64)[:, None]
    channel = np.arange(d_model)
    angle = position / base ** (channel / d_model)
    return np.where(channel % 2 == 0, np.sin(angle), np.cos(angle))


# --------------------------------------------------------------------------
# Bug 4: the encoding added along the batch axis
# --------------------------------------------------------------------------


@accepts(max_len=N, d_model=D_MODEL)
def seq_first_table(max_len, d_model) -> torch.Tensor:
    """The table shaped ``(max_len, 1, d_model)``, for inputs laid out (seq, batch, d_model)."""
    return torch.from_numpy(posenc.sinusoidal(max_len, d_model, dtype=np.float32)).unsqueeze(1)


# Chapters 6 and 7 print the bugs' code, which keeps to the book's code column (tests/test_code_width.py); at its
# wider line length the formatter would join the split strings of the two functions below again.
# fmt: off
@accepts(
    x=Tensor(3, what="a tensor of shape (batch, seq, d_model)"),
    pe=Tensor((2, 3), what="a position table tensor, "
                           "(max_len, 1, d_model) or (max_len, d_model)"),
)
def add_along_batch(x: torch.Tensor, pe: torch.Tensor) -> torch.Tensor:
    """Bug 4. ``x + pe[:x.size(0)]`` with a seq-first table, given a
    batch-first ``x``.

    For ``x`` of shape (batch, seq, d), ``pe[:batch]`` has shape
    (batch, 1, d) and broadcasts over the sequence: every token of sequence
    ``b`` gets ``PE(b)``. No error for any batch size up to ``max_len``.
    """
    return x + pe[: x.size(0)]


@accepts(
    x=Tensor(3, what="a tensor of shape (batch, seq, d_model)"),
    pe=Tensor(3, what="a seq-first position table tensor of shape "
                      "(max_len, 1, d_model)"),
)
def add_along_seq(x: torch.Tensor, pe: torch.Tensor) -> torch.Tensor:
    """Bug 4 fixed: take ``seq`` rows and put them on the sequence axis of a
    batch-first ``x``."""
    return x + pe[: x.size(1)].transpose(0, 1)
# fmt: on


# --------------------------------------------------------------------------
# Bug 5: the table overwritten by weight initialisation
# --------------------------------------------------------------------------


@accepts(max_len=N, d_model=D_MODEL)
class ParameterTable(nn.Module):
    """Bug 5. The fixed table stored as
    ``nn.Parameter(..., requires_grad=False)``.

    ``requires_grad=False`` keeps the optimiser away, but the table is still
    in ``model.parameters()``, so a model-wide initialisation overwrites it.
    Fix: a buffer (``posenc.SinusoidalPositionalEncoding``).
    """

    def __init__(self, max_len, d_model):
        super().__init__()
        values = posenc.sinusoidal(max_len, d_model, dtype=np.float32)
        table = torch.from_numpy(values)
        self.pe = nn.Parameter(table, requires_grad=False)

    def forward(self, x):
        return x + self.pe[: x.shape[1]]


@accepts(
    model=InstanceOf(nn.Module, "a torch module (nn.Module)"),
    std=Real(0),
)
def init_all_parameters(model: nn.Module, std=0.02) -> None:
    """A model-wide initialisation: every parameter from N(0, std**2),
    frozen or not."""
    for p in model.parameters():
        nn.init.normal_(p, std=std)


# --------------------------------------------------------------------------
# Bug 6: angles in half precision
# --------------------------------------------------------------------------


@accepts(d_model=D_MODEL, base=BASE)
class HalfAngleEncoding(nn.Module):
    """Bug 6. Builds the table on the fly in the dtype of its frequency
    buffer.

    After ``model.half()`` (or ``.to(torch.bfloat16)``) the buffer, the
    positions and the angles ``p * omega`` are all half precision: float16
    holds consecutive integers only up to 2048, bfloat16 up to 256, so
    distinct positions get identical vectors. Fix: compute the table in
    float32 or float64 and cast the result
    (``posenc.SinusoidalPositionalEncoding``).
    """

    def __init__(self, d_model, base=10000.0):
        super().__init__()
        self.d_model = d_model
        inv_freq = torch.from_numpy(posenc.frequencies(d_model, base))
        self.register_buffer("inv_freq", inv_freq.float())

    def forward(self, x):
        t = torch.arange(x.shape[1], dtype=self.inv_freq.dtype)
        angles = torch.outer(t, self.inv_freq)
        sin, cos = torch.sin(angles), torch.cos(angles)
        return x + _interleave(sin, cos, self.d_model).to(x.dtype)


@accepts(positions=Positions(count=False), d_model=D_MODEL, base=BASE, dtype=DTYPE)
def low_precision_table(positions, d_model, base=10000.0, dtype=torch.float16) -> np.ndarray:
    """Bug 6 as a table: positions, frequencies and angles all in ``dtype``; float64 result.

    ``dtype=torch.float32`` is the common recipe's precision.
    """
    angles = torch.from_numpy(angles_in_dtype(positions, d_model, base, dtype))
    table = _interleave(torch.sin(angles.to(dtype)), torch.cos(angles.to(dtype)), d_model)
    return table.double().numpy()


# --------------------------------------------------------------------------
# Precision
# --------------------------------------------------------------------------

TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}

# 2 pi as an exact float64 split: _TWO_PI_HI has 27 significant bits (a multiple of 2**-24), so
# k * _TWO_PI_HI is exact for every integer |k| < 2**26; _TWO_PI_LO is the rest, rounded.
_TWO_PI_HI = round(2 * math.pi * 2**24) / 2**24
_TWO_PI_LO = (2 * math.pi - _TWO_PI_HI) + 2.4492935982947064e-16  # 2 pi - fl(2 pi), from mpmath


@accepts(positions=Positions(count=False), d_model=D_MODEL, base=BASE, dtype=DTYPE)
def angles_in_dtype(positions, d_model, base=10000.0, dtype=torch.float32) -> np.ndarray:
    """``p * omega_i`` as code computes it in ``dtype``: ``p`` and ``omega_i`` rounded
    to ``dtype``, their product rounded again. Returned as float64, shape (n, pairs);
    values beyond the dtype's range are ``inf``.
    """
    omega = torch.from_numpy(posenc.frequencies(d_model, base)).to(dtype)
    p = torch.as_tensor(np.asarray(positions, dtype=np.float64)).to(dtype)
    return torch.outer(p, omega).double().numpy()


@functools.lru_cache(maxsize=64)
def _omega_split(d_model: int, base: float) -> tuple:
    """``omega_i = hi + lo`` exactly to float64 precision: ``hi`` a multiple of ``2**-25`` (so that
    ``k * hi`` is exact for every integer ``|k| < 2**27``), ``lo`` the rest. From mpmath at 160 bits."""
    import mpmath

    with mpmath.workprec(160):
        omega = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * i) / d_model) for i in range((d_model + 1) // 2)]
        hi = [mpmath.nint(w * 2**25) / 2**25 for w in omega]
        return (np.array([float(h) for h in hi]), np.array([float(w - h) for w, h in zip(omega, hi)]))


@accepts(positions=Positions(count=False), d_model=D_MODEL, base=BASE, dtype=DTYPE)
def phase_error(positions, d_model, base=10000.0, dtype=torch.float32) -> np.ndarray:
    """|angle computed in ``dtype`` - exact angle|, wrapped to [0, pi], shape (n, pairs).

    Float64 only, the same on every machine: the difference is formed before
    any reduction, as ``(got - k * hi) - k * lo - e * omega`` for ``p = k + e``
    (``k`` an integer, ``omega_i = hi + lo`` split exactly, ``k * hi`` exact),
    then wrapped with 2 pi split as ``hi + lo``. Error about 1e-16 relative
    to the angles (0 where the computed angle is exact). NaN where the dtype overflowed.
    """
    positions = np.asarray(positions)
    got = angles_in_dtype(positions, d_model, base, dtype)
    hi, lo = _omega_split(d_model, base)
    p = positions.astype(np.float64)[:, None]
    k = np.round(p)
    with np.errstate(invalid="ignore"):
        diff = ((got - k * hi) - k * lo) - (p - k) * (hi + lo)
        turns = np.round(diff / (2 * math.pi))
        wrapped = (diff - turns * _TWO_PI_HI) - turns * _TWO_PI_LO
    return np.minimum(np.abs(wrapped), np.pi)


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------


def _as_float64(table) -> np.ndarray:
    if isinstance(table, torch.Tensor):
        table = table.detach().double().numpy()
    return np.asarray(table, dtype=np.float64)


@accepts(table=TABLE)
def gram(table) -> np.ndarray:
    """``PE @ PE.T``: entry (p, q) is the dot product of the vectors of positions p and q."""
    table = _as_float64(table)
    return table @ table.T


@accepts(table=TABLE)
def toeplitz_defect(table) -> float:
    """Largest spread (max - min) along any diagonal of ``PE @ PE.T``, relative to
    the mean squared norm of the rows (``d/2`` for a correct table).

    A correct sinusoidal table of even width gives ``sum_i cos((p - s) omega_i)``,
    the same on each diagonal ``p - s = const``: the defect is 0 up to rounding.
    (For odd width the lone last sine adds ``sin(p w) sin(s w)``, which is not.)
    """
    g = gram(table)
    n = g.shape[0]
    spread = max(np.ptp(np.diagonal(g, k)) for k in range(-(n - 1), n))
    return float(spread / np.mean(np.diag(g)))


@accepts(table=TABLE, k=SHIFT, base=BASE)
def rotation_residual(table, k=1, base=10000.0) -> float:
    """max over p of ``|PE(p + k) - T(k) PE(p)|`` with ``T(k) = posenc.rotation(k, d)``.

    ``table`` holds positions 0, 1, 2, ... in rows, interleaved layout, even ``d``.
    """
    table = _as_float64(table)
    _more_rows_than(table, k)
    if table.shape[1] % 2:
        refuse("table", message=f"table has {table.shape[1]} columns: T(k) needs an even width (whole pairs).")
    t = posenc.rotation(k, table.shape[1], base)
    return float(np.abs(table[k:] - table[:-k] @ t.T).max())


def _more_rows_than(table, k) -> None:
    if table.shape[0] <= k:
        refuse(
            "table", message=f"table has {table.shape[0]} rows: comparing PE(p) with PE(p + {k}) needs more than k={k}."
        )


@accepts(table=TABLE, k=SHIFT)
def best_linear_residual(table, k=1) -> float:
    """Relative residual of the best linear map (least squares) from ``PE(p)`` to ``PE(p + k)``.

    0 up to rounding for any sinusoidal table whatever its frequencies; clearly
    positive when no linear map exists.
    """
    table = _as_float64(table)
    _more_rows_than(table, k)
    before, after = table[:-k], table[k:]
    m, *_ = np.linalg.lstsq(before, after, rcond=None)
    return float(np.linalg.norm(before @ m - after) / np.linalg.norm(after))


@accepts(table=TABLE)
def duplicate_rows(table) -> int:
    """How many rows are exact copies of an earlier row (positions that collide)."""
    table = _as_float64(table)
    return int(table.shape[0] - np.unique(table, axis=0).shape[0])


# --------------------------------------------------------------------------
# Layout variants
# --------------------------------------------------------------------------

VARIANTS = ("interleaved", "concatenated", "cos_first", "fairseq")
VARIANT_NOTES = {
    "interleaved": "sin, cos, sin, cos, ... with omega_i = base**(-2i/d) (the paper)",
    "concatenated": "all sines, then all cosines, same omega_i (posenc's concatenated layout)",
    "cos_first": "all cosines, then all sines, same omega_i (some diffusion codebases)",
    "fairseq": "all sines, then all cosines, omega_i = base**(-i/(h-1)), h = d/2",
}


@accepts(positions=Positions(), d_model=D_MODEL, variant=OneOf(*VARIANTS), base=BASE)
def variant_table(positions, d_model, variant, base=10000.0) -> np.ndarray:
    """The float64 table of one of ``VARIANTS``; ``cos_first`` and ``fairseq`` need even ``d_model >= 4``."""
    if variant in ("interleaved", "concatenated"):
        return posenc.sinusoidal(positions, d_model, base, layout=variant)
    if d_model % 2 or d_model < 4:
        refuse("d_model", message=f"variant {variant!r} needs an even d_model >= 4, got {d_model}.")
    h = d_model // 2
    if variant == "cos_first":
        table = posenc.sinusoidal(positions, d_model, base, layout="concatenated")
        return np.concatenate([table[:, h:], table[:, :h]], axis=1)
    omega = base ** (-np.arange(h) / (h - 1))
    if isinstance(positions, (int, np.integer)):
        positions = np.arange(positions)
    angle = np.outer(np.asarray(positions, dtype=np.float64), omega)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


# Float32 code forms p * omega with omega itself a few float32 roundings off
# (an exp or pow of a rounded exponent x: relative error ~ x eps32, with
# omega = e**-x), so its angle is off by about |p| eps32 (omega/2 + x e**-x)
# <= |p| eps32 radians: 0.5 to 0.75 |p| eps32 measured for fairseq's and
# x-transformers' recipes. 8 |p| eps32 leaves room and still separates VARIANTS.
ANGLE_SLACK = 8 * float(np.finfo(np.float32).eps)


@accepts(table=TABLE, base=BASE, atol=Real(0))
def identify_variant(table, base=10000.0, atol=1e-4) -> str:
    """Which of ``VARIANTS`` produced ``table`` (rows = positions 0, 1, 2, ...)?

    Builds every candidate of the same shape and returns the first that
    matches: row ``p`` may be off by ``atol + ANGLE_SLACK * max(p, 1)``, the
    rounding of the values plus the angle error of a table computed in
    float32 (as real code computes it: ~1.5e-4 at p = 2048); variants still
    differ by far more. Raises ``ValueError`` if none matches.
    """
    table = _as_float64(table)
    n, d = table.shape
    allowed = atol + ANGLE_SLACK * np.maximum(np.arange(n), 1)[:, None]
    for variant in VARIANTS:
        try:
            candidate = variant_table(n, d, variant, base)
        except ValueError:
            continue
        if np.all(np.abs(table - candidate) <= allowed):
            return variant
    refuse("table", message=f"table (shape {table.shape}) matches none of {VARIANTS} at base {base:g}.")


@accepts(number=Int(what="an integer (any: it picks the variant)"), n=N, d_model=Int(4, 65536, even=True))
def mystery_table(number, n=64, d_model=32) -> np.ndarray:
    """A table from a variant the caller is not told (chosen by ``number``), float32."""
    variant = VARIANTS[(7 * int(number) + 3) % len(VARIANTS)]
    return variant_table(n, d_model, variant).astype(np.float32)
