"""Questions of chapter 07, implementations: layouts and bugs (exercises/07_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

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
from grading.bank.learner_code import loop_table, torch_table
from grading.feedback import matches_model
from grading.kinds import Array, Case, Choice, Function, Numeric
from grading.reference import posenc

# ---- Chapter 07: implementations ------------------------------------------
from posenc_course import bug_zoo

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append

_MYSTERY_07 = 2
_VARIANT_LETTERS_07 = dict(zip(bug_zoo.VARIANTS, "ABCD"))

_add(
    Choice(
        "07.1",
        "which variant made this table",
        "ABCD",
        _VARIANT_LETTERS_07[bug_zoo.identify_variant(bug_zoo.mystery_table(_MYSTERY_07))],
        {
            "A": "row 0 of an interleaved table alternates 0, 1, 0, 1, ...: look at row 0.",
            "B": "the row-0 pattern fits, but check the slowest frequency: "
            "read it off row 1 with atan2(last sine, last cosine).",
            "C": "with the cosines first, row 0 starts with ones (cos 0 = 1): look at row 0.",
            "D": "fairseq's slowest frequency is exactly 1/base; measure it from row 1 with atan2(last sine, last "
            "cosine).",
        },
        known_mistakes=[("A", "alternates"), ("D", "fairseq"), ("C", "cosines first"), ("AB", "exactly one")],
    )
)

_add(
    Choice(
        "07.2",
        "what the doubled exponent passes",
        "ABCDE",
        "ABE",
        {
            "C": "pair i runs at the frequency of pair 2i, so the table differs from posenc by up to 2.",
            "D": "pair d/4 gets base^(-4(d/4)/d) = 1/base = 1e-4, not 0.01.",
        },
        right={
            "A": "each pair is still (sin, cos) of one angle, so each pair has norm 1 whatever its frequency.",
            "B": "PE(p)·PE(s) = Σ cos((p - s)ω_i) depends on p - s only, for any set of frequencies.",
            "E": "each pair still turns by a fixed angle per position: a rotation, just at the wrong speed.",
        },
        nudge=(
            "The doubled exponent keeps the (sin, cos) pairs but changes their frequencies: ask of each check "
            "whether it depends on the values of the frequencies or only on the pair structure."
        ),
        states={"0.01": lambda: posenc.frequencies(64)[16], "1e-4": lambda: _doubled_omega(64)[16]},
        known_mistakes=[
            ("AB", "pair structure"),
            ("ABCE", "not the right set"),
            ("D", "not the right set"),
            ("ABCDE", "every option"),
        ],
    )
)


def _own_frequency(positions, d, base=10000.0):
    """Bug 3 for arbitrary positions: channel j uses base^(-j/d)."""
    angle = np.outer(np.asarray(positions, dtype=np.float64), base ** (-np.arange(d) / d))
    return np.where(np.arange(d) % 2 == 0, np.sin(angle), np.cos(angle))


# A learner's 07.3: the function as given, half fixed, and fixed


def buggy_07(positions, d_model):
    """The function of the question as given: the cosine's own exponent, and an IndexError for odd d."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** ((i + 1) / d_model))
    return pe


def exponent_fixed_odd_breaks(positions, d_model):
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** (i / d_model))
    return pe


