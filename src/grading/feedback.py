"""Feedback helpers: how answers are read (numbers, arrays) and how what is wrong is put in words.

Answers of any real dtype are read (bfloat16 and float16 tensors included);
complex ones are refused with a message, never cut to their real part. A wrong
number is described by its direction and a coarse size only, never by a ratio
or difference precise enough to compute the answer from (``how_far``).
"""

from __future__ import annotations

import collections.abc
import contextlib
import functools
import inspect
import itertools
import linecache
import math
import numbers
import os
import re
import sys
import sysconfig
import types
import warnings
import zlib

import numpy as np
import torch


def short_error(exc, limit=160) -> str:
    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(x) -> str:
    """A short name for what the learner gave, for messages."""
    if x is None:
        return "None"
    if isinstance(x, str):
        return f"the string {x[:30]!r}"
    if isinstance(x, (np.ndarray, torch.Tensor)):
        kind = "numpy array" if isinstance(x, np.ndarray) else "torch tensor"
        return f"a {kind} of shape {tuple(x.shape)}"
    if isinstance(x, (int, float, complex, np.generic)):
        return f"the {type(x).__name__} {x!r}"
    if isinstance(x, type):
        return f"the class {x.__name__}"
    if inspect.isroutine(x):
        return "a function"
    name = type(x).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def index_text(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def close_enough(a, b, rtol, atol=0.0) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def seed_for(qid: str) -> int:
    return zlib.crc32(qid.encode())


COMPLEX = "The answer is real: if your computation went through complex numbers, take the real part (.real) yourself."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def shown_digits(a, b, least=8) -> tuple[str, str]:
    """``a`` and ``b`` printed with the fewest significant digits (at least ``least``) that tell them apart."""
    for n in range(least, 18):
        shown = f"{a:.{n}g}", f"{b:.{n}g}"
        if shown[0] != shown[1]:
            break
    return shown


def tolerance_text(rtol=0.0, atol=0.0) -> str:
    """How close an answer must be, in words: "within 0.1% of the right value", "within 1e-06"."""
    parts = ([f"{atol:g}"] if atol else []) + ([f"{rtol * 100:g}% of the right value"] if rtol else [])
    return "within " + " + ".join(parts) if parts else "exact"


def _power_of_ten(x) -> str:
    """1e-07 -> $10^{-7}$, 5e-07 -> $5 \\times 10^{-7}$ (markdown with LaTeX)."""
    mantissa, exponent = f"{x:.0e}".split("e")
    power = f"10^{{{int(exponent)}}}"
    return f"${power}$" if mantissa == "1" else f"${mantissa} \\times {power}$"


def within_markdown(atol, rtol) -> str:
    """A tolerance as a question's Accepted line states it, in markdown: "within $10^{-7}$ of the exact value"."""
    if not atol and not rtol:
        return "exactly equal to the right value (no tolerance)"
    if not atol:
        return f"within {100 * rtol:g} % of the exact value"
    if not rtol:
        return f"within {_power_of_ten(atol)} of the exact value"
    return f"within {_power_of_ten(atol)[:-1]} + {_power_of_ten(rtol)[1:-1]}\\,|v|$ of the exact value $v$"


def decade_text(error, *, percent=False) -> str:
    """The power of ten an error lies within, in words: "between 1e-4 and 1e-3", "between 0.1% and 1%"."""
    if percent:
        error *= 100
    k = math.floor(math.log10(error)) if error > 0 else 0

    def power(n):
        text = f"{10.0**n:g}" if -2 <= n <= 3 else f"1e{n}"
        return text + ("%" if percent else "")

    return f"between {power(k)} and {power(k + 1)}"


ITEMS_READ = 10**6  # values read at most from a generator or other iterator given as an array


def plain_value(x):
    """(plain ndarray, None) or (None, message) for an ndarray ``x``, perhaps of a subclass.

    Answers are compared as plain arrays only: a subclass's own comparisons, ``any()`` or ufuncs could lie (a
    masked array compares as masked, so "no element is wrong"). A masked array with masked values is
    refused; otherwise the data are viewed as a plain ``np.ndarray`` without calling any method of the
    subclass (``np.ndarray.view`` from the base class).
    """
    if isinstance(x, np.ma.MaskedArray):
        if np.ndarray.any(np.ma.getmaskarray(x)):
            return None, (
                "your array is a masked array with masked (missing) values: every element needs a "
                "value; return a plain numpy array."
            )
        x = np.ma.getdata(x)
    return np.ndarray.view(x, np.ndarray), None


def _tensor_to_numpy(t):
    """A real tensor (any dtype, subclasses too, whose __torch_function__ is not consulted) as float64 numpy."""
    disabled = getattr(torch._C, "DisableTorchFunctionSubclass", None)
    with disabled() if disabled else contextlib.nullcontext():
        return torch.Tensor.numpy(torch.Tensor.to(torch.Tensor.cpu(torch.Tensor.detach(t)), torch.float64)).copy()


def as_number(answer, _depth=0):
    """(float, None) or (None, message).

    Any real scalar is read: Python and numpy numbers of every width, a
    one-element array or tensor of any real dtype (bfloat16 included), and a
    one-item list or tuple such as ``[0.01]``. Complex values are refused.
    """
    if isinstance(answer, (list, tuple)):
        if len(answer) == 1 and _depth < 3:
            return as_number(answer[0], _depth + 1)
        kind = type(answer).__name__
        got = f"an empty {kind}" if not answer else f"a {kind} of {_plural(len(answer), 'item')}"
        return None, f"expected one number, got {got}."
    if isinstance(answer, torch.Tensor):
        if answer.numel() != 1:
            return None, f"expected one number, got {describe(answer)}."
        try:
            answer = answer.detach().cpu().reshape(()).item()
        except (RuntimeError, TypeError, ValueError) as exc:  # e.g. a sparse or meta tensor
            return None, f"could not read your tensor as a number ({short_error(exc)})."
    if isinstance(answer, np.ndarray):
        answer, problem = plain_value(answer)
        if problem:
            return None, problem
        if answer.size != 1:
            return None, f"expected one number, got {describe(answer)}."
        answer = answer.reshape(()).item()
    if isinstance(answer, (bool, np.bool_)):
        return None, f"expected a number, got the bool {answer}."
    if isinstance(answer, str):
        return None, f"expected a number, got {describe(answer)}: write the number without quotes."
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        return None, f"expected a real number, got the complex number {complex(answer)!r}. {COMPLEX}"
    if not isinstance(answer, numbers.Real):
        return None, f"expected a number, got {describe(answer)}."
    try:
        x = float(answer)
    except OverflowError:
        return None, "your answer is too large to be a float: check the computation that produced it."
    if math.isnan(x):
        return None, "your answer is NaN (not a number): check the computation that produced it."
    if math.isinf(x):
        return None, "your answer is infinite: check for a division by zero or an overflow."
    return x, None


def how_far(x, want, rtol, *, integer=False) -> str:
    """What is wrong with the number ``x``, in words that do not give the answer away.

    Only the direction and a coarse size (more than 10 times, 2 to 10 times,
    less than 2 times, within 10%, and for an answer that need not be a whole
    number within 1%, 0.1% ...) are said, and that a close answer is the right
    value rounded (it already holds those digits). A precise ratio or difference
    ("about 9.65e+03 times the right value", "by 3.4%") would let a blind
    guess recover the answer in two or three tries. The named mistakes (a
    factor of 2, the square) are said only when undoing them gives an answer
    within the tolerance: a learner who got there computed the right thing
    but for that one slip, and a blind guess lands there no more often than on
    the answer itself.
    """

    def hit(value):
        return value == want if integer else close_enough(value, want, rtol)

    exact = "the answer is a whole number, so it must be exact" if integer else f"it must be {tolerance_text(rtol)}"
    if want == 0 or x == 0:
        return f"too {'high' if x > want else 'low'}."
    if (x > 0) != (want > 0):
        return "the sign is wrong" + (" (the size is right)." if hit(-x) else ".")
    direction = "too high" if x > want else "too low"
    if hit(x / 2) or hit(x * 2):
        return f"off by a factor of 2 ({direction})."
    if abs(want) != 1 and hit(math.copysign(math.sqrt(abs(x)), want)):
        return "that is the square of the right value: is the exponent doubled (2·(2i)/d instead of 2i/d)?"
    factor = max(x / want, want / x)
    if factor > 10:
        return f"{direction}, by more than a factor of 10."
    if factor >= 2:
        return f"{direction}, by a factor between 2 and 10."
    if factor > 1.1:
        return f"{direction}, by less than a factor of 2."
    if integer:  # "within 1%" of a count read as a difference of 1 would give it away
        return f"{direction}, but close: within 10%; {exact}."
    return f"{direction}, but close: {_how_close(x, want)}; {exact}.{_rounded(x, want)}"


def _how_close(x, want) -> str:
    """The relative error of a close answer, by its power of ten only ("within 1%" for 0.3%): a finer figure
    would give the answer to a learner who divides by it."""
    relative = abs(x - want) / abs(want)
    bound = 10.0 ** math.ceil(math.log10(relative)) if relative > 0 else 0.1
    if bound == relative:  # exactly 1%: within 10%
        bound *= 10
    return f"within {min(bound, 0.1) * 100:g}%"


def _rounded(x, want) -> str:
    """ " Your answer is the right value rounded to 3 significant digits: ..." when it is (and has at most 6)."""
    digits = len(f"{abs(x):.15g}".split("e")[0].replace(".", "").strip("0"))
    if digits <= 6 and float(f"{want:.{digits}g}") == x:
        return f" It is the right value rounded to {_plural(digits, 'significant digit')}: give more digits."
    return ""


def as_array(answer):
    """(float64 array, None) or (None, message).

    Arrays, tensors (any real dtype, bfloat16 and float16 included) and nested
    lists are read; complex values are refused rather than cut to their real
    part, strings rather than parsed.
    """
    if answer is None or isinstance(answer, (str, bytes, bool, dict)) or callable(answer):
        return None, f"expected an array of numbers, got {describe(answer)}."
    if isinstance(answer, (set, frozenset)):
        return None, "a set has no order: give the numbers as a list or an array."
    try:
        if isinstance(answer, torch.Tensor):
            if torch.Tensor.is_complex(answer):
                return None, f"your tensor is complex ({answer.dtype}). {COMPLEX}"
            answer = _tensor_to_numpy(answer)  # any real dtype, bfloat16 too
        if isinstance(answer, np.ndarray):
            answer, problem = plain_value(answer)
            if problem:
                return None, problem
        elif isinstance(answer, collections.abc.Iterator) or isinstance(answer, (map, filter, range)):
            items = list(itertools.islice(answer, ITEMS_READ + 1))  # a generator, map(...), iter(...)
            if len(items) > ITEMS_READ:
                return None, f"your answer yields more than {ITEMS_READ:,} values: give the array itself."
            answer = items
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            arr = np.asarray(answer)
            if arr.dtype.kind == "O":  # a list of Fractions, Decimals ...: each must be a real number
                items = arr.reshape(-1).tolist()
                if any(isinstance(v, numbers.Complex) and not isinstance(v, numbers.Real) for v in items):
                    return None, f"your array contains complex numbers. {COMPLEX}"
                if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in items):
                    return None, (
                        "your array holds objects that are not numbers (dtype object); give numbers, "
                        "e.g. np.array(values, dtype=float)."
                    )
                arr = np.array([float(v) for v in items], dtype=np.float64).reshape(arr.shape)
            if arr.dtype.kind == "c":
                return None, f"your array is complex ({arr.dtype}). {COMPLEX}"
            if arr.dtype.kind in "US":
                return None, "your array holds strings; give the numbers without quotes."
            arr = arr.astype(np.float64)
    except np.exceptions.ComplexWarning:
        return None, f"your array contains complex numbers. {COMPLEX}"
    except OverflowError:
        return None, "your array holds a number too large for a float (above about 1.8e308)."
    except (RuntimeError, TypeError, ValueError) as exc:
        if "complex" in str(exc):
            return None, f"your array contains complex numbers. {COMPLEX}"
        return None, f"could not read your answer as an array of numbers ({short_error(exc)})."
    return arr, None


