"""Numbers in a chapter's text, checked against the values its cells compute.

Learners read the chapters in Jupyter and Colab, where myst-nb's ``{glue:text}`` roles would show
as raw markup. So a number the text reports stays typed in the Markdown, where every reader sees
it, and the code cell that computes it (or the one right after) states it::

    from posenc_course.prose import says
    says("60,611", wavelength)          # the text: "a wavelength of about 60,611 positions"
    says("5.4·10⁸", ratio)              # the text: "2^29 ≈ 5.4·10⁸"
    says("25 %", share)                 # share = 0.25
    says("less than 0.18", angle)       # the text: "the angle turns by less than 0.18 rad"

``says`` rounds the value to the last digit the text shows and raises :class:`ProseMismatch`, an
``AssertionError`` that names both, when they differ: a chapter whose text and code have drifted
apart fails when it runs, in Jupyter and in the book's strict build alike.

The number is read as the chapters write numbers: ``0.166``, ``-3.5``, ``60,611``, ``60\\,611``,
``3.3e8``, ``5.4·10⁸``, ``5.4 \\times 10^{8}``, ``10^{-7}``, ``10⁻⁷``, ``25 %``, ``25\\%``, ``3×``,
with ``$`` signs around it or not. A power of ten alone (``10^{-7}``) shows an order of magnitude:
the value must be within a factor √10 of it. A bound in front of the number (``less than``,
``below``, ``under``, ``at most``, ``within``, ``more than``, ``above``, ``over``, ``at least``, or
``<``, ``≤``, ``>``, ``≥``) compares the value with the number as typed, without rounding;
``within`` bounds the value's size, ``|value| ≤ number``.

:func:`number` gives the :class:`~decimal.Decimal` a text shows, its last digit the last digit
shown: ``number("5.4·10⁸") == Decimal("5.4E+8")``, ``number("25 %") == Decimal("0.25")``.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal, localcontext

from posenc_course.arguments import ArgumentError, Spec, accepts

__all__ = ["says", "number"]

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻−", "0123456789+--")
# the digits: 60,611 or LaTeX's 60\,611 and 60{,}611, or 0.166; a sign in front, a hyphen or a minus sign
_MANTISSA = r"(?P<sign>[-−+]?)(?P<digits>\d{1,3}(?:(?:,|\\,|\{,\})\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
# the power of ten: ^{-7} or ^7 (LaTeX), **-7 (Python), or superscripts ⁻⁷
_POWER = (
    r"(?:\^\s*\{\s*(?P<p1>[-−+]?\d+)\s*\}|\^\s*(?P<p2>[-−+]?\d+)|\*\*\s*\(?(?P<p3>[-−+]?\d+)\)?"
    r"|(?P<p4>[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))"
)
_TIMES = r"(?:·|×|\\cdot|\\times|\*|x)"
_SUFFIX = r"\s*(?P<suffix>%|\\%|percent|×|\\times|x)?"
_FORMS = [
    re.compile(rf"{_MANTISSA}(?:[eE](?P<e>[-−+]?\d+)|\s*{_TIMES}\s*10\s*{_POWER})?{_SUFFIX}"),
    re.compile(rf"(?P<sign>[-−+]?)10\s*{_POWER}{_SUFFIX}"),  # a power of ten alone: 10^{-7}, 10⁻⁷
]
# a bound in front of the number: the word (or sign) the text uses -> how the value must compare with it
_BOUNDS = {
    "less than": "<",
    "below": "<",
    "under": "<",
    "<": "<",
    "at most": "<=",
    "≤": "<=",
    "<=": "<=",
    "\\le": "<=",
    "within": "|<=|",
    "more than": ">",
    "above": ">",
    "over": ">",
    ">": ">",
    "at least": ">=",
    "≥": ">=",
    ">=": ">=",
    "\\ge": ">=",
}
_BOUND = re.compile(r"\s*(?P<bound>" + "|".join(sorted(map(re.escape, _BOUNDS), key=len, reverse=True)) + r")\s*")
_FORMS_TEXT = "a number as the text writes it (0.166, 60,611, 3.3e8, 5.4·10⁸, 10^{-7}, 25 %, 3×, less than 0.18)"
# enough digits for every float exactly (a float64 has at most 767 significant decimal digits): no comparison
# below is rounded
_EXACT = 2000


class _Reading:
    """What a text shows: ``number`` (last digit = last digit shown), its ``bound`` (or None), the match."""

    def __init__(self, number: Decimal, bound: str | None, match: re.Match, typed: str):
        self.number, self.bound, self.match, self.typed = number, bound, match, typed


def _read(text: str) -> _Reading | None:
    """How ``text`` reads, or None if it is not one number (with a bound in front, or not)."""
    plain = text.strip().strip("$").strip()
    bound = _BOUND.match(plain)
    # a bound is a word (or sign) followed by the number: "over" alone, or "overall 5", is no bound
    if bound and re.match(r"[\d$+\-−·.\\]|10", plain[bound.end() :]):
        plain = plain[bound.end() :].strip("$").strip()
        bound = _BOUNDS[bound.group("bound")]
    else:
        bound = None
    for form in _FORMS:
        match = form.fullmatch(plain)
        if match is None:
            continue
        parts = match.groupdict()
        mantissa = Decimal(re.sub(r"\\,|\{,\}|,", "", parts.get("digits") or "1"))
        power = next((parts[k] for k in ("e", "p1", "p2", "p3", "p4") if parts.get(k)), "0")
        exponent = int(power.translate(_SUPERSCRIPTS))
        if parts["suffix"] in ("%", "\\%", "percent"):
            exponent -= 2
        sign = -1 if parts["sign"] in ("-", "−") else 1
        with localcontext(prec=_EXACT):  # exact: the default context would round to 28 digits
            return _Reading((sign * mantissa).scaleb(exponent), bound, match, plain)
    return None


class _Text(Spec):
    text = _FORMS_TEXT

    def ok(self, value) -> bool:
        return isinstance(value, str) and _read(value) is not None


class _Scalar(Spec):
    text = "a finite real number (a Python or numpy number, or a 0-d array or tensor)"

    def ok(self, value) -> bool:
        return _decimal(value) is not None


def _decimal(value) -> Decimal | None:
    """``value`` as the exact Decimal it stands for, or None if it is not one finite real number."""
    if isinstance(value, bool) or value is None:
        return None
    if not isinstance(value, numbers.Real):
        shape, item = getattr(value, "shape", None), getattr(value, "item", None)
        if item is None or shape is None or tuple(shape) != ():
            return None
        value = item()
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
    if isinstance(value, numbers.Integral):
        return Decimal(int(value))
    x = float(value)
    return Decimal(x) if math.isfinite(x) else None  # exact: a float is a binary fraction


@accepts(text=_Text())
def number(text: str) -> Decimal:
    """The number ``text`` shows, as a Decimal whose last digit is the last digit shown.

    ``number("60,611") == Decimal("60611")``; ``number("5.4·10⁸") == Decimal("5.4E+8")``;
    ``number("25 %") == Decimal("0.25")``; ``number("10^{-7}") == Decimal("1E-7")``. A bound in
    front is read and left out: ``number("less than 0.18") == Decimal("0.18")``.
    """
    return _read(text).number


class ProseMismatch(ArgumentError, AssertionError):
    """A value that does not read as the number its text shows: the text and the code have drifted apart.

    An ``AssertionError``, like a failed ``assert``, and told in one line like a bad argument.
    """


@accepts(text=_Text(), value=_Scalar())
def says(text: str, value) -> None:
    """Check that ``value`` is what ``text`` says it is, to the last digit ``text`` shows.

    ``text`` is the number as the chapter's Markdown types it (``"0.166"``, ``"60,611"``,
    ``"5.4·10⁸"``, ``"25 %"``, ``"less than 0.18"``); ``value`` is what the cell computed.
    ``says("0.17", 0.1663)`` passes, since 0.1663 reads 0.17 at two decimals, and so does
    ``says("0.17", 0.1749)``; ``says("0.17", 0.1751)`` raises :class:`ProseMismatch`, naming both
    numbers. A value exactly half-way passes either way of rounding it. Returns None, so a cell
    that ends with it shows nothing.
    """
    reading = _read(text)
    exact, shows = _decimal(value), reading.number
    with localcontext(prec=_EXACT):
        if reading.bound is not None:
            left = abs(exact) if reading.bound == "|<=|" else exact
            if _compare(left, reading.bound.strip("|"), shows):
                return
            raise ProseMismatch(f"value {_shown(exact)} is not {text.strip()}, as the text says.", "value")
        if reading.match.groupdict().get("digits") is None:  # a power of ten alone: an order of magnitude
            magnitude = math.log10(abs(float(exact))) if exact else -math.inf
            if abs(magnitude - shows.adjusted()) <= 0.5:
                return
            reads = f"10^{{{round(magnitude) if exact else '-∞'}}}"
        else:
            step = Decimal(1).scaleb(shows.as_tuple().exponent)  # one unit of the last digit shown
            if abs(exact - shows) * 2 <= step:
                return
            reads = _rewritten(reading, exact)
    raise ProseMismatch(f"value {_shown(exact)} reads {reads}, not {text.strip()} as the text says.", "value")


def _shown(exact: Decimal) -> str:
    """The value as a message shows it: an integer whole, anything else as the shortest float that reads back."""
    return f"{exact:,}" if exact == exact.to_integral_value() and abs(exact) < 10**16 else repr(float(exact))


def _compare(left: Decimal, sign: str, right: Decimal) -> bool:
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[sign]


def _rewritten(reading: _Reading, exact: Decimal) -> str:
    """``exact`` written the way the text writes its number: the same form, down to the same last digit."""
    match, typed = reading.match, reading.match.group("digits")
    places = len(typed.partition(".")[2])
    scale = reading.number.as_tuple().exponent + places  # the power of ten the typed digits stand for
    mantissa = exact.scaleb(-scale).quantize(Decimal(1).scaleb(-places))
    digits = f"{abs(mantissa):,}" if "," in typed else f"{abs(mantissa)}"
    for separator in ("\\,", "{,}"):  # LaTeX's thousands separators
        if separator in typed:
            digits = digits.replace(",", separator)
    sign = ("−" if "−" in reading.typed else "-") if mantissa < 0 else ""
    start = match.start("sign") if match.group("sign") else match.start("digits")
    return reading.typed[:start] + sign + digits + reading.typed[match.end("digits") :]