def fixed_07(positions, d_model):
    """The same loop, one exponent per pair, and a guard for the lone last sine."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        angle = positions / 10000 ** (i / d_model)
        pe[:, i] = np.sin(angle)
        if i + 1 < d_model:
            pe[:, i + 1] = np.cos(angle)
    return pe


_add(
    Function(
        "07.3",
        "fix the buggy table",
        lambda positions, d: posenc.sinusoidal(positions, d),
        lambda rng: _pe_cases(rng, n_cases=20, max_pos=10**6, max_n=80),
        expected=lambda positions, d: posenc.sinusoidal(positions, d),
        returns="numpy array of shape `(len(positions), d_model)`",
        atol=1e-8,
        own_code=True,
        mistakes=[
            (
                matches_model(_own_frequency),
                "the cosine of pair i still uses the exponent (2i+1)/d: both channels of a pair "
                "share ω_i = base^(-2i/d).",
            ),
            (matches_model(lambda p, d: _table(p, d, _doubled_omega(d))), DOUBLED_HINT),
            (matches_model(lambda p, d: _table(p, d, swap=True)), SWAP_HINT),
            (matches_model(lambda p, d: _table(p, d, layout="concatenated")), CONCAT_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="sin")), COSINE_HINT),
            (matches_model(lambda p, d: _table(p, d, cosine="zero")), COSINE_HINT),
            (matches_model(lambda p, d: _table(_positions_ignored(p), d)), POSITIONS_HINT),
            (matches_model(lambda p, d: _table(p, d, _degrees(posenc.frequencies(d)))), DEGREES_HINT),
            (matches_model(lambda p, d: _table(p, d, _shifted(d))), PAIR_SHIFT_HINT),
            (FLOAT32_ANGLES, FLOAT32_HINT),
        ],
        known_mistakes=[
            (buggy_07, "(2i+1)/d"),
            (exponent_fixed_odd_breaks, "IndexError"),
        ],
        alternatives={
            "loop": loop_table,
            "torch": torch_table,
            "posenc": lambda p, d: posenc.sinusoidal(p, d),
            "the given loop, fixed": fixed_07,
        },
        covers={"positions near 10^6": lambda p, d: np.max(p) > 9e5, "odd d_model": lambda p, d: d % 2 == 1},
    )
)


def _add_batch_first(x):
    x = np.asarray(x)
    return x + posenc.sinusoidal(x.shape[1], x.shape[2])[None]


def _batch_first_cases(rng):
    cases = []
    shapes = [(4, 10, 8), (1, 12, 6), (7, 7, 16), (3, 5, 7), (10, 3, 4), (1, 1, 1), (2, 40, 33)]
    for k in range(16):
        batch, seq, d = (
            shapes[k]
            if k < len(shapes)
            else (int(rng.integers(1, 9)), int(rng.integers(1, 60)), int(rng.integers(1, 70)))
        )
        note = "batch 1" if batch == 1 else ("batch equals seq" if batch == seq else "")
        cases.append(
            Case(
                (rng.normal(size=(batch, seq, d)),),
                f"x of shape (batch, seq, d_model) = ({batch}, {seq}, {d})",
                note=note,
            )
        )
    return cases


def _along_batch(x):
    """Bug 4: sequence b gets PE(b) at every position."""
    return x + posenc.sinusoidal(x.shape[0], x.shape[2])[:, None, :]


# A learner's 07.4 gone wrong


def flat_table_batch_slice(x):
    return x + posenc.sinusoidal(64, x.shape[2])[: x.shape[0]]


def in_place_batch_first(x):
    x += posenc.sinusoidal(x.shape[1], x.shape[2])
    return x


_add(
    Function(
        "07.4",
        "add positions to a batch-first input",
        _add_batch_first,
        _batch_first_cases,
        expected=_add_batch_first,
        returns="numpy array of shape `(batch, seq, d_model)`",
        atol=1e-8,
        mistakes=[
            (
                matches_model(_along_batch),
                "you added PE(b) to every token of sequence b: the positions run along axis 1 "
                "(seq), and every sequence of the batch gets the same PE[:seq].",
            ),
            (
                matches_model(lambda x: x + posenc.sinusoidal(1, x.shape[2])[None]),
                "every token got PE(0): take seq rows of the table, one per position.",
            ),
            (
                matches_model(lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], layout="concatenated")[None]),
                CONCAT_HINT,
            ),
            (
                matches_model(lambda x: np.broadcast_to(posenc.sinusoidal(x.shape[1], x.shape[2]), x.shape)),
                "you returned the encoding alone; add it to x.",
            ),
            (matches_model(lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], swap=True)[None]), SWAP_HINT),
            (matches_model(lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], cosine="sin")[None]), COSINE_HINT),
            (matches_model(lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], cosine="zero")[None]), COSINE_HINT),
            (
                matches_model(
                    lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], _doubled_omega(x.shape[2]))[None]
                ),
                DOUBLED_HINT,
            ),
        ],
        known_mistakes=[
            (flat_table_batch_slice, "raised ValueError"),
            (in_place_batch_first, "changed its input"),
        ],
        alternatives={
            "broadcast": lambda x: x + posenc.sinusoidal(x.shape[1], x.shape[2]),
            "torch module": lambda x: posenc.SinusoidalPositionalEncoding(x.shape[2])(torch.from_numpy(x)).numpy(),
            "loop over the batch": lambda x: np.stack([row + posenc.sinusoidal(x.shape[1], x.shape[2]) for row in x]),
        },
        covers={
            "batch 1": lambda x: x.shape[0] == 1,
            "batch equal to seq": lambda x: x.shape[0] == x.shape[1],
            "odd d_model": lambda x: x.shape[2] % 2 == 1,
        },
    )
)


def _fairseq_omega(i, d=32, base=10000.0):
    """tensor2tensor's and fairseq's schedule: ω_i = base^(-i/(h-1)), h = d/2."""
    return base ** (-i / (d // 2 - 1))


_add(
    Numeric(
        "07.5",
        "a frequency of the h - 1 schedule",
        lambda: _fairseq_omega(5),
        mistakes=[
            (
                lambda: posenc.frequencies(32)[5],
                "that is the paper's ω_5 = base^(-2i/d) = base^(-i/h); the h - 1 schedule divides the exponent "
                "by h - 1 = 15 instead of h = 16.",
            ),
            (lambda: 2 * math.pi / _fairseq_omega(5), "that is the wavelength 2π/ω_5; the question asks for ω_5."),
            (lambda: _fairseq_omega(6), "that is pair 6's frequency: pairs count from 0, so pair 5 is the sixth."),
            (lambda: _fairseq_omega(4), "that is pair 4's frequency; pair i = 5 has the exponent -5/15."),
        ],
        states={"0.0464": lambda: _fairseq_omega(5), "0.0562": lambda: posenc.frequencies(32)[5]},
    )
)


def _inverse(perm):
    return np.argsort(perm)


_add(
    Array(
        "07.6",
        "the permutation from interleaved to concatenated",
        lambda: posenc.layout_permutation(8),
        atol=0.0,
        mistakes=[
            (
                lambda: _inverse(posenc.layout_permutation(8)),
                "that is the inverse permutation: it turns a concatenated table back into an interleaved one. "
                "Column j of the concatenated table is column perm[j] of the interleaved one.",
            ),
            (
                lambda: np.roll(posenc.layout_permutation(8), 4),
                "that puts the cosines first (channels 1, 3, 5, 7); the concatenated layout starts with the sines.",
            ),
        ],
        known_mistakes=[
            ([0, 2, 4, 6, 1, 3, 5], "shape"),
        ],
    )
)
