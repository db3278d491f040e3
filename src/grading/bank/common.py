"""What several chapters' questions share: models of real mistakes (to name a bug in feedback), their hints,
test inputs."""

from __future__ import annotations

import math

import numpy as np

from grading.feedback import Model
from grading.kinds import Case
from grading.reference import posenc
from posenc_course import bug_zoo


def _table(positions, d, omega=None, *, layout="interleaved", swap=False, cosine="cos"):
    """float64 sinusoidal table built from arbitrary frequencies ``omega``. ``cosine``: what the cosine channels
    hold, "cos" (right), "sin" (the cosine forgotten: a sine in every channel) or "zero" (left at 0)."""
    if cosine != "cos" and d < 2:  # no cosine channel: the mistake changes nothing, so it cannot be named
        raise ValueError("d_model = 1 has no cosine channel")
    omega = posenc.frequencies(d) if omega is None else np.asarray(omega)
    angle = np.outer(np.asarray(positions, dtype=np.float64), omega)
    s, c = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    c = {"cos": c, "sin": s, "zero": np.zeros_like(c)}[cosine]
    out = np.empty((angle.shape[0], 2 * angle.shape[1]))
    out[:, 0::2], out[:, 1::2] = s, c
    out = out[:, :d]
    return out[:, posenc.layout_permutation(d)] if layout == "concatenated" else out


def _doubled_omega(d, base=10000.0):
    """The loop ``for i in range(0, d, 2)`` with ``2 * i / d``: i is already 2k (the bug zoo's bug 1)."""
    return bug_zoo.doubled_frequencies(d, base)


