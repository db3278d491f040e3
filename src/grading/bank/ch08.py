"""Questions of chapter 08, rotary embeddings (RoPE) (exercises/08_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import (
    DEGREES_HINT,
    DOUBLED_HINT,
    FLOAT32_HINT,
    PAIR_SHIFT_HINT,
    _beyond_rounding,
    _degrees,
    _doubled_omega,
    _real_array,
    _shifted,
)
from grading.feedback import Model, matches_model
from grading.kinds import Array, Case, Choice, Function, Lazy, Numeric
from grading.reference import posenc
from posenc_course import bug_zoo

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


# ---- Chapter 08: rotary embeddings (RoPE) --------------------------------------
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
    want = _rope_one(x, p, layout)
    error = out.astype(np.float64) - want
    err = np.abs(error).max()
    return 1e-8 < err <= (1e-5 + 3e-7 * abs(p)) * np.abs(x).max() and _beyond_rounding(error, want)


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
            (
                Model(lambda x, p, layout: rope_loop(x, p, layout, dtype=np.float32), signature=_rope_float32),
                FLOAT32_HINT,
            ),
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
        states={"0.05": lambda: bug_zoo.phase_error([10**6], 128).max()},  # a float32 angle
        known_mistakes=[
            (lambda x, p, layout="interleaved": rope_loop(x, p, layout, sign=-1.0), "-p·ω_i"),
            (lambda x, p, layout="interleaved": rope_loop(x, p), "for layout='concatenated'"),
            (lambda x, p, layout="interleaved": rope_loop(x, p, "concatenated"), "for layout='interleaved'"),
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
    Choice(
        "08.3",
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


# ---- 08.4: one rotation as a complex multiplication ------------------------------

_X4 = np.array([1.0, 2.0, 3.0, 4.0])


def _ch08_turned():
    """(1, 2, 3, 4) at p = 3, interleaved, base 10,000: z_i times e^{i p w_i}, read back as pairs."""
    return _rope_one(_X4, 3)


def _as_complex(v):
    return v[0::2] + 1j * v[1::2]


def _ch08_read_swapped():
    """The pairs read as (imaginary, real), z_0 = 2 + 1i, turned and written back (real, imaginary)."""
    z = (_X4[1::2] + 1j * _X4[0::2]) * np.exp(1j * 3 * posenc.frequencies(4))
    return np.stack([z.real, z.imag], -1).reshape(-1)


def _ch08_parts_apart():
    """All real parts, then all imaginary parts: np.concatenate([z.real, z.imag])."""
    z = _as_complex(_ch08_turned())
    return np.concatenate([z.real, z.imag])


_add(
    Array(
        "08.4",
        "a rotation as complex multiplication",
        _ch08_turned,
        atol=1e-6,
        mistakes=[
            (
                lambda: _rope_one(_X4, -3),
                "you turned backwards: multiplying by the conjugate e^{-i p ω_i} rotates by -p·ω_i; "
                "RoPE multiplies by e^{+i p ω_i}.",
            ),
            (
                lambda: _rope_one(_X4, 3, "concatenated"),
                "in the interleaved layout pair i is channels (2i, 2i+1): z_0 = x_0 + i x_1 and z_1 = x_2 + i x_3; "
                "you paired channel i with channel i + 2.",
            ),
            (
                lambda: _ch08_turned()[[1, 0, 3, 2]],
                "each pair is written (real part, imaginary part); you wrote the imaginary part first.",
            ),
            (
                _ch08_read_swapped,
                "you read each pair as (imaginary part, real part): the first channel of a pair is the real part, "
                "z_0 = x_0 + i x_1.",
            ),
            (
                _ch08_parts_apart,
                "the layout is interleaved: each z_i' goes back as its own pair (Re z_i', Im z_i'); you wrote all "
                "the real parts first, then all the imaginary parts.",
            ),
            (lambda: _rope_with(_X4, 3, _doubled_omega(4)), DOUBLED_HINT),
            (lambda: _rope_with(_X4, 3, _degrees(posenc.frequencies(4))), DEGREES_HINT),
            (lambda: _rope_with(_X4, 3, _shifted(4)), PAIR_SHIFT_HINT),
            (lambda: _X4, "that is x itself: multiply each z_i by e^{i p ω_i} before reading the pairs back."),
        ],
        states={"0.01": lambda: posenc.frequencies(4)[1]},
        known_mistakes=[
            (Lazy(lambda: _as_complex(_ch08_turned())), "real"),
        ],
    )
)


# ---- 08.5: which encodings of one pair meet the offset-only requirement ---------

_add(
    Choice(
        "08.5",
        "encodings that meet the offset-only requirement",
        "ABCDE",
        "AD",
        {
            "B": "this is an added encoding: the product has the cross terms q·e^{-isω} + conj(κ)·e^{ipω}, each "
            "tied to one absolute position.",
            "C": "the angles subtract to (p² - s²)ω, which is not a function of p - s: (p, s) = (1, 0) and (2, 1) "
            "have the same offset but angle differences ω and 3ω.",
            "E": "the lengths multiply to 2^(p+s)·|q|·|κ|, which depends on p + s: an encoding that keeps the "
            "requirement may not change lengths.",
        },
        right={
            "A": "the product is q·conj(κ)·e^{i(p-s)ω}: RoPE for one pair.",
            "D": "the constant phase cancels in the product, which is q·conj(κ)·e^{i(p-s)ω} again; only the "
            "extra condition f(z, 0) = z of the derivation rules it out.",
        },
        nudge="Multiply f(q, p) by the conjugate of f(κ, s) for each option and see whether p and s appear only as "
        "p - s.",
        known_mistakes=[("A", "not the right set"), ("ABD", "not the right set"), ("ABCDE", "every option")],
    )
)


# ---- 08.6: predict whether random scores decay ----------------------------------

_add(
    Choice(
        "08.6",
        "does the mean |score| of random q, κ decay",
        "ABCD",
        "B",
        {
            "A": "RoFormer's curve is an upper bound, and a falling bound says nothing about the score: for "
            "independent Gaussian q and κ, T(k)κ is again a Gaussian vector like κ, so the score has the same "
            "distribution at every k.",
            "C": "rotations keep lengths, and T(k)κ has the same distribution as κ at every k: nothing makes the "
            "score grow.",
            "D": "the longest wavelength for d = 128 is tens of thousands of positions, and in any case the "
            "distribution of the score does not depend on k at all.",
        },
        right={
            "B": "T(k)κ is a Gaussian vector with the same distribution as κ, so |qᵀT(k)κ| has one distribution "
            "at every k; its mean is about √(2d/π) at every offset, hundreds to thousands of times below the bound.",
        },
        states={"9.0": lambda: math.sqrt(2 * 128 / math.pi)},
        known_mistakes=[("A", "A: "), ("C", "C: "), ("D", "D: "), ("AB", "exactly one")],
    )
)


# ---- 08.7: RoFormer's curve at one offset ---------------------------------------


def _partial_sums(k, omega):
    """S_1 ... S_{d/2} at offset k: the running sums of e^{i k w_l}."""
    return np.cumsum(np.exp(1j * k * np.asarray(omega, dtype=np.float64)))


def _ch08_curve():
    return float(np.abs(_partial_sums(100, posenc.frequencies(128))).mean())


_add(
    Numeric(
        "08.7",
        "RoFormer's decay curve at k = 100",
        _ch08_curve,
        mistakes=[
            (
                lambda: float(np.abs(_partial_sums(100, posenc.frequencies(128))).sum()),
                "that is the sum of the |S_j|; RoFormer's curve divides it by d/2, the number of pairs.",
            ),
            (
                lambda: float(np.abs(_partial_sums(100, posenc.frequencies(128))[-1])),
                "that is |S_{d/2}|, the size of the whole sum; the curve averages the sizes |S_j| of all d/2 "
                "partial sums.",
            ),
            (
                lambda: float(np.abs(_partial_sums(100, posenc.frequencies(128))[-1]) / 64),
                "that is |S_{d/2}| / (d/2); the curve averages the sizes |S_j| of all d/2 partial sums.",
            ),
            (
                lambda: float(np.abs(np.concatenate([[0], _partial_sums(100, posenc.frequencies(128))[:-1]])).mean()),
                "your partial sums are S_0 ... S_{d/2-1}: S_0 = 0 is the empty sum, and the curve runs over "
                "j = 1 ... d/2.",
            ),
            (
                lambda: float(_partial_sums(100, posenc.frequencies(128)).real.mean()),
                "take the modulus |S_j| of each complex partial sum, not its real part.",
            ),
            (lambda: float(np.abs(_partial_sums(100, _doubled_omega(128))).mean()), DOUBLED_HINT),
        ],
        states={"32.5": lambda: float(np.abs(_partial_sums(0, posenc.frequencies(128))).mean())},
    )
)
