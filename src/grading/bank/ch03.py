"""Questions of chapter 03, frequency analysis (exercises/03_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np

from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    DEGREES_HINT,
    DOUBLED_HINT,
    FLOAT32_ANGLES,
    FLOAT32_HINT,
    PAIR_SHIFT_HINT,
    POSITIONS_HINT,
    SWAP_HINT,
    _degrees,
    _doubled_omega,
    _pe_cases,
    _positions_ignored,
    _shifted,
    _table,
)
from grading.bank.learner_code import PI2, loop_table, torch_table
from grading.feedback import matches_model
from grading.kinds import Array, Choice, Function, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


_PAIRS_03 = [0, 64, 128, 192, 255]


def _doubled_wavelengths(d, base=10000.0):
    return 2 * math.pi / _doubled_omega(d, base)


_add(
    Array(
        "03.1",
        "wavelengths of five pairs",
        lambda: posenc.wavelengths(512)[_PAIRS_03],
        atol=0.0,
        rtol=1e-3,
        mistakes=[
            (
                lambda: np.r_[posenc.wavelengths(512)[_PAIRS_03[:-1]], 2 * math.pi * 10000],
                "your last value is 2π·10000, the wavelength of a pair i = 256 that does not exist; the last pair is "
                "i = 255.",
            ),
            (lambda: _doubled_wavelengths(512)[_PAIRS_03], DOUBLED_HINT),
            (lambda: posenc.frequencies(512)[_PAIRS_03], "these are the frequencies ω_i; the wavelength is 2π/ω_i."),
            (lambda: 1 / posenc.frequencies(512)[_PAIRS_03], "the factor 2π is missing: λ_i = 2π/ω_i."),
            (
                lambda: 360 / posenc.frequencies(512)[_PAIRS_03],
                "that is 360/ω_i, a wavelength in degrees: the angle p·ω_i is in radians, so a full turn is 2π and "
                "λ_i = 2π/ω_i.",
            ),
            (lambda: 2 * math.pi / _shifted(512)[_PAIRS_03], PAIR_SHIFT_HINT),
        ],
        known_mistakes=[
            ([PI2, PI2 * 10, PI2 * 100, PI2 * 1000], "shape"),
        ],
    )
)


def _ch03_cycles():
    return int(np.sum(posenc.wavelengths(512) <= 1000))


_add(
    Numeric(
        "03.2",
        "pairs that cycle within 1000 positions",
        _ch03_cycles,
        integer=True,
        mistakes=[
            (
                lambda: 256 - _ch03_cycles(),
                "you counted the pairs that do NOT complete a cycle (wavelength above 1000).",
            ),
            (lambda: int(np.sum(_doubled_wavelengths(512) <= 1000)), DOUBLED_HINT),
            (
                lambda: int(np.sum(360 / posenc.frequencies(512) <= 1000)),
                "you counted wavelengths in degrees (360/ω_i): the angle p·ω_i is in radians, so a full turn takes "
                "2π/ω_i positions.",
            ),
        ],
        known_mistakes=[
            (140, "too low"),
        ],
    )
)


def _ch03_apart():
    """How far apart PE(0) and PE(1000) are on each pair of d_model = 512."""
    table = posenc.sinusoidal([0, 1000], 512)
    return np.linalg.norm((table[1] - table[0]).reshape(-1, 2), axis=1)


def _ch03_fast():
    """The pairs of d_model = 512 that complete a full turn within 1000 positions."""
    return posenc.wavelengths(512) <= 1000


_add(
    Choice(
        "03.3",
        "PE(0) versus PE(1000)",
        "ABCD",
        "AB",
        {
            "C": "slow pairs change little between neighbours, but they carry a coarse position that grows steadily "
            "with p and never wraps within the context; the fast pairs, which repeat, pin the exact one.",
            "D": "ω_i = base^(-2i/d) decreases with i: small i means high frequency.",
        },
        right={
            "A": "the fast pairs turn through many full cycles in 1000 positions; only the angle left after the last "
            "full turn counts, and it can land anywhere: one fast pair puts the two positions 0.007 apart, "
            "others nearly 2.",
            "B": "from pair 240 on the wavelength exceeds 35,000 positions, so over 1000 positions the angle turns by "
            "under 0.18 rad, and the two points on the circle are closer than that.",
        },
        nudge=(
            "Think in wavelengths: how far does pair i's angle turn over 1000 positions, for small i and for large i?"
        ),
        states={
            "0.007": lambda: _ch03_apart()[_ch03_fast()].min(),
            "2": lambda: _ch03_apart()[_ch03_fast()].max(),
            "less than 0.2": lambda: _ch03_apart()[240:].max(),
            "more than 35,000": lambda: posenc.wavelengths(512)[240:].min(),
            "0.96": lambda: _ch03_apart()[192],
            "240": lambda: int(np.flatnonzero(posenc.wavelengths(512) <= 35_000).max()) + 1,
            "less than 0.18": lambda: 1000 * posenc.frequencies(512)[240:].max(),
        },
        known_mistakes=[("ABC", "wavelengths"), ("CD", "not the right set"), ("ABCD", "every option")],
    )
)

_add(
    Choice(
        "03.4",
        "raising the base",
        "ABCD",
        "AB",
        {
            "C": "a larger base makes ω_i = base^(-2i/d) smaller for every i > 0: fewer pairs are fast, not more.",
            "D": "ω_0 = base^0 = 1 whatever the base.",
        },
        right={
            "A": "ω_i = base^(-2i/d) falls faster with i when the base is larger.",
            "B": "the last pair has λ = 2π·base^((d-2)/d), which grows with the base.",
        },
        nudge=("Write ω_i = base^(-2i/d) and see, for i = 0 and for i > 0, what a larger base does to it."),
        known_mistakes=[("C", "base^(-2i/d)"), ("ABD", "not the right set"), ("ABCD", "every option")],
    )
)

_add(
    Numeric(
        "03.5",
        "longest wavelength at base 500,000",
        lambda: posenc.wavelengths(128, 500000.0)[-1],
        mistakes=[
            (
                lambda: 2 * math.pi * 500000.0,
                "2π·base is a limit the encoding never reaches: the last pair is i = 63, exponent 126/128.",
            ),
            (lambda: _doubled_wavelengths(128, 500000.0)[-1], DOUBLED_HINT),
            (lambda: posenc.wavelengths(128)[-1], "that is the longest wavelength at base 10,000."),
        ],
    )
)


def _ch03_angle():
    """Pair 1's angle at p = 10^6 for d_model = 512: about 964,662 radians, not a float32 number."""
    return 1e6 * float(posenc.frequencies(512)[1])


