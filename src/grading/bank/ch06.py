"""Questions of chapter 06, precision (exercises/06_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    FLOAT32_HINT,
    POSITIONS_HINT,
    SWAP_HINT,
    _pe_cases,
    _positions_ignored,
    _real_array,
    _table,
)
from grading.bank.learner_code import float32_table, loop_table, torch_table
from grading.feedback import Model, matches_model
from grading.kinds import Choice, Function, Numeric
from grading.reference import posenc

# ---- Chapter 06: precision ------------------------------------------------
from posenc_course import bug_zoo

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append

_FORMATS_06 = ["float64", "float32", "float16", "bfloat16"]


def _first_inexact_integer(dtype):
    """The smallest non-negative integer that ``dtype`` cannot hold exactly."""
    bits = round(-math.log2(torch.finfo(dtype).eps)) + 1
    candidates = torch.arange(2**bits - 4, 2**bits + 4, dtype=torch.float64)
    exact = candidates.to(dtype).double() == candidates
    return int(candidates[~exact][0].item())


_add(
    Numeric(
        "06.1",
        "first integer bfloat16 cannot hold",
        lambda: _first_inexact_integer(torch.bfloat16),
        integer=True,
        mistakes=[
            (
                lambda: _first_inexact_integer(torch.bfloat16) - 1,
                "that one is still exact (a power of two); the next integer is the first that is not.",
            ),
            (
                lambda: _first_inexact_integer(torch.float16),
                "that is float16's (11 significant bits); bfloat16 keeps only 8.",
            ),
            (
                lambda: _first_inexact_integer(torch.float32),
                "that is float32's (24 significant bits); bfloat16 keeps only 8.",
            ),
        ],
        known_mistakes=[(256.5, "whole number")],
    )
)


def _ch06_first_collision():
    for letter, name in zip("ABCD", _FORMATS_06):
        rows = bug_zoo.low_precision_table([1000, 1001], 64, dtype=bug_zoo.TORCH_DTYPES[name])
        if np.array_equal(rows[0], rows[1]):
            return letter
    return "E"


_add(
    Choice(
        "06.2",
        "positions 1000 and 1001",
        "ABCDE",
        _ch06_first_collision(),
        {
            "A": "float64 holds every integer up to 2^53 exactly.",
            "B": "float32 holds every integer up to 2^24 = 16,777,216 exactly.",
            "C": "float16 holds every integer up to 2048, so 1000 and 1001 stay distinct and so do their angles.",
            "D": "bfloat16 keeps 8 significant bits: between 512 and 1024 it holds only multiples of 4.",
            "E": "one of the formats has too few significant bits for positions near 1000.",
        },
        known_mistakes=[("C", "C: "), ("E", "E: "), ("CD", "exactly one"), ("A", "2^53")],
    )
)


def _ch06_collisions(n=20000, dtype=torch.float16):
    positions = torch.arange(n, dtype=torch.float64)
    return int(n - len(torch.unique(positions.to(dtype))))


_add(
    Numeric(
        "06.3",
        "float16 collisions below 20,000",
        _ch06_collisions,
        integer=True,
        mistakes=[
            (
                lambda: 20000 - _ch06_collisions(),
                "that is the number of distinct vectors; the question asks how many positions lose their own.",
            ),
            (
                lambda: _ch06_collisions(dtype=torch.bfloat16),
                "that is the bfloat16 count; the question is about float16.",
            ),
            (
                lambda: 20000 - 2049,
                "not every position above 2048 collides: the spacing of float16 numbers is 2 up to 4096, "
                "4 up to 8192, and so on, so some positions above 2048 keep their own vector.",
            ),
            (lambda: 0, "float16 holds every integer only up to 2048; above it, positions round onto each other."),
        ],
    )
)


def _half_table(positions, d):
    return posenc.sinusoidal(positions, d, dtype=np.float32).astype(np.float16)


def _collides(out, case):
    """True when distinct positions got identical rows (angles computed in half precision)."""
    positions = np.asarray(case.args[0])
    return (
        _real_array(out)
        and out.ndim == 2
        and out.shape[0] == len(positions)
        and len(np.unique(positions)) == len(positions)
        and bug_zoo.duplicate_rows(out) > 0
        and bug_zoo.duplicate_rows(posenc.sinusoidal(positions, case.args[1])) == 0
    )


def _float32_blur(out, case):
    """True when the error grows with the position, as with angles formed in float32."""
    positions, d = np.asarray(case.args[0]), case.args[1]
    if not _real_array(out) or out.shape != (len(positions), d):
        return False
    err = np.abs(out.astype(np.float64) - posenc.sinusoidal(positions, d)).max(axis=1)
    return err.max() > 3e-4 and bool(np.all(err <= 5e-4 + 1e-6 * np.abs(positions)))


def _half_blur(out, case):
    """True when the error stays within what angles formed in float16 give (about 3 u p, u = 2^-11)."""
    positions, d = np.asarray(case.args[0]), case.args[1]
    if not _real_array(out) or out.shape != (len(positions), d):
        return False
    err = np.abs(out.astype(np.float64) - posenc.sinusoidal(positions, d)).max(axis=1)
    return err.max() > 3e-4 and bool(np.all(err <= 2e-3 + 1.5e-3 * np.abs(positions)))


HALF_HINT = (
    "your angles p·ω seem to be computed in half precision: they are off by up to 3u·p radians (u = 2^-11, "
    "float16's unit roundoff), and positions above 2048 round onto each other. Form the angles in float64 (or use "
    "posenc) and convert only the finished table with .astype(np.float16)."
)


def _half_cases(rng):
    return _pe_cases(rng, n_cases=20, max_pos=60000, max_n=100)


def _ch06_half_angle_error(d_model=64):
    """The worst pair's angle error in float16, divided by the position, over the positions float16 holds exactly
    (below 2048): how fast the error grows with p."""
    p = np.arange(1, 2048)
    return float((bug_zoo.phase_error(p, d_model, dtype=torch.float16).max(axis=1) / p).max())


def _ch06_float32_table_error():
    """How far posenc's float32 table is from its float64 one (itself within 1e-9 of the exact values) on inputs
    drawn like the coding question's."""
    cases = _half_cases(np.random.default_rng(0))
    return max(
        np.abs(posenc.sinusoidal(*case.args, dtype=np.float32) - posenc.sinusoidal(*case.args)).max() for case in cases
    )


