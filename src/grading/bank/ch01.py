"""Questions of chapter 01, the order problem (exercises/01_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    DEGREES_HINT,
    DOUBLED_HINT,
    FLOAT32_HINT,
    PAIR_SHIFT_HINT,
    SWAP_HINT,
    _degrees,
    _doubled_omega,
    _float32_angles,
    _float32_rows,
    _pe,
    _shifted,
    _table,
)
from grading.bank.learner_code import loop_table, tutorial_table
from grading.feedback import Model, matches_model
from grading.kinds import Case, Choice, Function, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


_add(
    Choice(
        "01.1",
        "swapping words without positions",
        "ABCD",
        "AC",
        {
            "B": "the softmax normalises each row of scores; it does not sort anything.",
            "D": "Attn(PX) = P·Attn(X) holds exactly, up to floating-point rounding, at every d_model.",
        },
        right={
            "A": "attention treats each row the same way, wherever it sits: a permutation of the inputs permutes the "
            "outputs the same way (equivariance).",
            "C": "true, and a consequence of A rather than its cause: a sum or mean over positions does not care "
            "about order, so it cannot tell the two sentences apart.",
        },
        nudge=("Test each statement against Attn(PX) = P·Attn(X), which holds exactly, at any size."),
        known_mistakes=[
            ("B", "Attn(PX) = P·Attn(X)"),
            ("AD", "not the right set"),
            ("A", "not the right set"),
            ("ABCD", "every option"),
        ],
    )
)


def _ch01_norm():
    return float(np.linalg.norm(_pe(1234, 16)))


_add(
    Numeric(
        "01.2",
        "norm of PE(p)",
        _ch01_norm,
        mistakes=[
            (
                lambda: math.sqrt(16),
                "that is sqrt(d_model); there are d_model/2 pairs, each a unit vector (sin² + cos² = 1).",
            ),
            (lambda: 16 / 2, "that is the squared norm d_model/2; take its square root."),
            (lambda: float(np.linalg.norm(_table([1234], 16, cosine="zero")[0])), COSINE_HINT),
            (lambda: float(np.linalg.norm(_table([1234], 16, cosine="sin")[0])), COSINE_HINT),
        ],
        known_mistakes=[(2 * math.sqrt(8), "factor of 2")],
    )
)


def _add_positions(x):
    x = np.asarray(x)
    return x + posenc.sinusoidal(x.shape[0], x.shape[1])


def in_place_add(x):
    """Adds the encoding to its input, in place."""
    x += posenc.sinusoidal(*x.shape)
    return x


def add_with_torch_module(x):
    return posenc.SinusoidalPositionalEncoding(x.shape[1])(torch.from_numpy(x)[None])[0].numpy()


def _cases_add_positions(rng):
    """Short and long inputs: "any n" includes n far beyond a 512-row table built in advance."""
    widths = [4, 1, 2, 3, 7, 16, 15, 33, 64, 5, 128, 9]
    long_inputs = {4: 600, 9: 1500, 13: 5000}  # n for some of the cases; the others are short
    cases = []
    for k in range(23):
        d = widths[k] if k < len(widths) else int(rng.integers(1, 100))
        n = long_inputs.get(k) or int(rng.integers(1, 300))
        odd = f"d_model = {d} is odd" if d % 2 else ""
        cases.append(Case((rng.normal(size=(n, d)),), f"x of shape ({n}, {d})", note=odd))
    return cases


def _capped_at_512(x):
    """A table of max_len = 512 rows built in advance: right up to 512 tokens, an error beyond."""
    return x + posenc.sinusoidal(512, x.shape[1])[: x.shape[0]]


_add(
    Function(
        "01.3",
        "add positions to token vectors",
        _add_positions,
        _cases_add_positions,
        expected=_add_positions,
        returns="numpy array of shape `(n, d_model)`",
        atol=1e-8,
        mistakes=[
            (
                matches_model(lambda x: x + _table(np.arange(1, len(x) + 1), x.shape[1])),
                "your positions start at 1; the first token is position 0.",
            ),
            (matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], layout="concatenated")), CONCAT_HINT),
            (
                matches_model(lambda x: posenc.sinusoidal(len(x), x.shape[1])),
                "you returned the encoding alone; add it to x.",
            ),
            (
                matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], _doubled_omega(x.shape[1]))),
                DOUBLED_HINT,
            ),
            (matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], swap=True)), SWAP_HINT),
            (matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], cosine="sin")), COSINE_HINT),
            (matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], cosine="zero")), COSINE_HINT),
            (
                matches_model(
                    lambda x: x + _table(np.arange(len(x)), x.shape[1], _degrees(posenc.frequencies(x.shape[1])))
                ),
                DEGREES_HINT,
            ),
            (matches_model(lambda x: x + _table(np.arange(len(x)), x.shape[1], _shifted(x.shape[1]))), PAIR_SHIFT_HINT),
            (
                Model(
                    lambda x: x + _float32_angles(np.arange(len(x)), x.shape[1]),
                    signature=lambda out, case: _float32_rows(
                        out, _add_positions(*case.args), np.arange(len(case.args[0])), floor=1e-8
                    ),
                ),
                FLOAT32_HINT,
            ),
        ],
        known_mistakes=[
            (in_place_add, "changed its input"),
            (lambda x: x + posenc.sinusoidal(np.arange(1, len(x) + 1), x.shape[1]), "start at 1"),
            (lambda x: x + posenc.sinusoidal(len(x), x.shape[1], layout="concatenated"), "concatenated"),
            (lambda x: x + tutorial_table(np.arange(len(x)), x.shape[1]), "odd"),
            (_capped_at_512, "could not be broadcast together"),
        ],
        alternatives={
            "np.add": lambda x: np.add(x, posenc.sinusoidal(x.shape[0], x.shape[1])),
            "loop table": lambda x: x + loop_table(np.arange(len(x)), x.shape[1]),
            "torch module": add_with_torch_module,
        },
        covers={
            "n > 512": lambda x: x.shape[0] > 512,
            "n >= 5000": lambda x: x.shape[0] >= 5000,
            "n < 300": lambda x: x.shape[0] < 300,
            "odd d_model": lambda x: x.shape[1] % 2 == 1,
            "d_model = 1": lambda x: x.shape[1] == 1,
        },
    )
)


def _ch01_same_value():
    fractions = np.arange(20) / 20
    return int(np.flatnonzero(np.isclose(fractions, 2 / 5))[0])


_add(
    Numeric(
        "01.4",
        "p / L at another length",
        _ch01_same_value,
        integer=True,
        mistakes=[
            (lambda: 2, "2 is the position at L = 5; at L = 20 the same value 0.4 names another position."),
            (lambda: 0.4 * 20 - 1, "off by one: p / L = 0.4 means p = 0.4·L, with positions counted from 0."),
        ],
        known_mistakes=[(8.5, "whole number")],
    )
)


def _ch01_raw_ratio():
    d, last = 16, 1000 - 1
    return float(np.linalg.norm(np.full(d, float(last))) / np.sqrt(d))


_add(
    Numeric(
        "01.5",
        "raw index versus token norm",
        _ch01_raw_ratio,
        mistakes=[
            (lambda: 1000.0, "positions start at 0: the last of L = 1000 tokens is at position 999."),
            (lambda: 999.0 * 4, "that is the norm of the position vector itself; divide by the token norm, 4."),
        ],
        known_mistakes=[(999 / 4, "too low")],
    )
)

_add(
    Choice(
        "01.6",
        "the two simple repairs",
        "ABCDE",
        "ABD",
        {
            "C": "with p / L, neighbours are 1/L apart: the longer the sequence, the closer they get.",
            "E": "every entry is a sine or a cosine, so it stays in [-1, 1] at every position.",
        },
        right={
            "A": "p grows to L - 1, so the position part grows with the length and dwarfs token vectors, whose "
            "entries are of order 1 (a norm of about √d_model).",
            "B": "0.4 is position 2 when L = 5 and position 8 when L = 20.",
            "D": "PE(p) depends on p alone, never on the length of the sequence.",
        },
        nudge=("For each statement, try a concrete case: L = 5 against L = 5000, position 3, the value at p = 10^6."),
        known_mistakes=[("ABCD", "concrete case"), ("AB", "not the right set"), ("ABCDE", "every option")],
    )
)

_add(
    Choice(
        "01.7",
        "invariant or equivariant",
        "ABC",
        "B",
        {
            "A": "the outputs are the same vectors, but in the permuted order, not in the original one.",
            "C": "there is an exact rule: permute the input rows and the output rows permute the same way.",
        },
        right={
            "B": "Attn(PX) = P·Attn(X): the same output rows, in the permuted order.",
        },
        known_mistakes=[("A", "permuted order"), ("AB", "exactly one"), ("C", "exact rule")],
    )
)