def _shifted(d, base=10000.0):
    """Pairs counted from 1: the frequencies ω_1 ... ω_ceil(d/2), one pair too far along (i + 1 for i)."""
    return base ** (-2.0 * (np.arange((d + 1) // 2) + 1) / d)


def _positions_ignored(positions):
    """What a learner who writes np.arange(len(positions)) (or arange(n)) uses instead of the positions given.
    Positions that already are 0 ... n-1 raise: ignoring them changes nothing, so the mistake cannot be named."""
    ignored = np.arange(len(positions))
    if np.array_equal(np.asarray(positions), ignored):
        raise ValueError("the positions given are 0 ... n-1")
    return ignored


def _float32_angles(positions, d, layout="interleaved"):
    """The common PyTorch recipe: positions and angles in float32 (the bug zoo's), float64 result."""
    out = bug_zoo.recipe_angles_table(positions, d).double().numpy()
    return out[:, posenc.layout_permutation(d)] if layout == "concatenated" else out


def _real_array(out) -> bool:
    """Is ``out`` a numpy array of real numbers (what the mistake models below can inspect)?"""
    return isinstance(out, np.ndarray) and out.dtype.kind in "fiu"


def _error_grows_with_position(out, case):
    """True when every row's error fits within float32 rounding of the angle p·ω (about p·6e-8)."""
    positions, d, layout = np.asarray(case.args[0]), case.args[1], (case.args[2:] or ["interleaved"])[0]
    if not _real_array(out):
        return False
    return _float32_rows(out, posenc.sinusoidal(positions, d, layout=layout), positions)


_U32 = np.finfo(np.float32).eps / 2  # float32's unit roundoff


def _beyond_rounding(error, want) -> bool:
    """Is the error somewhere larger than rounding the right values ``want`` to float32 gives? (A right answer
    returned in float32 is told so by the check itself; its error does not grow with the position.)"""
    return bool(np.any(np.abs(error) > 2 * _U32 * np.abs(want) + 1e-12))


def _float32_rows(out, want, positions, floor=2e-7) -> bool:
    """Does the error of each row of ``out`` (one per position) fit float32 rounding of the angles p·ω, and exceed
    ``floor`` (what float64 would give, or the question's tolerance) and the rounding of ``want`` to float32
    somewhere?"""
    error = np.asarray(out, dtype=np.float64) - want
    err = np.abs(error).max(axis=-1)
    if err.ndim > 1:  # a batch: the worst over its sequences
        err = err.max(axis=0)
    return err.max() > floor and _beyond_rounding(error, want) and bool(np.all(err <= 1e-5 + 1e-6 * np.abs(positions)))


# Angles formed in float32, named by the shape of the error (each recipe rounds differently): the table questions'
# mistake, its model the common recipe
FLOAT32_ANGLES = Model(
    lambda positions, d, layout="interleaved": _float32_angles(positions, d, layout),
    signature=_error_grows_with_position,
)

_FLOAT32_U = f"{np.finfo(np.float32).eps / 2:.0e}".replace("e-0", "e-")  # float32's unit roundoff, written 6e-8
FLOAT32_HINT = (
    "the error grows with the position, the mark of angles p·ω computed in float32 "
    f"(about p·{_FLOAT32_U} radians off). Form the angles in float64 and convert only the result."
)
DOUBLED_HINT = (
    "your exponent is doubled: i counts (sin, cos) pairs, so ω_i = base^(-2i/d). "
    "If you loop over channels 0, 2, 4, ..., that channel index already is 2i."
)
CONCAT_HINT = (
    "you used the concatenated layout (all sines, then all cosines); this one interleaves sin, cos, sin, cos, ..."
)
SWAP_HINT = "sine and cosine are swapped: channel 2i holds the sine, channel 2i+1 the cosine."
DEGREES_HINT = (
    "your angles were treated as degrees (np.radians, np.deg2rad, π/180 or 360 somewhere): p·ω_i is "
    "already in radians, which np.sin and np.cos take; convert nothing."
)
INVERTED_BASE_HINT = (
    "the exponent has the wrong sign: ω_i = base^(-2i/d) = (1/base)^(2i/d), which falls with i; "
    "you used base^(2i/d), base where 1/base belongs."
)
FACTOR2_HINT = "the factor 2 in the exponent is missing: ω_i = base^(-2i/d), with 2i, not i, over d."
COSINE_HINT = (
    "the cosines are missing: each pair holds the sine AND the cosine of the same angle p·ω_i; "
    "your cosine channels hold a sine again, or stay 0."
)
POSITIONS_HINT = (
    "your rows encode 0, 1, 2, ... whatever `positions` holds: row r must encode positions[r], "
    "the position given (not its index r); the test positions are scattered and large."
)
PAIR_SHIFT_HINT = (
    "your pairs are counted from 1 (i + 1 where i belongs): the first pair is i = 0, whose "
    "frequency is base^0 = 1, and the last is i = ceil(d/2) - 1."
)


def _degrees(omega):
    """Frequencies as a learner who converts the angle p·ω from degrees to radians uses them."""
    return np.asarray(omega) * math.pi / 180


def _inverted(d, base=10000.0):
    """ω_i = base^(+2i/d): base where 1/base belongs."""
    return base ** (2.0 * np.arange((d + 1) // 2) / d)


def _pe_cases(rng, n_cases=24, max_pos=10**6, max_n=120, layouts=False):
    """Position arrays (some contiguous, some scattered and large) and d_model, odd and even;
    with ``layouts``, every fourth case asks for the concatenated layout."""
    cases = []
    widths = [8, 1, 2, 3, 5, 16, 7, 64, 33, 128, 129, 4]
    for k in range(n_cases):
        d = widths[k] if k < len(widths) else int(rng.integers(1, 130))
        n = int(rng.integers(1, max_n))
        if k % 3 == 0:
            positions = np.arange(n)
        else:
            positions = np.sort(rng.integers(0, max_pos, size=n))
            positions[0] = int(rng.integers(0, 50))
        odd = f"d_model = {d} is odd: there is one more sine column than cosine columns" if d % 2 else ""
        label = f"{n} positions up to {positions.max():,} and d_model = {d}"
        if layouts:
            layout = "concatenated" if k % 4 == 2 else "interleaved"
            cases.append(Case((positions, d, layout), f"{label}, layout = {layout!r}", note=odd))
        else:
            cases.append(Case((positions, d), label, note=odd))
    return cases


def fixed_then_random(rng, total, fixed, draw):
    """The parameters of a question's ``total`` test inputs, one by one: the ``fixed`` ones first (the cases its text
    promises, and the edges), then ``draw(rng)`` for each of the others. A generator: each draw happens when the
    caller's loop reaches it, between the caller's own draws from ``rng``."""
    for i in range(total):
        yield fixed[i] if i < len(fixed) else draw(rng)


def _pe(p, d, **kw):
    return posenc.sinusoidal([p], d, **kw)[0]
