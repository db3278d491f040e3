"""Questions of chapter 04, linearity (exercises/04_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np

from grading.bank.common import (
    COSINE_HINT,
    DEGREES_HINT,
    DOUBLED_HINT,
    PAIR_SHIFT_HINT,
    _degrees,
    _doubled_omega,
    _pe,
    _shifted,
)
from grading.bank.learner_code import doubled_frequencies
from grading.feedback import matches_model
from grading.kinds import Array, Case, Choice, Function, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


_SWAP_T = (
    "sine and cosine are swapped: the block that turns a (sin, cos) pair by k·ω is [[cos, sin], [-sin, cos]]; "
    "check with sin(a+b) = sin a cos b + cos a sin b."
)

_add(
    Array(
        "04.1",
        "T(k) for one pair",
        lambda: posenc.rotation(3, 8)[2:4, 2:4],
        atol=1e-6,
        mistakes=[
            (
                lambda: posenc.rotation(3, 8)[2:4, 2:4].T,
                "this is the transpose, the rotation by -k. Check with sin(a+b) = sin a cos b + cos a sin b.",
            ),
            (lambda: posenc.rotation(3, 2), "you rotated by k radians; pair i = 1 turns by k·ω_1."),
            (lambda: _rotation_block(3, _doubled_omega(8)[1]), DOUBLED_HINT),
            (lambda: _rotation_block(3, _degrees(posenc.frequencies(8))[1]), DEGREES_HINT),
            (lambda: _rotation_block(3, posenc.frequencies(8)[1], swap=True), _SWAP_T),
        ],
        known_mistakes=[
            (np.eye(2).ravel(), "shape"),
        ],
    )
)


# A learner's T(k), right and wrong (04.2's known mistakes and alternatives; 04.1's are blocks cut from them)


def rotation_loop(k, d):
    if d % 2:
        raise ValueError("odd d_model has no rotation matrix")
    t = np.zeros((d, d))
    for i in range(d // 2):
        a = k * 10000.0 ** (-2 * i / d)
        t[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    return t


def rotation_transposed(k, d):
    if d % 2:
        raise ValueError("odd")
    return posenc.rotation(k, d).T


def rotation_doubled(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(doubled_frequencies(d)):
        c, s = math.cos(k * w), math.sin(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, s], [-s, c]]
    return t


def rotation_degrees(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(posenc.frequencies(d)):
        a = math.radians(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    return t


def rotation_swapped(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(posenc.frequencies(d)):
        c, s = math.cos(k * w), math.sin(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[s, c], [-c, s]]
    return t


def rotation_odd_silently(k, d):
    t = np.eye(d)
    t[: d - d % 2, : d - d % 2] = posenc.rotation(k, d - d % 2) if d > 1 else 1
    return t


def rotation_index_error(k, d):
    t = np.zeros((d, d))
    w = posenc.frequencies(d)
    for j in range(len(w)):
        c, s = math.cos(k * w[j]), math.sin(k * w[j])
        t[2 * j, 2 * j], t[2 * j, 2 * j + 1], t[2 * j + 1, 2 * j], t[2 * j + 1, 2 * j + 1] = c, s, -s, c
    return t


def right_only_when_small(k, d):
    """Raises (as asked) for odd d, right only for d <= 8 and |k| <= 10."""
    if d % 2:
        raise ValueError("odd")
    return posenc.rotation(k, d) if d <= 8 and abs(k) <= 10 else np.eye(d)


def _rotation_block(k, omega, swap=False):
    c, s = math.cos(k * omega), math.sin(k * omega)
    return np.array([[s, c], [-c, s]]) if swap else np.array([[c, s], [-s, c]])


def _rotation_cases(rng):
    fixed = {0: (3, 8), 1: (-2, 2), 2: (0.5, 4), 4: (1000, 6), 5: (-7, 64), 6: (2.25, 10)}
    cases = []
    for n in range(24):
        if n % 4 == 3:
            d = 2 * int(rng.integers(0, 40)) + 1
            cases.append(
                Case(
                    (int(rng.integers(-50, 50)), d),
                    f"odd d_model = {d}",
                    raises=ValueError,
                    note="no T(k) exists: the last channel is a sine without its cosine partner",
                )
            )
            continue
        if n in fixed:
            k, d = fixed[n]
        else:
            d = 2 * int(rng.integers(1, 40))
            k = int(rng.integers(-(10**4), 10**4)) if n % 2 else float(rng.uniform(-100, 100))
        cases.append(Case((k, d), f"k = {k:g}, d_model = {d}"))
    return cases


_add(
    Function(
        "04.2",
        "write T(k)",
        lambda k, d: posenc.rotation(k, d),
        _rotation_cases,
        expected=lambda k, d: posenc.rotation(k, d),
        returns="numpy array of shape `(d_model, d_model)`",
        atol=1e-8,
        own_code=True,
        mistakes=[
            (
                matches_model(lambda k, d: posenc.rotation(k, d).T),
                "this is T(-k), the transpose: with (sin, cos) in a pair, the block is [[cos, sin], [-sin, cos]].",
            ),
            (matches_model(lambda k, d: _block_diag(k, _doubled_omega(d))), DOUBLED_HINT),
            (
                matches_model(lambda k, d: posenc.rotation(k, d, layout="concatenated")),
                "that is T(k) for the concatenated layout; use the interleaved one.",
            ),
            (matches_model(lambda k, d: _block_diag(k, _degrees(posenc.frequencies(d)))), DEGREES_HINT),
            (matches_model(lambda k, d: _block_diag(k, posenc.frequencies(d), swap=True)), _SWAP_T),
            (matches_model(lambda k, d: _block_diag(k, _shifted(d))), PAIR_SHIFT_HINT),
        ],
        known_mistakes=[
            (rotation_transposed, "T(-k)"),
            (rotation_doubled, "doubled"),
            (rotation_odd_silently, "should raise ValueError"),
            (lambda k, d: posenc.rotation(k, d, layout="concatenated"), "concatenated"),
            (rotation_index_error, "IndexError"),
            (rotation_degrees, "degrees"),
            (rotation_swapped, "swapped"),
            (right_only_when_small, "k = 1000"),
        ],
        alternatives={"loop": rotation_loop, "posenc": lambda k, d: posenc.rotation(k, d)},
        covers={
            "negative k": lambda k, d: k < 0,
            "fractional k": lambda k, d: k != int(k),
            "|k| above 1000": lambda k, d: abs(k) > 1000,
            "d_model above 20": lambda k, d: d > 20,
        },
    )
)


def _block_diag(k, omegas, swap=False):
    t = np.zeros((2 * len(omegas), 2 * len(omegas)))
    for i, w in enumerate(omegas):
        t[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = _rotation_block(k, w, swap)
    return t


_add(
    Choice(
        "04.3",
        "sine only",
        "ABCD",
        "AB",
        {
            "C": "two sines of different frequencies cannot produce cos(p·ω): that needs a cosine of the same "
            "frequency.",
            "D": "a sine is bounded by 1 whatever the position.",
        },
        right={
            "A": "sin(0) = 0 in every channel, and a matrix maps the zero vector only to zero.",
            "B": "the angle-addition formula needs cos(p·ω) next to sin(p·ω); without it no fixed matrix works.",
        },
        nudge=(
            "A linear map must send PE(0) to PE(k) and obey sin(a + b) = sin a cos b + cos a sin b: what must the "
            "encoding store for that?"
        ),
        known_mistakes=[("C", "PE(0) to PE(k)"), ("ABC", "not the right set"), ("ABCD", "every option")],
    )
)

_add(
    Choice(
        "04.4",
        "where, and how far apart",
        "ABCDE",
        "AB",
        {
            "C": "the sinusoidal encoding is fixed by a formula; nothing in it is learned.",
            "D": "the formula is defined at every position, but a model trained on short sequences has never seen "
            "the larger phases, and measured extrapolation is poor.",
            "E": "PE(p)·PE(s) = Σ cos((p - s)ω_i), which is not zero in general.",
        },
        right={
            "A": "distinct positions get distinct vectors: the encoding says where a token is.",
            "B": "T(k) does not depend on p: the same linear map expresses 'k further on' everywhere.",
        },
        nudge=(
            "Which properties are facts about the formula itself, true at every position, rather than hopes about "
            "training or about lengths never seen?"
        ),
        known_mistakes=[("ABD", "lengths never seen"), ("AE", "not the right set"), ("ABCDE", "every option")],
    )
)


def _ch04_dot():
    return float(_pe(0, 64) @ _pe(7, 64))


_add(
    Numeric(
        "04.5",
        "PE(p)·PE(p+7)",
        _ch04_dot,
        mistakes=[
            (lambda: 64 / 2, "that is PE(p)·PE(p) = d/2, the offset 0; the question asks for offset 7."),
            (
                lambda: _ch04_dot() / 32,
                "that is the cosine similarity (divided by the norms, d/2 = 32); give the plain dot product.",
            ),
            (lambda: float(np.sum(np.cos(7 * _doubled_omega(64)))), DOUBLED_HINT),
            (lambda: 0.0, COSINE_HINT + " (Without them PE(0) is the zero vector.)"),
        ],
    )
)

_add(
    Choice(
        "04.6",
        "odd d_model",
        "ABC",
        "B",
        {
            "A": "the last channel holds sin(p·ω) alone, and sin(a + b) is not a fixed multiple of sin(a) for all a.",
            "C": "the obstacle is the missing cosine partner, for integer and fractional k alike.",
        },
        right={
            "B": "the last channel is sin(p·ω) without its cosine, and sin(a + b) needs cos a.",
        },
        known_mistakes=[("A", "A: "), ("C", "C: "), ("AB", "exactly one")],
    )
)


def _ch04_concat():
    return posenc.rotation(2, 6, layout="concatenated")


_add(
    Array(
        "04.7",
        "T(k) in the concatenated layout",
        _ch04_concat,
        atol=1e-6,
        mistakes=[
            (
                lambda: posenc.rotation(2, 6),
                "that is T(2) for the interleaved layout; permute rows and columns with posenc.layout_permutation(6).",
            ),
            (
                lambda: posenc.rotation(2, 6)[np.ix_(*[np.argsort(posenc.layout_permutation(6))] * 2)],
                "you permuted the wrong way (with the inverse permutation).",
            ),
            (lambda: _ch04_concat().T, "this is the transpose, T(-2)."),
        ],
    )
)
