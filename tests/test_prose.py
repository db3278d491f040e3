"""posenc_course.prose: a number typed in a chapter's text, read, and checked against a computed value."""

from __future__ import annotations

import math
import pickle
from decimal import Decimal

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from posenc_course.arguments import ArgumentError
from posenc_course.prose import ProseMismatch, number, says

SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("0.166", "0.166"),
        ("34.98", "34.98"),
        ("-3.5", "-3.5"),
        ("−0.654", "-0.654"),
        ("$-0.654$", "-0.654"),
        ("5,000", "5000"),
        ("60,611", "60611"),
        ("1,000,000", "1000000"),
        ("10\\,000", "10000"),
        ("65{,}504", "65504"),
        ("3.3e8", "3.3E+8"),
        ("1.0366e-4", "0.00010366"),
        ("5.4·10⁸", "5.4E+8"),
        ("5.4 × 10⁸", "5.4E+8"),
        ("5.4 \\times 10^8", "5.4E+8"),
        ("$1.0366\\times10^{-4}$", "0.00010366"),
        ("1.2 \\cdot 10^7", "1.2E+7"),
        ("6.0 \\times 10^{-8}", "6.0E-8"),
        ("10^{-7}", "1E-7"),
        ("10^6", "1E+6"),
        ("10⁻⁷", "1E-7"),
        ("25 %", "0.25"),
        ("25%", "0.25"),
        ("12.5\\%", "0.125"),
        ("25.0 percent", "0.250"),
        ("3×", "3"),
        ("less than 0.18", "0.18"),
        ("at least 10^{-2}", "0.01"),
        ("within 2 \\times 10^{-7}", "2E-7"),
        ("$< 0.5$", "0.5"),
    ],
)
def test_the_forms_the_chapters_write_are_read(text, shown):
    read = number(text)
    assert read == Decimal(shown) and read.as_tuple() == Decimal(shown).as_tuple()  # the same last digit, too


@pytest.mark.parametrize("text", ["", "abc", "0.1.2", "1,00", "5,0000", "over all", "2^{24}", "1/2", "0.5 0.6", "≈"])
def test_what_is_not_one_number_is_refused_in_one_line(text):
    with pytest.raises(ArgumentError, match=r"^says: text must be a number as the text writes it") as info:
        says(text, 1.0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.17", 0.1663),
        ("0.17", 0.1749),
        ("0.17", 0.165),  # exactly half-way (as a float, just above): either way of rounding passes
        ("60,611", 60611.3),
        ("62,832", 2 * math.pi * 10_000),
        ("5.4·10⁸", 2**29),
        ("3 \\times 10^{-2}", 0.0349),
        ("25 %", 0.2549),
        ("−0.654", math.cos(4)),
        ("-0.6536", math.cos(4)),
        ("3×", 3.4),
        ("10^{-13}", 2.3e-13),  # a power of ten alone: the order of magnitude
        ("10^{-13}", 3.2e-14),  # within a factor sqrt(10)
        ("less than 0.18", 0.179),
        ("below 10^{-12}", 3e-13),
        ("at most 2", 2),
        ("more than 35,000", 35_335.0),
        ("above 0.99", 0.995),
        ("at least 10^{-2}", 0.01),
        ("within 2 \\times 10^{-7}", -2e-7),
    ],
)
def test_a_value_that_reads_as_the_text_passes(text, value):
    assert says(text, value) is None


@pytest.mark.parametrize(
    "text, value, message",
    [
        ("0.17", 0.1751, "says: value 0.1751 reads 0.18, not 0.17 as the text says."),
        ("0.23", np.float64(0.2361), "says: value 0.2361 reads 0.24, not 0.23 as the text says."),
        ("60,611", 60_620.2, "says: value 60620.2 reads 60,620, not 60,611 as the text says."),
        ("5.4·10⁸", 5.46e8, "says: value 546,000,000 reads 5.5·10⁸, not 5.4·10⁸ as the text says."),
        ("25 %", 0.2561, "says: value 0.2561 reads 26 %, not 25 % as the text says."),
        ("−0.3", 0.31, "says: value 0.31 reads 0.3, not −0.3 as the text says."),
        ("65{,}504", 65_520, "says: value 65,520 reads 65{,}520, not 65{,}504 as the text says."),
        ("10^{-13}", 3.1e-14, "says: value 3.1e-14 reads 10^{-14}, not 10^{-13} as the text says."),
        ("10^{-7}", 0, "says: value 0 reads 10^{-∞}, not 10^{-7} as the text says."),
        ("less than 0.18", 0.18000001, "says: value 0.18000001 is not less than 0.18, as the text says."),
        ("within 10^{-9}", -2e-9, "says: value -2e-09 is not within 10^{-9}, as the text says."),
    ],
)
def test_a_value_that_does_not_is_named_with_the_text(text, value, message):
    with pytest.raises(ProseMismatch) as info:
        says(text, value)
    assert str(info.value) == message


