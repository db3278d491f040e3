"""Questions of chapter 02, the sinusoidal formula (exercises/02_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    DEGREES_HINT,
    DOUBLED_HINT,
    FACTOR2_HINT,
    FLOAT32_ANGLES,
    FLOAT32_HINT,
    INVERTED_BASE_HINT,
    PAIR_SHIFT_HINT,
    POSITIONS_HINT,
    SWAP_HINT,
    _degrees,
    _doubled_omega,
    _inverted,
    _pe,
    _pe_cases,
    _positions_ignored,
    _shifted,
    _table,
)
from grading.bank.learner_code import (
    doubled_table,
    float32_table,
    loop_table,
    swapped_table,
    torch_table,
    tutorial_table,
)
from grading.feedback import Model, matches_model
from grading.kinds import Array, Case, Choice, Function, Lazy, Numeric
from grading.reference import posenc

QUESTIONS: list = []  # this chapter's questions, in order: grading.bank collects them
_add = QUESTIONS.append


_add(
    Choice(
        "02.1",
        "what i counts",
        "ABCD",
        "B",
        {
            "A": "if i ran over channels, 2i would run up to 2(d-1): the doubled-exponent bug.",
            "C": "the position is p; i selects a frequency.",
            "D": "heads have nothing to do with the encoding's formula.",
        },
        right={
            "B": "i numbers the (sin, cos) pairs: channels 2i and 2i + 1 share the frequency ω_i.",
        },
        known_mistakes=[("A", "doubled-exponent"), ("C", "position is p"), ("BD", "exactly one")],
    )
)

# A learner's tables of PE(4) gone wrong (02.2's known mistakes)


_add(
    Array(
        "02.2",
        "PE(4) for d_model = 6",
        lambda: _pe(4, 6),
        atol=1e-4,
        mistakes=[
            (lambda: _table([4], 6, _doubled_omega(6))[0], DOUBLED_HINT),
            (lambda: _table([4], 6, layout="concatenated")[0], CONCAT_HINT),
            (lambda: _table([4], 6, swap=True)[0], SWAP_HINT),
            (lambda: _table([4], 6, _degrees(posenc.frequencies(6)))[0], DEGREES_HINT),
            (lambda: _table([4], 6, _inverted(6))[0], INVERTED_BASE_HINT),
            (lambda: _table([4], 6, 10000.0 ** (-np.arange(3) / 6))[0], FACTOR2_HINT),
            (lambda: _table([4], 6, cosine="sin")[0], COSINE_HINT),
            (lambda: _table([4], 6, cosine="zero")[0], COSINE_HINT),
            (lambda: _table([4], 6, _shifted(6))[0], PAIR_SHIFT_HINT),
        ],
        known_mistakes=[
            ([-0.757, -0.653, 0.185, 0.983, 0.009, 1.000], "more decimals"),
            (Lazy(lambda: posenc.sinusoidal([4], 6)[0][:3]), "shape"),
        ],
    )
)

_add(
    Numeric(
        "02.3",
        "frequency of pair 128",
        lambda: posenc.frequencies(512)[128],
        mistakes=[
            (lambda: _doubled_omega(512)[128], DOUBLED_HINT),
            (
                lambda: posenc.frequencies(512)[128] / (2 * math.pi),
                "that is ω/2π, in cycles per position; the question asks for the angular frequency ω.",
            ),
            (lambda: posenc.wavelengths(512)[128], "that is the wavelength 2π/ω; the question asks for ω."),
            (lambda: 10000.0 ** (-128 / 512), FACTOR2_HINT),
            (lambda: _inverted(512)[128], INVERTED_BASE_HINT),
            (lambda: _shifted(512)[128], PAIR_SHIFT_HINT),
        ],
        known_mistakes=[
            (0.02, "factor of 2"),
        ],
    )
)

_add(
    Numeric(
        "02.4",
        "lowest frequency",
        lambda: posenc.frequencies(512)[-1],
        mistakes=[
            (
                lambda: 1 / 10000,
                "1/10000 = base^(-2i/d) at i = d/2, a pair that does not exist: i counts the d/2 pairs "
                "from 0, so which i has the last one?",
            ),
            (lambda: _doubled_omega(512)[-1], DOUBLED_HINT),
            (lambda: posenc.frequencies(512)[-2], "that is pair 254; the last pair is i = 255."),
            (lambda: _inverted(512)[-1], INVERTED_BASE_HINT),
            (lambda: 10000.0 ** (-255 / 512), FACTOR2_HINT),
        ],
    )
)


def _frequencies_cases(rng):
    """ "Any base above 1": common bases, bases just above 1 and far above 10^6, random ones."""
    cases = []
    for k in range(24):
        d = [512, 1, 2, 3, 7, 64][k] if k < 6 else int(rng.integers(1, 1100))
        base = [10000.0, 500000.0, 100.0, 1.5, 1.0001, 1e9][k % 6] if k < 12 else float(rng.uniform(2, 1e6))
        cases.append(
            Case(
                (d, base),
                f"d_model = {d}, base = {base:g}",
                note="odd d_model: there are ceil(d/2) pairs" if d % 2 else "",
            )
        )
    return cases


_add(
    Function(
        "02.5",
        "write frequencies",
        lambda d, base=10000.0: posenc.frequencies(d, base),
        _frequencies_cases,
        expected=lambda d, base: posenc.frequencies(d, base),
        returns="numpy array of shape `(ceil(d_model / 2),)`",
        atol=1e-12,
        own_code=True,
        mistakes=[
            (matches_model(_doubled_omega), DOUBLED_HINT),
            (
                matches_model(lambda d, base: base ** (-np.arange((d + 1) // 2) / d)),
                "the factor 2 in the exponent is missing: ω_i = base^(-2i/d).",
            ),
            (matches_model(lambda d, base: _inverted(d, base)), INVERTED_BASE_HINT),
            (
                Model(
                    lambda d, base: posenc.frequencies(d, base)[: d // 2] if d % 2 else None,
                    signature=lambda out, case: np.shape(out) == (case.args[0] // 2,),
                ),
                "for odd d_model the last pair has a sine and no cosine, but it still has a frequency: return "
                "ceil(d/2) values.",
            ),
            (matches_model(lambda d, base: _shifted(d, base)), PAIR_SHIFT_HINT),
            (
                Model(
                    lambda d, base: np.repeat(posenc.frequencies(d, base), 2)[:d],
                    signature=lambda out, case: np.shape(out) == (case.args[0],),
                ),
                "one frequency per (sin, cos) pair, not one per channel: return ceil(d_model/2) values.",
            ),
        ],
        known_mistakes=[
            (lambda d, base=10000.0: (base ** (-2.0 * np.arange((d + 1) // 2) / d)).astype(np.float32), "float32"),
            (lambda d, base=10000.0: list(base ** (-2.0 * np.arange((d + 1) // 2) / d)), "numpy array"),
        ],
        alternatives={
            "exp and log": lambda d, base=10000.0: np.exp(-2 * np.arange((d + 1) // 2) * np.log(base) / d),
            "channel index": lambda d, base=10000.0: 1.0 / base ** (np.arange(0, d, 2) / d),
            "list comprehension": lambda d, base=10000.0: np.array([base ** (-2 * i / d) for i in range((d + 1) // 2)]),
            "torch float64": lambda d, base=10000.0: torch.pow(
                torch.tensor(base, dtype=torch.float64), -2.0 * torch.arange((d + 1) // 2, dtype=torch.float64) / d
            ).numpy(),
        },
        covers={
            "odd d_model": lambda d, base=1e4: d % 2 == 1,
            "base below 2": lambda d, base=1e4: base < 2,
            "base below 1.01": lambda d, base=1e4: base < 1.01,
            "base above 10^6": lambda d, base=1e4: base > 1e6,
            "base of 10^9 or more": lambda d, base=1e4: base >= 1e9,
            "d_model above 1000": lambda d, base=1e4: d > 1000,
        },
    )
)


def _pe_table(positions, d, layout="interleaved"):
    return posenc.sinusoidal(positions, d, layout=layout)


_add(
    Function(
        "02.6",
        "write the table, both layouts",
        _pe_table,
        lambda rng: _pe_cases(rng, layouts=True),
        expected=_pe_table,
        returns="numpy array of shape `(len(positions), d_model)`",
        atol=1e-7,
        dtype=np.float64,
        call=lambda f, positions, d, layout: f(positions, d, layout=layout),
        own_code=True,
        mistakes=[
            (matches_model(lambda p, d, layout: _table(p, d, _doubled_omega(d), layout=layout)), DOUBLED_HINT),
            (matches_model(lambda p, d, layout: _table(p, d, layout="concatenated")), CONCAT_HINT),
            (
                matches_model(lambda p, d, layout: _table(p, d) if layout == "concatenated" else None),
                "for layout='concatenated' return the ceil(d/2) sine columns first, then the floor(d/2) cosine "
                "columns; you returned the interleaved layout.",
            ),
            (matches_model(lambda p, d, layout: _table(p, d, layout=layout, swap=True)), SWAP_HINT),
            (matches_model(lambda p, d, layout: _table(p, d, layout=layout, cosine="sin")), COSINE_HINT),
            (matches_model(lambda p, d, layout: _table(p, d, layout=layout, cosine="zero")), COSINE_HINT),
            (matches_model(lambda p, d, layout: _table(_positions_ignored(p), d, layout=layout)), POSITIONS_HINT),
            (
                matches_model(lambda p, d, layout: _table(p, d, _degrees(posenc.frequencies(d)), layout=layout)),
                DEGREES_HINT,
            ),
            (matches_model(lambda p, d, layout: _table(p, d, _shifted(d), layout=layout)), PAIR_SHIFT_HINT),
            (FLOAT32_ANGLES, FLOAT32_HINT),
        ],
        known_mistakes=[
            (lambda p, d, layout="interleaved": doubled_table(p, d), "doubled"),
            (lambda p, d, layout="interleaved": float32_table(p, d), "float32"),
            (lambda p, d, layout="interleaved": tutorial_table(p, d), "odd"),
            (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout="concatenated"), "concatenated"),
            (lambda p, d, layout="interleaved": swapped_table(p, d), "swapped"),
            (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d), "for layout='concatenated'"),
            (
                lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout=layout, dtype=np.float32),
                "expected dtype float64, got float32",
            ),
            (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout=layout)[:, ::-1].copy(), "element"),
            (lambda p, d, layout="interleaved": torch.from_numpy(posenc.sinusoidal(p, d)), "torch tensor"),
        ],
        alternatives={
            "loop": loop_table,
            "torch": torch_table,
            "loop, layout keyword-only": lambda p, d, *, layout: loop_table(p, d, layout),
            "layout keyword-only": lambda p, d, *, layout: posenc.sinusoidal(p, d, layout=layout),
        },
        covers={
            "positions near 10^6": lambda p, d, layout="interleaved": np.max(p) > 9e5,
            "odd d_model": lambda p, d, layout="interleaved": d % 2 == 1,
            "concatenated layout": lambda p, d, layout="interleaved": layout == "concatenated",
            "positions not 0..n-1": lambda p, d, layout="interleaved": not np.array_equal(p, np.arange(len(p))),
        },
    )
)


def _to_concatenated(table):
    table = np.asarray(table)
    return table[:, posenc.layout_permutation(table.shape[1])]


def to_concat_in_place(t):
    """A learner's 02.7 that rearranges its input in place."""
    t[:] = np.concatenate([t[:, 0::2], t[:, 1::2]], axis=1)
    return t