_add(
    Numeric(
        "03.6",
        "float32 rounding error of an angle near 10^6",
        lambda: float(np.spacing(np.float32(_ch03_angle()))) / 2,
        mistakes=[
            (
                lambda: float(np.spacing(np.float32(_ch03_angle()))),
                "that is the gap between neighbouring float32 numbers; rounding to the nearest is off by at most "
                "half of it.",
            ),
            (lambda: float(np.spacing(_ch03_angle())) / 2, "that is the float64 value; the question is about float32."),
            (
                lambda: float(np.finfo(np.float32).eps),
                "that is the relative precision of float32 near 1; near 10^6 the gap is 10^6 times larger.",
            ),
            (
                lambda: abs(float(np.float32(_ch03_angle())) - _ch03_angle()),
                "that is how far this one angle moves; the question asks how far rounding can move a number of this "
                "size.",
            ),
        ],
        states={"964,662": _ch03_angle},
    )
)

_add(
    Function(
        "03.7",
        "accurate float32 table",
        lambda positions, d: posenc.sinusoidal(positions, d, dtype=np.float32),
        lambda rng: _pe_cases(rng, n_cases=20, max_pos=10**7, max_n=80),
        expected=lambda positions, d: posenc.sinusoidal(positions, d),
        returns="numpy array of shape `(len(positions), d_model)`",
        atol=5e-7,
        dtype=np.float32,
        mistakes=[
            (FLOAT32_ANGLES, FLOAT32_HINT),
            (matches_model(lambda p, d: _table(p, d, _doubled_omega(d))), DOUBLED_HINT),
            (matches_model(lambda p, d: _table(p, d, layout="concatenated")), CONCAT_HINT),
            (matches_model(lambda p, d: _table(p, d, swap=True)), SWAP_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="sin")), COSINE_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="zero")), COSINE_HINT),
            (matches_model(lambda p, d: _table(_positions_ignored(p), d)), POSITIONS_HINT),
            (matches_model(lambda p, d: _table(p, d, _degrees(posenc.frequencies(d)))), DEGREES_HINT),
        ],
        known_mistakes=[
            (lambda p, d: posenc.sinusoidal(p, d), "dtype float32"),
            (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float16), "dtype float32"),
        ],
        alternatives={
            "loop then float32": lambda p, d: loop_table(p, d).astype(np.float32),
            "posenc float32": lambda p, d: posenc.sinusoidal(p, d, dtype=np.float32),
            "torch float64 then float32": lambda p, d: torch_table(p, d).astype(np.float32),
        },
        covers={"positions above 5 million": lambda p, d: np.max(p) > 5e6, "odd d_model": lambda p, d: d % 2 == 1},
    )
)