def half_angle_table(positions, d_model):
    """Bug 6 in numpy: positions, frequencies and angles in float16."""
    p = np.asarray(positions).astype(np.float16)[:, None]
    w = (10000.0 ** (-2.0 * np.arange((d_model + 1) // 2) / d_model)).astype(np.float16)
    angle = p * w
    out = np.empty((len(p), 2 * w.size), dtype=np.float16)
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out[:, :d_model]


_add(
    Function(
        "06.4",
        "an accurate float16 table",
        _half_table,
        _half_cases,
        expected=lambda positions, d: posenc.sinusoidal(positions, d),
        returns="numpy array of shape `(len(positions), d_model)`",
        atol=3e-4,
        dtype=np.float16,
        mistakes=[
            (Model(half_angle_table, signature=_collides), HALF_HINT),
            (Model(float32_table, signature=_float32_blur), FLOAT32_HINT),
            (Model(half_angle_table, signature=_half_blur), HALF_HINT),
            (matches_model(lambda p, d: _table(p, d, layout="concatenated")), CONCAT_HINT),
            (matches_model(lambda p, d: _table(p, d, swap=True)), SWAP_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="sin")), COSINE_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="zero")), COSINE_HINT),
            (matches_model(lambda p, d: _table(_positions_ignored(p), d)), POSITIONS_HINT),
        ],
        known_mistakes=[
            (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float32), "dtype float16"),
        ],
        alternatives={
            "float64 then float16": lambda p, d: posenc.sinusoidal(p, d).astype(np.float16),
            "loop then float16": lambda p, d: loop_table(p, d).astype(np.float16),
            "torch half": lambda p, d: torch.from_numpy(torch_table(p, d)).half().numpy(),
        },
        states={
            "at most 2.5 \\times 10^{-4}": lambda: float(np.spacing(np.float16(0.5))) / 2,  # half a spacing below 1
            "5 \\times 10^{-4}": _ch06_half_angle_error,
            "1.5 \\times 10^{-3}": lambda: _angle_bound(torch.float16, p=1),
            "2 \\times 10^{-3}": lambda: bug_zoo.phase_error(np.arange(59_000, 60_001), 64).max(),  # float32
            "within 2 \\times 10^{-7}": _ch06_float32_table_error,
        },
        covers={"positions above 50,000": lambda p, d: np.max(p) > 5e4, "odd d_model": lambda p, d: d % 2 == 1},
    )
)


def _angle_bound(dtype, p=1000):
    """The bound 3u·p of section 6.1: three roundings (p, ω_i, their product), each of relative size u."""
    return 3 * (torch.finfo(dtype).eps / 2) * p


_add(
    Numeric(
        "06.5",
        "the angle bound in float16 at p = 1000",
        lambda: _angle_bound(torch.float16),
        mistakes=[
            (
                lambda: 2 * _angle_bound(torch.float16),
                "that uses the machine epsilon, torch.finfo(...).eps, the spacing just above 1; a rounding moves a "
                "number by at most half a spacing, the unit roundoff u = eps / 2.",
            ),
            (
                lambda: _angle_bound(torch.float16) / 3,
                "that is one rounding; the angle goes through three (the position, the frequency and their "
                "product), so the bound is 3u·p.",
            ),
            (lambda: _angle_bound(torch.bfloat16), "that is bfloat16's u (8 significant bits); float16 keeps 11."),
            (lambda: _angle_bound(torch.float32), "that is float32's u (24 significant bits); float16 keeps 11."),
        ],
        states={"1.46": lambda: _angle_bound(torch.float16)},
    )
)

_add(
    Choice(
        "06.6",
        "a model cast with .half()",
        "ABCD",
        "AB",
        {
            "C": "the collisions happen before any frequency is used: 4097 is stored as 4096, and no base can tell "
            "the two apart again.",
            "D": "bfloat16 has float32's range but only 8 significant bits: its positions collide from 256 on, "
            "sooner than float16's.",
        },
        right={
            "A": "the angles were formed accurately; the cast rounds each finished value once, by at most u, and "
            "the rows stay distinct (the chapter's count of collisions finds none).",
            "B": "that is the bug from real code in this chapter: the cast rounds the buffer, and the positions "
            "are then created in its dtype.",
        },
        nudge="Ask of each option where the rounding happens: before the angle is formed, or after.",
        states={"4096": lambda: float(torch.tensor(4097.0).half())},
        known_mistakes=[
            ("B", "not the right set"),
            ("ABC", "where the rounding happens"),
            ("ABD", "not the right set"),
            ("ABCD", "every option"),
        ],
    )
)
