"""What each public function of ``posenc_course`` accepts, stated once, checked before it runs.

A learner who passes a bad argument gets one line that names the function,
the argument and what is allowed, never a traceback through the course's code
or a shape error from deep inside numpy or torch::

    FormulaExplorer: d_model must be an integer from 2 to 256, not 'x'.
    formula_data needs d_model: an integer >= 1.

The declaration sits on the function (or the class, for its constructor)::

    @accepts(d_model=Int(1), base=Real(above=1), layout=OneOf("interleaved", "concatenated"))
    def table(d_model, base=10000.0, *, layout="interleaved"): ...

Every named parameter needs a spec and every default must satisfy it; both are
checked when the module is imported, so a new parameter cannot slip through
unchecked. Checks that involve several arguments (``offset < length``) stay in
the body and call :func:`refuse`, which raises the same one-line error.

:class:`ArgumentError` is what all of this raises. IPython (Jupyter, Colab, VS
Code) shows an exception through its ``_render_traceback_`` when it has one,
so a learner sees the single line and no frames. Outside IPython the traceback
ends at the call the learner wrote: the frames inside the course are dropped.

Only the standard library is imported here (numpy and torch are looked at only
when a value is one of theirs), so every course module can use it for free.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import re
import sys

__all__ = [
    "ArgumentError",
    "refuse",
    "accepts",
    "Spec",
    "Int",
    "Real",
    "Bool",
    "Text",
    "OneOf",
    "Either",
    "Maybe",
    "InstanceOf",
    "Function",
    "Items",
    "Dict",
    "Array",
    "Tensor",
    "Positions",
    "Anything",
]


class ArgumentError(ValueError, TypeError):
    """A bad argument to a course function, told in one line.

    Both a ``ValueError`` and a ``TypeError``: for a learner the line between
    "wrong type" and "wrong value" is blurry (is ``1.5`` for a count a wrong
    type or a wrong value?), and code written against either, ``except
    ValueError`` included, keeps working.
    """

    def __init__(self, message: str, argument: str | None = None, function: str | None = None):
        super().__init__(message)
        self.message, self.argument, self.function = message, argument, function

    def __str__(self) -> str:
        if not self.function:
            return self.message
        # "f needs x: ..." and "f takes ..." read as sentences; "f: x must be ..." names the function first
        return f"{self.function}{' ' if self.message.startswith(_VERBS) else ': '}{self.message}"

    def __reduce__(self):
        return type(self), (self.message, self.argument, self.function)

    def _render_traceback_(self) -> list[str]:
        """What IPython prints instead of the traceback: this one line."""
        return [f"{type(self).__name__}: {self}"]


_VERBS = ("needs ", "takes ", "has no ", "got ", "cannot ", "is ")


def _article(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def shown(value) -> str:
    """A value as a message shows it: short, on one line, arrays by their shape."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and type(value).__module__.split(".")[0] in ("numpy", "torch"):
        kind = "tensor" if type(value).__module__.startswith("torch") else "array"
        return f"{_article(str(value.dtype))} {kind} of shape {tuple(shape)}"
    if isinstance(value, (str, bytes)):
        text = repr(value)
        return text if len(text) <= 42 else text[:38] + "...'"
    text = repr(value)
    if len(text) <= 42 and "\n" not in text and not text.startswith("<"):
        return text
    if isinstance(value, (list, tuple, dict, set)):
        return f"{_article(type(value).__name__)} of {len(value)} items"
    return _article(type(value).__name__)


def refuse(
    argument: str, allowed: str | None = None, value=None, *, message: str | None = None, function: str | None = None
):
    """Raise the one-line error for ``argument``: "must be ``allowed``, not ``value``", or ``message``.

    Called in a decorated function's body, the function's name is filled in on the way out.
    """
    if message is None:
        message = f"{argument} must be {allowed}, not {shown(value)}."
    raise ArgumentError(message, argument, function)


# --------------------------------------------------------------------------
# Specs: a predicate and the words for what it accepts
# --------------------------------------------------------------------------


class Spec:
    """What one argument accepts: ``ok(value)`` says whether a value fits, ``text`` says it in words."""

    text = "anything"

    def ok(self, value) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.text}>"


class Anything(Spec):
    """Any value: for arguments the function itself makes sense of (a caption, a cell)."""

    def __init__(self, what: str = "anything"):
        self.text = what


def _range_text(lo, hi, above=None, below=None) -> str:
    if lo is not None and hi is not None:
        return f"from {lo:,} to {hi:,}" if isinstance(lo, int) else f"from {lo:g} to {hi:g}"
    parts = []
    for sign, bound in ((">=", lo), (">", above), ("<=", hi), ("<", below)):
        if bound is not None:
            parts.append(f"{sign} {bound:,}" if isinstance(bound, int) else f"{sign} {bound:g}")
    return " and ".join(parts)