def test_the_mismatch_is_an_assertion_error_told_in_one_line():
    with pytest.raises(AssertionError) as info:
        says("1.037", 1.04)
    error = info.value
    assert isinstance(error, ArgumentError) and error.argument == "value" and error.function == "says"
    assert error._render_traceback_() == ["ProseMismatch: says: value 1.04 reads 1.040, not 1.037 as the text says."]
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is ProseMismatch and str(again) == str(error)


@pytest.mark.parametrize(
    "value", [np.float32(0.5), np.float64(0.5), np.int64(1) / 2, np.array(0.5), torch.tensor(0.5), 0.5, 1 / 2]
)
def test_numpy_and_torch_scalars_are_values(value):
    says("0.50", value)


def test_integers_are_compared_exactly_however_large():
    says("9,007,199,254,740,993", 2**53 + 1)  # not a float: 2**53 + 1 has no float64
    with pytest.raises(ProseMismatch):
        says("9,007,199,254,740,993", float(2**53 + 1))


@pytest.mark.parametrize(
    "value", [np.array([0.5]), torch.tensor([0.5]), float("nan"), float("inf"), True, None, "0.5", [0.5]]
)
def test_what_is_not_one_finite_number_is_refused(value):
    with pytest.raises(ArgumentError, match=r"^says: value must be a finite real number"):
        says("0.5", value)


# --------------------------------------------------------------------------
# Properties: what Python prints reads back, and one step away does not
# --------------------------------------------------------------------------

magnitudes = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)
signs = st.sampled_from([1.0, -1.0])


@settings(max_examples=300, deadline=None)
@given(magnitudes, signs, st.integers(0, 6), st.sampled_from([".{}f", ",.{}f", ".{}e", "%"]))
def test_a_value_passes_as_python_prints_it_and_fails_two_steps_away(x, sign, digits, kind):
    x = sign * x
    if kind == "%":  # Python's own % format multiplies by 100 in floating point first: do it exactly
        text = f"{Decimal(x) * 100:.{digits}f} %"
    else:
        text = format(x, kind.format(digits)).replace("e+", "e")
    says(text, x)
    shown = number(text)
    step = Decimal(1).scaleb(shown.as_tuple().exponent)
    assert abs(Decimal(x) - shown) <= step / 2
    away = x + 2 * float(step) * (1 if x >= 0 else -1)
    if away != x:
        with pytest.raises(ProseMismatch):
            says(text, away)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 99), st.integers(0, 3), st.integers(-30, 30))
def test_scientific_forms_agree(mantissa, places, exponent):
    m = f"{mantissa / 10:.{places}f}"
    forms = [
        f"{m}e{exponent}",
        f"{m}·10{str(exponent).translate(SUPERSCRIPT)}",
        f"{m} \\times 10^{{{exponent}}}",
        f"${m}\\cdot10^{{{exponent}}}$",
        f"{m} × 10^{exponent}",
    ]
    readings = {number(form).as_tuple() for form in forms}
    assert readings == {Decimal(m).scaleb(exponent).as_tuple()}


@settings(max_examples=200, deadline=None)
@given(st.integers(1000, 10**12))
def test_thousands_separators_agree(n):
    forms = [f"{n}", f"{n:,}", f"{n:,}".replace(",", "\\,"), f"{n:,}".replace(",", "{,}")]
    assert {number(form) for form in forms} == {Decimal(n)}
    for form in forms:
        says(form, n)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(min_value=1e-300, max_value=1e300),
    st.sampled_from(["less than", "at most", "more than", "at least", "within"]),
)
def test_bounds_compare_without_rounding(x, bound):
    exact = Decimal(x)
    text = f"{bound} {exact}"  # every digit of the float: its shortest repr is not its exact value
    holds = {"less than": False, "at most": True, "more than": False, "at least": True, "within": True}
    if holds[bound]:
        says(text, x)
    else:
        with pytest.raises(ProseMismatch):
            says(text, x)
    assert number(text) == exact