def _layout_cases(rng):
    cases = []
    for k in range(20):
        d = [6, 1, 2, 3, 7, 8, 65][k] if k < 7 else int(rng.integers(1, 200))
        n = int(rng.integers(1, 50))
        cases.append(
            Case(
                (rng.normal(size=(n, d)),),
                f"a table of shape ({n}, {d})",
                note=f"d_model = {d} is odd" if d % 2 else "",
            )
        )
    return cases


_add(
    Function(
        "02.7",
        "interleaved to concatenated",
        _to_concatenated,
        _layout_cases,
        expected=_to_concatenated,
        returns="numpy array of shape `(n, d_model)`",
        mistakes=[
            (
                matches_model(lambda t: t[:, np.argsort(posenc.layout_permutation(t.shape[1]))]),
                "you applied the inverse permutation (concatenated → interleaved).",
            ),
            (
                matches_model(lambda t: np.concatenate([t[:, 1::2], t[:, 0::2]], axis=1)),
                "cosines first: the concatenated layout puts the sines (even channels) first.",
            ),
            (matches_model(lambda t: t), "you returned the table unchanged."),
        ],
        known_mistakes=[
            (to_concat_in_place, "changed its input"),
        ],
        alternatives={
            "permutation": lambda t: t[:, posenc.layout_permutation(t.shape[1])],
            "slices": lambda t: np.concatenate([t[:, ::2], t[:, 1::2]], axis=1),
            "hstack": lambda t: np.hstack([t[:, 0::2], t[:, 1::2]]),
        },
        covers={"odd d_model": lambda t: t.shape[1] % 2 == 1, "one row": lambda t: t.shape[0] == 1},
    )
)