class Int(Spec):
    """An integer (Python's or numpy's, never a bool) in ``lo ... hi``; ``even`` for channel pairs."""

    def __init__(self, lo: int | None = None, hi: int | None = None, *, even: bool = False, what: str | None = None):
        self.lo, self.hi, self.even = lo, hi, even
        bounds = _range_text(lo, hi)
        self.text = what or f"{'an even' if even else 'an'} integer" + (f" {bounds}" if bounds else "")

    def ok(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            return False
        return (
            (self.lo is None or value >= self.lo)
            and (self.hi is None or value <= self.hi)
            and not (self.even and value % 2)
        )


class Real(Spec):
    """A finite real number (an int will do) within the bounds given."""

    def __init__(self, lo=None, hi=None, *, above=None, below=None, what: str | None = None):
        self.lo, self.hi, self.above, self.below = lo, hi, above, below
        bounds = _range_text(lo, hi, above, below)
        self.text = what or "a number" + (f" {bounds}" if bounds else "")

    def ok(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        try:
            x = float(value)
        except (TypeError, ValueError, OverflowError):
            return False
        return (
            math.isfinite(x)
            and (self.lo is None or x >= self.lo)
            and (self.hi is None or x <= self.hi)
            and (self.above is None or x > self.above)
            and (self.below is None or x < self.below)
        )


class Bool(Spec):
    text = "True or False"

    def ok(self, value) -> bool:
        numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")
        return isinstance(value, bool) or numpy_bool


class Text(Spec):
    """A non-empty string; with ``pattern``, one that matches it whole."""

    def __init__(self, pattern: str | None = None, *, what: str = "a non-empty string"):
        self.pattern, self.text = pattern, what

    def ok(self, value) -> bool:
        if not isinstance(value, str) or not value.strip():
            return False
        return self.pattern is None or re.fullmatch(self.pattern, value) is not None


class OneOf(Spec):
    """One of a few fixed values (names, keys, dtypes); the message lists them all."""

    def __init__(self, *choices, what: str | None = None):
        self.choices = choices
        self.text = what or "one of " + ", ".join(repr(c) for c in choices)

    def ok(self, value) -> bool:
        # same type and equal: no elementwise == on an array, and 1 is not True
        return any(value is c or (type(value) is type(c) and value == c) for c in self.choices)


class Either(Spec):
    """Any of several specs."""

    def __init__(self, *specs: Spec, what: str | None = None):
        self.specs = specs
        self.text = what or " or ".join(s.text for s in specs)

    def ok(self, value) -> bool:
        return any(s.ok(value) for s in self.specs)


class Maybe(Either):
    """``None`` or what ``spec`` accepts."""

    def __init__(self, spec: Spec, what: str | None = None):
        super().__init__(OneOf(None), spec, what=what or f"None or {spec.text}")


class InstanceOf(Spec):
    def __init__(self, cls, what: str | None = None):
        self.cls = cls
        names = cls if isinstance(cls, tuple) else (cls,)
        self.text = what or " or ".join(_article(c.__name__) for c in names)

    def ok(self, value) -> bool:
        return isinstance(value, self.cls)


class Function(Spec):
    def __init__(self, what: str = "a function"):
        self.text = what

    def ok(self, value) -> bool:
        return callable(value)


class Items(Spec):
    """A list or tuple (any iterable but a string or a mapping) of at least ``min_len`` items."""

    def __init__(self, item: Spec | None = None, *, min_len: int = 0, what: str | None = None):
        self.item, self.min_len = item or Anything(), min_len
        self.text = what or (f"a list of at least {min_len} " if min_len else "a list of ") + f"({self.item.text})"

    def ok(self, value) -> bool:
        # a sized collection: checking a generator would use it up before the function sees it
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__") or not hasattr(value, "__len__"):
            return False
        if type(value).__module__.split(".")[0] in ("numpy", "torch") and getattr(value, "ndim", 1) == 0:
            return False
        try:
            items = list(value)
        except Exception:
            return False
        return len(items) >= self.min_len and all(self.item.ok(x) for x in items)


class Dict(Spec):
    """A mapping whose values fit ``value``, with at least ``min_len`` entries."""

    def __init__(self, value: Spec | None = None, *, min_len: int = 0, what: str | None = None):
        self.value, self.min_len = value or Anything(), min_len
        self.text = what or f"a dict whose values are {self.value.text}"

    def ok(self, value) -> bool:
        return (
            hasattr(value, "keys")
            and hasattr(value, "values")
            and len(value) >= self.min_len
            and all(self.value.ok(v) for v in value.values())
        )


def _numbers(value):
    """``value`` as a numpy array of real numbers, or None when it is not one (ragged, text, complex)."""
    if isinstance(value, (str, bytes, dict)) or value is None or isinstance(value, bool):
        return None
    import numpy as np

    if type(value).__module__.startswith("torch"):
        try:
            if value.is_complex() or value.dtype == sys.modules["torch"].bool:
                return None
            value = value.detach().cpu().double().numpy()  # double: numpy has no bfloat16
        except Exception:
            return None
    try:
        arr = np.asarray(value)
    except Exception:
        return None
    return arr if arr.dtype.kind in "iuf" else None


class Array(Spec):
    """Real numbers of ``ndim`` dimensions (a numpy array, a torch tensor or nested lists), not empty."""

    def __init__(self, ndim: int | tuple = 2, *, what: str | None = None):
        self.ndim = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        self.text = what or f"a {' or '.join(f'{n}-D' for n in self.ndim)} array of real numbers"

    def ok(self, value) -> bool:
        arr = _numbers(value)
        return arr is not None and arr.ndim in self.ndim and arr.size > 0


class Tensor(Spec):
    """A torch tensor with ``ndim`` dimensions, floating point with ``floating``."""

    def __init__(self, ndim: int | tuple | None = None, *, floating: bool = False, what: str | None = None):
        self.ndim = (ndim,) if isinstance(ndim, int) else ndim
        self.floating = floating
        dims = f"{' or '.join(f'{n}-D' for n in self.ndim)} " if self.ndim else ""
        self.text = what or f"a {dims}{'floating-point ' if floating else ''}torch tensor"

    def ok(self, value) -> bool:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(value, torch.Tensor):
            return False
        return (self.ndim is None or value.dim() in self.ndim) and (not self.floating or value.is_floating_point())


class Positions(Spec):
    """Positions: a count ``n`` (meaning 0 ... n-1, with ``count``) or a 1-D list of finite numbers."""

    def __init__(self, *, count: bool = True, what: str | None = None):
        self.count = count
        self.text = what or ("a count n >= 0 or " if count else "") + "a 1-D list of finite positions"

    def ok(self, value) -> bool:
        if self.count and Int(0).ok(value):
            return True
        arr = _numbers(value)
        if arr is None or arr.ndim != 1:
            return False
        import numpy as np

        return bool(np.all(np.isfinite(arr)))


# --------------------------------------------------------------------------
# The decorator
# --------------------------------------------------------------------------


def _binding_error(name: str, signature: inspect.Signature, specs: dict, args, kwargs) -> ArgumentError:
    """The one-line error for a call that does not fit the signature at all."""
    params = [p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for key in kwargs:
        if key not in signature.parameters or signature.parameters[key].kind == inspect.Parameter.POSITIONAL_ONLY:
            names = ", ".join(p.name for p in params) or "none"
            return ArgumentError(f"has no argument {key!r}; its arguments are {names}.", key, name)
    if len(args) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values()):
        if not params:
            return ArgumentError("takes no arguments.", None, name)
        listed = f" ({', '.join(positional)})" if positional else ""
        keyword = [p.name for p in params if p.kind == p.KEYWORD_ONLY]
        by_name = f"; give {', '.join(keyword)} by name" if keyword else ""
        return ArgumentError(
            f"takes at most {len(positional)} positional arguments{listed}, not {len(args)}{by_name}.",
            positional[-1] if positional else keyword[0],
            name,
        )
    given = set(positional[: len(args)])
    for key in kwargs:
        if key in given:
            return ArgumentError(f"got {key} twice, by position and by name.", key, name)
    for p in params:
        if p.default is p.empty and p.name not in given and p.name not in kwargs:
            return ArgumentError(f"needs {p.name}: {specs[p.name].text}.", p.name, name)
    return ArgumentError("cannot take these arguments.", None, name)  # pragma: no cover - bind found a problem


def accepts(**specs: Spec):
    """Check a function's (or a class constructor's) arguments against ``specs`` before the body runs.

    A bad or missing argument raises :class:`ArgumentError`; so does an error that
    the body raises with :func:`refuse`, with the function's name filled in.
    """

    def decorate(target):
        if isinstance(target, type):
            target.__init__ = _checked(target.__init__, specs, target.__name__, skip_self=True)
            return target
        return _checked(target, specs, target.__name__, skip_self=False)

    return decorate


def _checked(function, specs: dict, name: str, *, skip_self: bool):
    signature = inspect.signature(function)
    params = list(signature.parameters.values())[1 if skip_self else 0 :]
    named = {p.name: p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    # stated once and complete: a parameter without a spec, or a spec for no parameter, is a mistake
    if set(named) != set(specs):
        raise TypeError(f"{name}: specs {sorted(specs)} do not match the parameters {sorted(named)}")
    for p in named.values():
        if p.default is not p.empty and not specs[p.name].ok(p.default):
            raise TypeError(f"{name}: the default {p.name}={p.default!r} is not {specs[p.name].text}")
    own = signature.replace(parameters=params)

    @functools.wraps(function)
    def checked(*args, **kwargs):
        call_args = args[1:] if skip_self else args
        try:
            bound = own.bind(*call_args, **kwargs)
        except TypeError:
            error = _binding_error(name, own, specs, call_args, kwargs)
            raise error.with_traceback(None) from None
        for key, value in bound.arguments.items():
            spec = specs.get(key)
            if spec is not None and not spec.ok(value):
                error = ArgumentError(f"{key} must be {spec.text}, not {shown(value)}.", key, name)
                raise error.with_traceback(None) from None
        try:
            return function(*args, **kwargs)
        except ArgumentError as error:
            # the learner called this function: name it, unless the argument is not one of its own
            if error.function is None or error.argument in named:
                error.function = name
            raise error.with_traceback(None) from None

    checked.__accepts__ = specs
    return checked