def same_value(a, b) -> bool:
    """Is ``a`` (what the learner got) still equal to ``b`` (a pristine copy)?"""
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(map(same_value, a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def safely(test, *args) -> bool:
    try:
        return bool(test(*args))
    except Exception:
        return False


def verify_array(out, want, *, dtype=None, atol=1e-8):
    """Message for the first problem of ``out`` against ``want`` (numpy), or None.

    Function questions ask for a numpy array; anything else (a torch tensor
    of any dtype, a list) is named, never converted. A wrong element is
    printed with enough digits to show how it differs from the expected one;
    when it is right to the precision of its own dtype (float32, float16)
    the message says so instead.
    """
    if isinstance(out, torch.Tensor):
        how = " (.float().numpy(): numpy has no bfloat16)" if out.dtype == torch.bfloat16 else ""
        return f"your function returned a torch tensor of dtype {out.dtype}; return a numpy array{how}."
    if not isinstance(out, np.ndarray):
        return f"your function returned {describe(out)}; return a numpy array."
    out, problem = plain_value(out)
    if problem:
        return problem
    if out.shape != want.shape:
        return f"expected shape {want.shape}, got {out.shape}."
    if out.dtype.kind == "c":
        return f"your array is complex ({out.dtype}). {COMPLEX}"
    if out.dtype.kind not in "fiu":
        return f"expected an array of real numbers, got dtype {out.dtype}."
    if dtype is not None and out.dtype != dtype:
        return f"expected dtype {np.dtype(dtype)}, got {out.dtype}."
    if np.isnan(out).any():
        return f"element {index_text(np.argwhere(np.isnan(out))[0])} is NaN."
    err = np.abs(out.astype(np.float64) - want)
    bad = err > atol
    if not bad.any():
        return None
    i = tuple(np.argwhere(bad)[0])
    got, expected = out.astype(np.float64)[i], want[i]
    low_precision = dtype is None and out.dtype.kind == "f" and out.dtype.itemsize < 8
    if low_precision and err[i] <= 2 * np.spacing(np.abs(expected).astype(out.dtype)):
        return (
            f"element {index_text(i)} is right to {out.dtype} precision, but this question asks for an error "
            f"below {atol:g}: compute in float64 and return float64."
        )
    shown = shown_digits(got, expected)
    msg = (
        f"element {index_text(i)} is {shown[0]}, expected {shown[1]} "
        f"(off by {shown_digits(err[i], atol, least=2)[0]}; it must be {tolerance_text(atol=atol)})"
    )
    worst = np.unravel_index(np.argmax(err), err.shape)
    if err[worst] > err[i]:  # the largest error, against the tolerance just stated
        msg += f"; the largest error is {shown_digits(err[worst], atol, least=2)[0]}, at element {index_text(worst)}"
    if dtype is None and err.max() < 1e-5 and atol < 1e-6:
        msg += ": your values agree only to float32 precision; compute in float64"
    return msg + "."


def reference_verifier(reference, **options):
    return lambda out, case: verify_array(out, np.asarray(reference(*case.args), dtype=np.float64), **options)


class Model:
    """A known mistake of a coding question, as a model: ``make(*case.args)`` is what code with that mistake
    returns for a case's inputs (None, or an exception, where the mistake does not apply).

    The question names the mistake only when it explains the failure: the model's output is wrong for these
    inputs, beyond the question's tolerance (where the mistake changes nothing, e.g. a rotation by -p at
    p = 0, it cannot be why the answer failed), and the learner's output is within the question's tolerance
    of the model's. ``signature(out, case)``, when given, replaces the second condition for a mistake whose
    outputs differ with how it is written (angles formed in float32 round differently in each recipe, but
    the error grows with the position); ``make`` is then one such recipe.
    """

    def __init__(self, make, signature=None):
        self.make, self.signature = make, signature


def matches_model(model):
    """The mistake whose output is what the buggy ``model`` gives (see ``Model``)."""
    return Model(model)


def is_ordinary(answer, depth=0) -> bool:
    """Is ``answer`` made only of things whose behaviour the grader knows (Python's own types, numpy's, torch's,
    functions and classes)? Then a failure reading it is the grader's; an object of another kind may raise or
    lie in its own methods."""
    if isinstance(answer, (types.FunctionType, types.BuiltinFunctionType, type, functools.partial)):
        return True
    if type(answer).__module__.split(".")[0] not in ("builtins", "numpy", "torch"):
        return False
    if isinstance(answer, (list, tuple, set, frozenset, dict)):
        items = answer.values() if isinstance(answer, dict) else answer
        return depth < 3 and all(is_ordinary(x, depth + 1) for x in itertools.islice(items, 1000))
    return True


# --------------------------------------------------------------------------
# Where the learner's code raised
# --------------------------------------------------------------------------
# A learner's function is defined in a notebook cell: its code objects name a file that exists only in the
# kernel's linecache (IPython registers each cell there, as /tmp/ipykernel_<pid>/<hash>.py or
# <ipython-input-N-...>). A forked worker inherits that cache; a spawned one has none, and cloudpickle, which
# sends it the function by value, renames every code object's file "<dynamic-code>". So the kernel reads the
# lines of the learner's code before the work is sent (``learner_lines``), keyed by what survives pickling
# (``_code_key``), and they travel with the work to whichever worker runs it.

_CELL_NAME = re.compile(r"^<ipython-input-\d+-|ipykernel_\d+[/\\][^/\\]+\.py$")
LINE_SHOWN = 100  # characters of the learner's line quoted in a message


def _code_key(code) -> tuple:
    """What identifies a code object in the kernel and, after cloudpickle, in a spawned worker."""
    return code.co_name, code.co_firstlineno, code.co_code


def learner_lines(f) -> dict:
    """{code key: (where, {line number: text})} for the code of ``f`` and what it uses: its nested code, its
    closure, the methods of a class, and the functions and classes of its own module (the notebook) that it
    names, followed transitively. ``where`` is "your cell" or a file's name. Reads code objects and
    namespaces only; runs none of the learner's code."""
    codes, seen, todo = [], set(), [f]
    home = f.__module__ if isinstance(f, (types.FunctionType, type)) else None
    while todo:
        obj = todo.pop()
        if isinstance(obj, (staticmethod, classmethod, types.MethodType)):
            obj = obj.__func__
        if not isinstance(obj, (types.FunctionType, type)) or id(obj) in seen or obj.__module__ != home:
            continue  # only plain functions and classes of the learner's module: reading them runs no code
        seen.add(id(obj))
        if isinstance(obj, type):
            todo += [v for v in vars(obj).values() if isinstance(v, (types.FunctionType, staticmethod, classmethod))]
            todo += list(obj.__bases__)
            continue
        nested = list(code_objects(obj.__code__))
        codes += nested
        todo += [c.cell_contents for c in (obj.__closure__ or ()) if is_filled(c)]
        names = set().union(*(c.co_names for c in nested))
        todo += [obj.__globals__[n] for n in names if n in obj.__globals__]
    excluded, found = _not_the_learners(), {}
    for code in codes:
        filename = code.co_filename
        lines = linecache.getlines(filename) if _is_learners(filename, excluded) else []
        if lines:  # a cell's from the kernel's cache, a module's from its file
            numbers = {n for _, _, n in code.co_lines() if n and n <= len(lines)}
            found[_code_key(code)] = (_where(filename), {n: lines[n - 1] for n in numbers})
    return found


def _where(filename) -> str:
    entry = linecache.cache.get(filename)
    cell = _CELL_NAME.search(filename) or filename.startswith("<") or (entry and len(entry) == 4 and entry[1] is None)
    return "your cell" if cell else os.path.basename(filename)


def code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def is_filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (reading an empty cell raises ValueError)
        return True
    except ValueError:
        return False


def _not_the_learners() -> tuple[str, ...]:
    """Folders and files whose frames are never the learner's: the standard library, installed packages, the
    grader, posenc and the course package (wherever they are installed from)."""
    places = {sysconfig.get_paths().get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    places |= {sys.prefix, sys.base_prefix, sys.exec_prefix}
    # the packages' folders (the grader's private copy of posenc runs from posenc's)
    for name in ("grading", "posenc_course", "posenc", "grading._posenc_reference"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            places.add(os.path.dirname(module.__file__))
    return tuple(os.path.normcase(os.path.abspath(p)) for p in places if p)


def _is_learners(filename, excluded) -> bool:
    """Can a frame of this file be the learner's? Not the grader's, a library's or Python's own."""
    if filename.startswith("<"):
        return not filename.startswith(("<frozen", "<__array_function__"))
    path = os.path.normcase(os.path.abspath(filename))
    return not any(path == place or path.startswith(place.rstrip(os.sep) + os.sep) for place in excluded)


def raised_at(exc, lines=None) -> str:
    """ ", at line 4 of your cell: <that line>" for the deepest frame of ``exc``'s traceback that runs the
    learner's code (not numpy's, torch's or the grader's), or "" when that line is not known. ``lines``: what
    ``learner_lines`` read in the kernel; without it (or for code it did not reach) linecache is asked."""
    try:
        lines, excluded, said, tb = lines or {}, _not_the_learners(), "", exc.__traceback__
        while tb is not None:
            code, number = tb.tb_frame.f_code, tb.tb_lineno
            if _code_key(code) in lines:
                where, text = lines[_code_key(code)]
                text = text.get(number, "")
            elif _is_learners(code.co_filename, excluded):
                where, text = _where(code.co_filename), linecache.getline(code.co_filename, number or 0)
            else:
                tb = tb.tb_next
                continue
            text = " ".join(text.split())
            if len(text) > LINE_SHOWN:
                text = text[: LINE_SHOWN - 3] + "..."
            said = f", at line {number} of {where}: {text}" if text else ""  # the deepest such frame wins
            tb = tb.tb_next
        return said
    except Exception:  # where it raised is a courtesy: never a reason for the grader to fail
        return ""
