"""Questions of chapter 08, rotary embeddings (RoPE) and ALiBi (exercises/08_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.reference import posenc
from grading.bank import _add
from grading.kinds import Array, Case, Choice, Function, Lazy, Numeric
from grading.feedback import matches_model
from grading.bank.common import (
    DEGREES_HINT,
    DOUBLED_HINT,
    FLOAT32_HINT,
    PAIR_SHIFT_HINT,
    _degrees,
    _doubled_omega,
    _real_array,
    _shifted,
)


# ---- Chapter 08: rotary embeddings (RoPE) and ALiBi ------------------------
# (appended as one block)

_add(
    Choice(
        "08.1",
        "why the RoPE score depends on p - s",
        "ABCD",
        "A",
        {
            "B": "the fastest pair turns a whole radian per position; nothing about RoPE needs small angles.",
            "C": "RoPE adds nothing to queries, keys or tokens: it only rotates queries and keys.",
            "D": "rotations do keep norms, but that alone says nothing about which positions the score depends on; "
            "the composition rule T(p) T(s)ᵀ = T(p - s) does.",
        },
        right={
            "A": "T(p) T(s)ᵀ = T(p - s): rotations compose by adding angles.",
        },
        known_mistakes=[("B", "small angles"), ("C", "adds nothing"), ("D", "composition rule"), ("AB", "exactly one")],
    )
)


def _rope_one(x, p, layout="interleaved"):
    return posenc.apply_rope(np.asarray(x, dtype=np.float64)[None], [p], layout=layout)[0]


def _rope_with(x, p, omega, layout="interleaved", swap=False):
    """RoPE of one vector with arbitrary frequencies ``omega`` (models of mistakes)."""
    x = np.asarray(x, dtype=np.float64)
    h = x.shape[0] // 2
    angle = p * np.asarray(omega[:h], dtype=np.float64)
    c, s = (np.sin(angle), np.cos(angle)) if swap else (np.cos(angle), np.sin(angle))
    a, b = (x[0::2], x[1::2]) if layout == "interleaved" else (x[:h], x[h:])
    ra, rb = a * c - b * s, a * s + b * c
    if layout == "interleaved":
        return np.stack([ra, rb], -1).reshape(-1)
    return np.concatenate([ra, rb])


def _rope_cases(rng):
    widths = [2, 4, 8, 64, 6, 128, 10, 16]
    fixed_p = [0, 1, 5, 1000, 123_456, 7, 999_999, 3]
    cases = []
    for k in range(24):
        d = widths[k] if k < len(widths) else 2 * int(rng.integers(1, 100))
        p = fixed_p[k] if k < len(fixed_p) else int(rng.integers(0, 10**6))
        layout = "concatenated" if k % 3 == 2 else "interleaved"
        cases.append(Case((rng.normal(size=d), p, layout), f"d = {d}, p = {p:,}, layout = {layout!r}"))
    return cases


def _rope_float32(out, case):
    """True when the error grows with the position like float32 angles (about p·6e-8 radians)."""
    x, p, layout = case.args
    if not _real_array(out) or out.shape != x.shape:
        return False
    err = np.abs(out.astype(np.float64) - _rope_one(x, p, layout)).max()
    return 1e-8 < err <= (1e-5 + 3e-7 * abs(p)) * np.abs(x).max()


# A learner's RoPE, right and wrong (08.2's known mistakes and alternatives)


def rope_loop(x, p, layout="interleaved", base=10000.0, sign=1.0, exponent=2.0, dtype=np.float64, swap=False):
    """RoPE of one vector written with a loop over pairs; the keywords model real mistakes."""
    d = len(x)
    out = np.array(x, dtype=np.float64)
    for i in range(d // 2):
        k = 2 * i if exponent == "channel" else i  # "channel": i counts channels 0, 2, 4, ... (doubled exponent)
        w = dtype(base) ** (dtype(-2.0 * k / d))
        angle = float(dtype(sign * p) * w)
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        cos, sin = (math.sin, math.cos) if swap else (math.cos, math.sin)
        out[a] = x[a] * cos(angle) - x[b] * sin(angle)
        out[b] = x[a] * sin(angle) + x[b] * cos(angle)
    return out


def rope_complex(x, p, layout="interleaved"):
    """A correct answer written with complex numbers."""
    d = len(x)
    pairs = x[0::2] + 1j * x[1::2] if layout == "interleaved" else x[: d // 2] + 1j * x[d // 2 :]
    z = pairs * np.exp(1j * p * 10000.0 ** (-2.0 * np.arange(d // 2) / d))
    return np.stack([z.real, z.imag], -1).reshape(-1) if layout == "interleaved" else np.concatenate([z.real, z.imag])


def rope_in_place(x, p, layout="interleaved"):
    x[:] = rope_loop(x, p, layout)
    return x


_add(
    Function(
        "08.2",
        "RoPE for one vector, both layouts",
        _rope_one,
        _rope_cases,
        expected=_rope_one,
        returns="numpy array of shape `(d,)`",
        atol=1e-8,
        call=lambda f, x, p, layout: f(x, p, layout=layout),
        own_code=True,
        mistakes=[
            (
                matches_model(lambda x, p, layout: _rope_one(x, -p, layout)),
                "you rotated by -p·ω_i: the rotated pair is (x_a cos - x_b sin, x_a sin + x_b cos).",
            ),
            (matches_model(lambda x, p, layout: _rope_with(x, p, _doubled_omega(len(x)), layout)), DOUBLED_HINT),
            (
                matches_model(lambda x, p, layout: _rope_one(x, p) if layout == "concatenated" else None),
                "for layout='concatenated' pair i is channels (i, i + d/2); you paired neighbouring channels.",
            ),
            (
                matches_model(
                    lambda x, p, layout: _rope_one(x, p, "concatenated") if layout == "interleaved" else None
                ),
                "for layout='interleaved' pair i is channels (2i, 2i+1); you used the half-split pairs (i, i + d/2).",
            ),
            (_rope_float32, FLOAT32_HINT),
            (
                matches_model(lambda x, p, layout: _rope_with(x, p, posenc.frequencies(len(x)), layout, swap=True)),
                "sine and cosine are swapped: the rotated pair is (x_a cos - x_b sin, x_a sin + x_b cos).",
            ),
            (
                matches_model(lambda x, p, layout: _rope_with(x, p, _degrees(posenc.frequencies(len(x))), layout)),
                DEGREES_HINT,
            ),
            (matches_model(lambda x, p, layout: _rope_with(x, p, _shifted(len(x)), layout)), PAIR_SHIFT_HINT),
            (
                matches_model(lambda x, p, layout: x if p else None),
                "you returned x unchanged: the position p is ignored; rotate each pair by the angle p·ω_i.",
            ),
        ],
        known_mistakes=[
            (lambda x, p, layout="interleaved": rope_loop(x, p, layout, sign=-1.0), "-p·ω_i"),
            (lambda x, p, layout="interleaved": rope_loop(x, p, layout, exponent="channel"), "doubled"),
            (lambda x, p, layout="interleaved": rope_loop(x, p), "for layout='concatenated'"),
            (lambda x, p, layout="interleaved": rope_loop(x, p, "concatenated"), "for layout='interleaved'"),
            (lambda x, p, layout="interleaved": rope_loop(x, p, layout, dtype=np.float32), "float32"),
            (rope_in_place, "changed its input"),
            (lambda x, p, layout="interleaved": torch.from_numpy(rope_loop(x, p, layout)), "torch tensor"),
            (lambda x, p, layout="interleaved": rope_loop(x, p, layout, swap=True), "swapped"),
        ],
        alternatives={
            "complex numbers": rope_complex,
            "loop over pairs": lambda x, p, layout="interleaved": rope_loop(x, p, layout),
            "layout keyword-only": lambda x, p, *, layout: rope_complex(x, p, layout),
            "apply_rope": lambda x, p, layout="interleaved": posenc.apply_rope(x[None], [p], layout=layout)[0],
            "rotation matrix": lambda x, p, layout="interleaved": (
                posenc.rotation(p, len(x)).T @ x
                if layout == "interleaved"
                else (posenc.rotation(p, len(x), layout="concatenated").T @ x)
            ),
        },
        covers={
            "p near 10^6": lambda x, p, layout="interleaved": p > 9e5,
            "concatenated layout": lambda x, p, layout="interleaved": layout == "concatenated",
            "d above 150": lambda x, p, layout="interleaved": len(x) > 150,
        },
    )
)


_add(
    Numeric(
        "08.3",
        "ALiBi slope of head 3 of 16",
        lambda: posenc.alibi_slopes(16)[2],
        mistakes=[
            (lambda: 2.0**-3, "that is 2^(-h), the rule for 8 heads; for n heads the slopes are 2^(-8h/n)."),
            (
                lambda: posenc.alibi_slopes(16)[1],
                "heads are counted from h = 1 (the first slope is 2^(-8/n)), so head 3 has h = 3.",
            ),
            (lambda: posenc.alibi_slopes(16)[3], "that is head 4; head 3 has h = 3 in 2^(-8h/n)."),
            (lambda: 2.0 ** (-3 / 16), "the exponent is -8h/n: the factor 8 is missing."),
            (
                lambda: 2.0 ** (8 * 3 / 16),
                "the exponent has the wrong sign: the slopes are 2^(-8h/n) = (1/2)^(8h/n), below 1; "
                "you used 2 where 1/2 belongs.",
            ),
        ],
        known_mistakes=[
            (0.125, "8 heads"),
            (0.5, "counted from h = 1"),
            (0.25, "head 4"),
            (2 ** (-3 / 16), "factor 8"),
            (2 ** (24 / 16), "wrong sign"),
        ],
    )
)

_add(
    Choice(
        "08.4",
        "equal RoPE scores",
        "ABCDE",
        "ABD",
        {
            "C": "the offsets are +7 and -7, and T(7) ≠ T(-7): RoPE, unlike PE(p)·PE(s), can tell ahead from behind.",
            "E": "the offsets are 2 and 4; RoPE depends on the difference p - s, not on the ratio.",
        },
        right={
            "A": "both offsets are p - s = -7: equal scores.",
            "B": "both offsets are -7: RoPE only sees p - s.",
            "D": "both offsets are 0: the score is q·κ in both.",
        },
        nudge=(
            "RoPE's score depends on the positions through one quantity only: compute it for both pairs of each option."
        ),
        known_mistakes=[("ABCD", "one quantity only"), ("AB", "not the right set"), ("ABCDE", "every option")],
    )
)

_add(
    Numeric(
        "08.5",
        "position-interpolation factor",
        lambda: 4096 / 16384,
        mistakes=[
            (
                lambda: 16384 / 4096,
                "that stretches positions further out; interpolation squeezes the new positions "
                "into the trained range: multiply by L_train / L_new.",
            ),
            (lambda: 16384 - 4096, "the factor is a ratio of the two lengths, not their difference."),
            (
                lambda: 1 / 16384,
                "that is 1 / L_new, which would squeeze every position into [0, 1); the factor is L_train / L_new.",
            ),
        ],
        known_mistakes=[(4, "squeezes"), (12288, "difference"), (1 / 16384, "L_train / L_new")],
    )
)


def _ch07_bias_row():
    return posenc.alibi_bias(4, 6)[1, 5]


def _alibi_row(slope):
    """The bias of the query at position 5 against keys 0 ... 5 for a head of this slope."""
    return -slope * (5 - np.arange(6))


# 4 heads: m_h = 2^(-8h/4) = 2^(-2h), so head 1 has 1/4, head 2 (asked) 1/16, head 3 1/64, head 4 1/256.
_add(
    Array(
        "08.6",
        "ALiBi bias of one query",
        _ch07_bias_row,
        atol=1e-6,
        mistakes=[
            (lambda: -_ch07_bias_row(), "the sign is wrong: ALiBi subtracts m·(p - s), a penalty for distant keys."),
            (
                lambda: _ch07_bias_row()[::-1],
                "the keys are in reverse order: the key at s = 0 is the farthest, the key at s = 5 the query itself.",
            ),
            (
                lambda: _alibi_row(2.0**-6),
                "that is head 3 (slope 2^(-8·3/4) = 2^(-6)): heads are numbered from h = 1, "
                "while numpy indices start at 0.",
            ),
            (
                lambda: _alibi_row(2.0**-2),
                "that slope, 2^(-2), belongs to head 1 of 4 heads (2^(-8·1/4)); it is also "
                "2^(-h), the rule for 8 heads, at h = 2. "
                "For n heads, head h has the slope 2^(-8h/n).",
            ),
            (
                lambda: _alibi_row(2.0**-8),
                "that is head 4 (slope 2^(-8·4/4) = 2^(-8)), the last and flattest head; "
                "for n heads, head h has the slope 2^(-8h/n).",
            ),
            (
                lambda: _alibi_row(1.0),
                "the slope is missing: that is the distance 5 - s alone (m = 1); multiply it by "
                "head 2's slope, 2^(-8h/n) with h = 2 and n = 4.",
            ),
        ],
        known_mistakes=[
            (Lazy(lambda: -_ch07_bias_row()), "sign"),
            (Lazy(lambda: _ch07_bias_row()[::-1]), "reverse order"),
            (Lazy(lambda: posenc.alibi_bias(4, 6)[2, 5]), "head 3"),
            (Lazy(lambda: _ch07_bias_row()[1:]), "shape"),
            (Lazy(lambda: np.round(_ch07_bias_row(), 1)), "elements are wrong"),
        ],
    )
)
