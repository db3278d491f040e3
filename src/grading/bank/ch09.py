"""Questions of chapter 09, relative biases: ALiBi, T5 and a length experiment (exercises/09_*.ipynb)."""

from __future__ import annotations


import numpy as np

from grading.reference import posenc
from grading.bank import _add
from grading.kinds import Array, Lazy, Numeric


# ---- Chapter 09: relative biases -------------------------------------------

_add(
    Numeric(
        "09.1",
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


def _ch09_bias_row():
    return posenc.alibi_bias(4, 6)[1, 5]


def _alibi_row(slope):
    """The bias of the query at position 5 against keys 0 ... 5 for a head of this slope."""
    return -slope * (5 - np.arange(6))


# 4 heads: m_h = 2^(-8h/4) = 2^(-2h), so head 1 has 1/4, head 2 (asked) 1/16, head 3 1/64, head 4 1/256.
_add(
    Array(
        "09.2",
        "ALiBi bias of one query",
        _ch09_bias_row,
        atol=1e-6,
        mistakes=[
            (lambda: -_ch09_bias_row(), "the sign is wrong: ALiBi subtracts m·(p - s), a penalty for distant keys."),
            (
                lambda: _ch09_bias_row()[::-1],
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
            (Lazy(lambda: -_ch09_bias_row()), "sign"),
            (Lazy(lambda: _ch09_bias_row()[::-1]), "reverse order"),
            (Lazy(lambda: posenc.alibi_bias(4, 6)[2, 5]), "head 3"),
            (Lazy(lambda: _ch09_bias_row()[1:]), "shape"),
            (Lazy(lambda: np.round(_ch09_bias_row(), 1)), "elements are wrong"),
        ],
    )
)
