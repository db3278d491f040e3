"""Questions of chapter 02, the sinusoidal formula (exercises/02_*.ipynb)."""

from __future__ import annotations

import math

import numpy as np

from grading.reference import posenc
from grading.bank import _add
from grading.kinds import Array, Case, Choice, Function, Numeric
from grading.feedback import matches_model
from grading.bank.common import (
    CONCAT_HINT,
    COSINE_HINT,
    DEGREES_HINT,
    DOUBLED_HINT,
    FACTOR2_HINT,
    FLOAT32_HINT,
    INVERTED_BASE_HINT,
    PAIR_SHIFT_HINT,
    POSITIONS_HINT,
    SWAP_HINT,
    _degrees,
    _doubled_omega,
    _error_grows_with_position,
    _inverted,
    _pe,
    _pe_cases,
    _positions_ignored,
    _shifted,
    _table,
)


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
    )
)

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
                "1/10000 would be pair i = 256, which does not exist: "
                "the 256 pairs are i = 0 ... 255, so the exponent is -510/512.",
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
            (matches_model(_doubled_omega, atol=1e-12), DOUBLED_HINT),
            (
                matches_model(lambda d, base: base ** (-np.arange((d + 1) // 2) / d), atol=1e-12),
                "the factor 2 in the exponent is missing: ω_i = base^(-2i/d).",
            ),
            (matches_model(lambda d, base: _inverted(d, base), atol=1e-12), INVERTED_BASE_HINT),
            (
                lambda out, case: case.args[0] % 2 and np.shape(out) == (case.args[0] // 2,),
                "for odd d_model the last pair has a sine and no cosine, but it still has a frequency: return "
                "ceil(d/2) values.",
            ),
            (matches_model(lambda d, base: _shifted(d, base), atol=1e-12), PAIR_SHIFT_HINT),
            (
                lambda out, case: case.args[0] > 1 and np.shape(out) == (case.args[0],),
                "one frequency per (sin, cos) pair, not one per channel: return ceil(d_model/2) values.",
            ),
        ],
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
            (_error_grows_with_position, FLOAT32_HINT),
        ],
    )
)


def _to_concatenated(table):
    table = np.asarray(table)
    return table[:, posenc.layout_permutation(table.shape[1])]


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
                matches_model(lambda t: t[:, np.argsort(posenc.layout_permutation(t.shape[1]))], atol=0),
                "you applied the inverse permutation (concatenated → interleaved).",
            ),
            (
                matches_model(lambda t: np.concatenate([t[:, 1::2], t[:, 0::2]], axis=1), atol=0),
                "cosines first: the concatenated layout puts the sines (even channels) first.",
            ),
            (matches_model(lambda t: t, atol=0), "you returned the table unchanged."),
        ],
    )
)
