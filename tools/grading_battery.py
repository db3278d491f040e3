"""The battery of tries: every way of answering a question of the bank that the grading tests and the
maintainer's report (tools/grading_report.py) put to ``check``.

The battery is built from each question's own declaration in the bank (``grading.bank.chNN``): its kind,
tolerance and models of mistakes, and its test data, ``known_mistakes``, ``alternatives`` and ``covers``
(``grading.kinds.Question``). Nothing here is about one question: what follows is generic.

Three categories, each try one ``check(qid, answer)`` call:

* ``correct``: right answers written the ways learners write them (list, array or tensor; int or float;
  float32 where the tolerance allows; "ac", "A, C", ["C", "A"]), and for coding questions the question's
  ``alternatives`` (loops, torch, closed forms) and variations of a right function;
* ``wrong``: the question's ``known_mistakes`` (each with words its feedback must contain), the bank's own
  models of mistakes (each made into a wrong answer whose feedback must give that model's hint), perturbations
  just outside the tolerance, every other set of letters, and, for coding questions, functions that are right
  except on the inputs the question promises to cover (``covers``);
* ``hostile``: None, strings, NaN, inf, huge arrays, objects whose ``__eq__``/``__array__``/``__len__`` raise,
  functions that raise, loop forever or return junk; grouped in classes (``Try.group``).

``judge`` says what is wrong with how the grader handled one try (None: nothing): a correct answer must be
accepted, a wrong one rejected with a "✗" line (and the mistake's own words), and every try must get exactly
one line of feedback, with no traceback and no warning from the grader's code. "The grader could not inspect your
answer (...)", the engine's last resort, is accepted only for objects whose own methods raise or lie about
their type (``Try.evil``), and only when it names their error.

Nothing is built at import: ``tries(qid)`` and ``all_tries()`` build the tries when asked.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import torch
from torch import nn

import grading
from grading import QUESTIONS
from grading.feedback import Model
from grading.kinds import Lazy

GRADER = Path(grading.__file__).resolve().parent  # the grader's own code: engine and bank
CATEGORIES = ("correct", "wrong", "hostile")


@dataclass
class Try:
    qid: str
    category: str  # "correct", "wrong" or "hostile"
    label: str
    make: Callable[[], object]  # builds the answer when the try runs (some are large)
    group: str = ""  # the class of input ("missing", "non-finite", "function that raises", ...)
    words: str = ""  # words the feedback must contain (the known mistakes)
    limit: float | None = None  # the grader's time_limit for this try (None: the question's own)
    evil: bool = False  # an object whose own methods raise or lie about its type

    @property
    def id(self) -> str:
        return f"{self.qid}-{self.category}-{self.label}"


# --------------------------------------------------------------------------
# The test's own idea of right and wrong (independent of the grader)
# --------------------------------------------------------------------------


def _allowed(want, tol):
    return tol["atol"] + tol["rtol"] * np.abs(want)


def _within(got, want, tol) -> bool:
    """Is ``got`` (array-like) the right answer ``want`` within the question's tolerance?"""
    got = np.asarray(got)
    if got.shape != np.shape(want) or got.dtype.kind not in "fiu":
        return False
    return bool(np.all(np.abs(got.astype(np.float64) - want) <= _allowed(want, tol)))


def _const(value):
    return lambda: value


# --------------------------------------------------------------------------
# Numeric questions
# --------------------------------------------------------------------------


def numeric_tries(qid, q):
    want, tol = float(q.reference()), q.tolerance()
    if q.integer:
        n = int(want)
        correct = {
            "int": n,
            "numpy int64": np.int64(n),
            "numpy int32": np.int32(n),
            "float": float(n),
            "numpy float64": np.float64(n),
            "numpy float32": np.float32(n),
            "0-d array": np.array(n),
            "1-element array": np.array([n]),
            "torch int64": torch.tensor(n),
            "torch float64": torch.tensor(float(n), dtype=torch.float64),
            "Fraction": Fraction(n),
        }
        wrong = [n + 1, n - 1, n + 0.5, 2 * n, n // 2, 0, -n, n * 10]
        is_wrong = lambda x: x != n  # noqa: E731
    else:
        r = tol["rtol"]
        correct = {
            "float": want,
            "numpy float64": np.float64(want),
            "numpy float32": np.float32(want),
            "0-d array": np.array(want),
            "1-element array": np.array([want]),
            "torch float64": torch.tensor(want, dtype=torch.float64),
            "torch float32": torch.tensor(want),
            "torch 1-element": torch.tensor([want]),
            "tensor with grad": torch.tensor(want, requires_grad=True),
            "tensor.item()": torch.tensor(want, dtype=torch.float64).item(),
            "Fraction": Fraction(want),
            "4 significant digits": float(f"{want:.4g}"),
            "inside the tolerance": want * (1 + r / 3),
        }
        wrong = [
            want * (1 + 3 * r),
            want * (1 - 3 * r),
            -want,
            2 * want,
            want / 2,
            10 * want,
            want / 10,
            want + 1,
            0.0,
            float(f"{want:.1g}"),
        ]
        is_wrong = lambda x: abs(x - want) > r * abs(want)  # noqa: E731
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]
    tries += [Try(qid, "wrong", f"{x!r}", _const(x)) for x in dict.fromkeys(wrong) if is_wrong(float(x))]
    return tries


# --------------------------------------------------------------------------
# Choice questions
# --------------------------------------------------------------------------


def choice_tries(qid, q):
    right = sorted(q.correct)
    if len(right) == 1:
        (a,) = right
        correct = [a, a.lower(), f" {a} ", [a], (a,), {a}, f"({a})", f"{a}.", f"{a.lower()})", np.str_(a)]
    else:
        correct = [
            "".join(right),
            "".join(right).lower(),
            "".join(reversed(right)),
            ", ".join(right),
            ", ".join(right[:-1]) + " and " + right[-1],
            " ".join(right).lower(),
            right,
            tuple(reversed(right)),
            set(right),
            frozenset(right),
            f"  {''.join(right)} ",
            " ".join(f"({x})" for x in right),
            ";".join(right),
            "/".join(right),
            "+".join(right),
            f"[{', '.join(right)}]",
            np.str_("".join(right)),
        ]
    tries = [Try(qid, "correct", repr(answer), _const(answer)) for answer in correct]
    for size in range(1, len(q.letters) + 1):
        for subset in itertools.combinations(q.letters, size):
            if set(subset) != q.correct:
                tries.append(Try(qid, "wrong", "".join(subset), _const("".join(subset))))
    return tries


# --------------------------------------------------------------------------
# Array questions
# --------------------------------------------------------------------------


def _matrix(values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asmatrix(values)


def _cast_within(want, tol, dtype):
    return _within(want.astype(dtype).astype(np.float64), want, tol)


def array_tries(qid, q):
    want, tol = np.asarray(q.reference(), dtype=np.float64), q.tolerance()
    allowed = _allowed(want, tol)
    correct = {
        "numpy float64": want,
        "list": want.tolist(),
        "torch float64": torch.from_numpy(want.copy()),
        "tensor with grad": torch.tensor(want, requires_grad=True),
        "object array": np.array(want.tolist(), dtype=object),
    }
    if want.ndim == 1:
        correct |= {
            "tuple": tuple(want.tolist()),
            "list of numpy scalars": list(want),
            "list of 0-d tensors": list(torch.from_numpy(want.copy())),
        }
    else:
        correct |= {
            "tuple of tuples": tuple(map(tuple, want.tolist())),
            "Fortran order": np.asfortranarray(want),
            "np.matrix": _matrix(want),
            "transposed view of the transpose": want.T.copy().T,
        }
    for name, dtype in [("float32", np.float32), ("float16", np.float16)]:
        if _cast_within(want, tol, dtype):
            correct[f"numpy {name}"] = want.astype(dtype)
            correct[f"torch {name}"] = torch.from_numpy(want.astype(dtype))
    decimals = next(d for d in range(1, 16) if np.all(np.abs(np.round(want, d) - want) <= 0.5 * allowed))
    correct[f"rounded to {decimals} decimals"] = np.round(want, decimals).tolist()
    signs = np.where(np.arange(want.size) % 2, 1, -1).reshape(want.shape)
    correct["inside the tolerance"] = want + 0.4 * allowed * signs
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]
    if want.ndim == 1:  # iterables of numbers are read; built when the try runs: they are used up
        tries += [
            Try(qid, "correct", "generator", lambda: (x for x in want.tolist())),
            Try(qid, "correct", "map object", lambda: map(float, want.tolist())),
        ]
    bf16 = torch.from_numpy(want).to(torch.bfloat16)
    if _within(bf16.double().numpy(), want, tol):
        tries.append(Try(qid, "correct", "torch bfloat16", _const(bf16)))

    wrong = {}  # the models of mistakes are tries of their own (mistake_tries), each with its hint
    for index in np.ndindex(want.shape):
        off = want.copy()
        off[index] += 3 * allowed[index]
        wrong[f"element {index} just outside"] = off
    wrong |= {
        "negated": -want,
        "reversed": want.ravel()[::-1].reshape(want.shape),
        "zeros": np.zeros_like(want),
        "doubled": 2 * want,
        "rounded to 1 decimal": np.round(want, 1),
        "truncated to integers": np.trunc(want),
        "one element missing": want.ravel()[:-1],
        "one element more": np.append(want, 0.0),
        "extra axis": want[None],
        "flattened": want.ravel(),
    }
    if want.ndim == 2:
        wrong["transposed"] = want.T
    tries += [
        Try(qid, "wrong", label, _const(answer)) for label, answer in wrong.items() if not _within(answer, want, tol)
    ]
    tries.append(Try(qid, "wrong", "complex, right real part", _const(want + 0.5j)))
    return tries


# --------------------------------------------------------------------------
# Function questions
# --------------------------------------------------------------------------


def _except_when(reference, claim):
    """Right except where ``claim`` holds: there every value is off by 0.5."""

    def answer(*args, **kwargs):
        out = reference(*args, **kwargs)
        return out + 0.5 if claim(*args, **kwargs) else out

    return answer


def _layer_except_when(reference, claim):
    """A layer right except where ``claim(tokens, d_model)`` holds."""

    class Layer(reference):
        def forward(self, tokens):
            out = super().forward(tokens)
            return out + 0.5 if claim(tokens, out.shape[-1]) else out

    return Layer


def _mapped(reference, change):
    """The reference with ``change`` applied to every result (a class: to what forward returns)."""
    if isinstance(reference, type):

        class Layer(reference):
            def forward(self, tokens):
                return change(super().forward(tokens))

        return Layer
    return lambda *args, **kwargs: change(reference(*args, **kwargs))


def _first_off(amount):
    def change(out):
        out = out.clone() if isinstance(out, torch.Tensor) else np.array(out, copy=True)
        out.reshape(-1)[0] += amount
        return out

    return change


def _next_after(out):
    out = np.array(out, copy=True)
    out.reshape(-1)[0] = np.nextafter(out.reshape(-1)[0], np.inf)
    return out


def calls_the_tested_posenc(qid, f) -> bool:
    """Does ``f`` call the posenc function a question that asks for the learner's own code tests?"""
    q = QUESTIONS[qid]
    calls = grading.kinds._posenc_calls
    return bool(getattr(q, "own_code", False) and calls(f) & calls(q.reference()))


def own_code_answer(qid):
    """A correct answer as a learner would write it: the reference, or where the question asks for the
    learner's own code, the first alternative that writes the formula itself."""
    q = QUESTIONS[qid]
    if not getattr(q, "own_code", False):
        return q.reference()
    return next(f for f in q.alternatives.values() if not calls_the_tested_posenc(qid, f))


def function_tries(qid, q):
    tol = q.tolerance()
    reference = own_code_answer(qid)  # what the other forms below are built from
    alternatives = q.alternatives
    layer = isinstance(q.reference(), type)  # the answer is a class (a torch layer), not a function
    correct = {
        "reference": q.reference(),
        **{label: f for label, f in alternatives.items() if not calls_the_tested_posenc(qid, f)},
    }
    if not layer:
        correct |= {
            "wrapped with *args": lambda *a, **k: reference(*a, **k),
            "Fortran-ordered copy": lambda *a, **k: np.asfortranarray(reference(*a, **k)),
            "right values in a numpy subclass whose ufuncs raise": lambda *a, **k: np.array(reference(*a, **k)).view(
                EvilUfunc
            ),
            "forks a child it never waits for": _forks_then(reference),
        }
    else:
        correct["subclass"] = type("Subclass", (reference,), {})
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]

    # right values, but the question asks for the formula and this calls posenc's
    wrong = {f"{label} (calls posenc)": f for label, f in alternatives.items() if calls_the_tested_posenc(qid, f)}
    for name, claim in q.covers.items():
        wrong[f"wrong only for {name}"] = (_layer_except_when if layer else _except_when)(reference, claim)
    if tol["atol"] or tol["rtol"]:
        step = 3 * (tol["atol"] + tol["rtol"]) + 2 * float(np.finfo(tol["dtype"] or np.float64).eps)
        wrong["first element just outside"] = _mapped(reference, _first_off(step))
    else:  # exact: the next representable number is already wrong
        wrong["first element one ulp off"] = _mapped(reference, _next_after)
    wrong |= {"negated": _mapped(reference, lambda out: -out), "zeros": _mapped(reference, lambda out: out * 0)}
    if not layer:  # array tricks: compared as plain arrays, they are what their data are
        wrong |= {
            "every value masked": _mapped(reference, lambda out: np.ma.masked_all(np.shape(out))),
            "zeros in a subclass whose comparisons lie": _mapped(
                reference, lambda out: np.zeros_like(np.asarray(out, dtype=np.float64)).view(LyingArray)
            ),
        }
    if tol["dtype"] is not None:
        other = torch.float64 if layer else (np.float32 if tol["dtype"] == np.float64 else np.float64)
        wrong["another dtype"] = _mapped(reference, lambda out: out.to(other) if layer else out.astype(other))
    elif 0 < tol["atol"] < 1e-7:
        wrong["float32 result"] = _mapped(reference, lambda out: out.astype(np.float32))
    tries += [Try(qid, "wrong", label, _const(answer)) for label, answer in wrong.items()]
    return tries


# --------------------------------------------------------------------------
# Hostile inputs, for every question, in classes
# --------------------------------------------------------------------------


class EvilArray:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("evil __array__")


class EvilEq:
    def __eq__(self, other):
        raise RuntimeError("evil __eq__")

    __hash__ = object.__hash__


class EvilLen:
    def __len__(self):
        raise RuntimeError("evil __len__")

    def __iter__(self):
        raise RuntimeError("evil __iter__")

    def __getitem__(self, i):
        raise RuntimeError("evil __getitem__")


class EvilFloat(float):
    def __float__(self):
        raise RuntimeError("evil __float__")


class EvilStr(str):
    def upper(self):
        raise RuntimeError("evil upper")


class Liar:
    """Claims to be a numpy array."""

    @property
    def __class__(self):
        return np.ndarray


class Everything:
    """Every attribute is itself, and calling it returns itself."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self


class EvilUfunc(np.ndarray):
    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError("evil ufunc")


class LyingArray(np.ndarray):
    """An ndarray subclass whose comparisons, arithmetic and any() say "nothing is wrong"."""

    def __sub__(self, other):
        return np.zeros(self.shape)

    __rsub__ = __sub__

    def __gt__(self, other):
        return np.zeros(self.shape, bool)

    def __eq__(self, other):
        return np.ones(self.shape, bool)

    def any(self, *args, **kwargs):
        return False

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.zeros(np.broadcast_shapes(*(np.shape(i) for i in inputs)))


class ExitArray:
    def __array__(self, *args, **kwargs):
        raise SystemExit(3)


def _forks_then(reference):
    """os.fork() without waiting on every call: the child runs on into the grader's loop."""

    def answer(*args, **kwargs):
        os.fork()
        return reference(*args, **kwargs)

    return answer


def _recursive_list():
    x = [1.0]
    x.append(x)
    return x


def _nan_like(reference):
    want = np.asarray(reference, dtype=np.float64) if not callable(reference) else np.zeros(3)
    return np.full(want.shape, np.nan)


# class of input -> {label: factory}; the first entry of each class is its representative
HOSTILE = {
    "missing": {"None": lambda: None, "empty string": lambda: "", "whitespace": lambda: "   ", "empty list": list},
    "wrong type": {
        "string": lambda: "hello",
        "bytes": lambda: b"AC",
        "bool": lambda: True,
        "numpy bool": lambda: np.bool_(False),
        "complex": lambda: 1j,
        "dict": lambda: {"answer": 1},
        "set of numbers": lambda: {1, 2},
        "object": object,
        "a type": lambda: int,
        "a module": lambda: np,
        "Decimal": lambda: __import__("decimal").Decimal("0.5"),
        "a function": lambda: lambda: 0.5,
        "generator": lambda: (i for i in range(3)),
        "iterator": lambda: iter([1.0, 2.0]),
        "range": lambda: range(6),
    },
    "non-finite": {
        "NaN": lambda: float("nan"),
        "inf": lambda: float("inf"),
        "-inf": lambda: float("-inf"),
        "huge int": lambda: 10**400,
        "NaN tensor": lambda: torch.full((2, 2), float("nan")),
    },
    "wrong shape or size": {
        "wrong shape": lambda: np.zeros((3, 7)),
        "empty array": lambda: np.zeros(0),
        "empty 2-D array": lambda: np.zeros((0, 6)),
        "huge array": lambda: np.zeros(2_000_000),
        "huge 2-D array": lambda: np.ones((1000, 1000)),
        "ragged list": lambda: [[1, 2], [3]],
        "deeply nested": lambda: [[[[1.0]]]],
        "recursive list": _recursive_list,
        "Ellipsis in a list": lambda: [...],
    },
    "raising or lying object": {  # evil: the fallback line naming their error is a right answer to these
        "object with raising __array__": EvilArray,
        "object with raising __eq__": EvilEq,
        "object with raising __len__": EvilLen,
        "object pretending to be an array": Liar,
        "object whose attributes are itself": Everything,
        "float subclass with raising __float__": lambda: EvilFloat(0.5),
        "str subclass with raising upper": lambda: EvilStr("A"),
        "numpy subclass with raising ufuncs": lambda: np.zeros(6).view(EvilUfunc),
        "object whose __array__ raises SystemExit": ExitArray,
    },
}


def _raises(exc):
    def answer(*args, **kwargs):
        raise exc

    return answer


def _recurse(*args, **kwargs):
    return _recurse(*args, **kwargs)


def _sleeps(*args, **kwargs):
    time.sleep(2.0)  # far past the limit of 0.2 s, even on a loaded machine
    return np.zeros(3)


def _endless(*args, **kwargs):
    while True:
        pass


def _returns(value_factory):
    return lambda *args, **kwargs: value_factory()


def _mutates_then_right(reference):
    def answer(*args, **kwargs):
        for a in args:
            if isinstance(a, np.ndarray) and a.size:
                a.reshape(-1)[0] += 1.0
            if isinstance(a, torch.Tensor) and a.numel():
                a.reshape(-1)[0] = 0
        return reference(*args, **kwargs)

    return answer


def _junk_layer(forward=None, init=None):
    body = {}
    if forward:
        body["forward"] = forward
    if init:
        body["__init__"] = init
    return type("JunkLayer", (nn.Module,), body)


def _nan_forward(self, tokens):
    return torch.full((*tokens.shape, 1), float("nan"))


def _bad_init(self, *args):
    raise RuntimeError("boom in __init__")


def _hostile_layers(reference):
    """For a question whose answer is a class (a torch layer): the hostile answers are classes (and one instance)."""
    return {
        "function that raises": {
            "forward raises": _junk_layer(forward=lambda self, t: 1 / 0),
            "__init__ raises": _junk_layer(init=_bad_init),
        },
        "function returning junk": {
            "forward returns None": _junk_layer(forward=lambda self, t: None),
            "forward returns a string": _junk_layer(forward=lambda self, t: "hello"),
            "forward returns an evil object": _junk_layer(forward=lambda self, t: EvilArray()),
            "forward returns NaN": _junk_layer(forward=_nan_forward),
        },
        "function of the wrong form": {
            "not a module": type("Plain", (), {"__init__": lambda self, v, d: None}),
            "module without forward": _junk_layer(),
            "an instance, not the class": reference(10, 4),
            "wrong signature": type("NoArgs", (nn.Module,), {"forward": lambda self, t: t}),
        },
    }


def _hostile_functions(reference):
    def like_reference(change):
        return lambda *a, **k: change(reference(*a, **k))

    return {
        "function that raises": {
            "raises RuntimeError": _raises(RuntimeError("boom")),
            "raises ValueError": _raises(ValueError("no")),
            "raises ZeroDivisionError": lambda *a, **k: 1 / 0,
            "raises MemoryError": _raises(MemoryError()),
            "raises SystemExit": _raises(SystemExit(3)),
            "raises StopIteration": _raises(StopIteration()),
            "endless recursion": _recurse,
        },
        "function returning junk": {
            "returns None": _returns(lambda: None),
            "returns a string": _returns(lambda: "hello"),
            "returns a list": _returns(lambda: [1.0, 2.0]),
            "returns a dict": _returns(dict),
            "returns an evil object": _returns(EvilArray),
            "returns an object pretending to be an array": _returns(Liar),
            "returns itself": lambda *a, **k: _recurse,
            "returns a generator": _returns(lambda: (i for i in range(3))),
            "returns a huge array": _returns(lambda: np.zeros(2_000_000)),
            "returns an empty array": _returns(lambda: np.zeros(0)),
            "returns the wrong shape": _returns(lambda: np.zeros((3, 7))),
            "returns a tensor with grad": like_reference(
                lambda out: torch.tensor(np.asarray(out, dtype=np.float64), requires_grad=True)
            ),
            "returns NaN of the right shape": like_reference(lambda out: np.full_like(np.asarray(out), np.nan)),
            "returns inf of the right shape": like_reference(lambda out: np.full_like(np.asarray(out), np.inf)),
            "returns complex, right real part": like_reference(lambda out: np.asarray(out) + 0j),
            "returns a masked array, every value masked": like_reference(lambda out: np.ma.masked_all(np.shape(out))),
            "returns an object array": like_reference(lambda out: np.asarray(out).astype(object)),
        },
        "function of the wrong form": {
            "mutates its input": _mutates_then_right(reference),
            "wrong arity": lambda: 1.0,
            "a builtin": len,
            "a numpy ufunc": np.sin,
        },
    }


SLOW_GROUP = "function over the time limit"  # each try waits for the limit (0.2 s) and the worker to be killed
HOSTILE_GROUPS = [
    *HOSTILE,
    "choice nonsense",
    "function that raises",
    "function returning junk",
    "function of the wrong form",
    SLOW_GROUP,
]
EVIL_WORDS = ("evil", "pretending", "raising")
FUNCTION_WORDS = {  # what the feedback to these hostile functions must say
    "raises RuntimeError": "raised RuntimeError: boom",
    "raises SystemExit": "raised SystemExit",
    "returns a string": "the string 'hello'",
    "returns the wrong shape": "expected shape",
    "returns NaN of the right shape": "NaN",
}


def hostile_tries(qid, q):
    groups = {name: dict(members) for name, members in HOSTILE.items()}
    layer = q.kind == "function" and isinstance(q.reference(), type)
    if q.kind == "function":
        reference = q.reference()
        groups |= _hostile_layers(reference) if layer else _hostile_functions(reference)
        if not any(isinstance(a, (np.ndarray, torch.Tensor)) for a in q.cases(np.random.default_rng(0))[0].args):
            groups["function of the wrong form"].pop("mutates its input", None)  # nothing to mutate: it is right
    elif q.kind == "choice":
        groups["wrong type"] |= {"list of non-strings": _const([1, 2])}
        groups["choice nonsense"] = {
            "a letter that is no option": _const("Z"),
            "the right letters in a sentence": _const(f"I think {q.reference()}"),
        }
    else:
        want = q.reference()
        groups["non-finite"] |= {
            "NaN of the right shape": lambda: _nan_like(want),
            "inf of the right shape": lambda: _nan_like(want) * 0 + np.inf,
        }
        groups["wrong type"] |= {"the right number as a string": _const(str(np.asarray(want).tolist()))}
    tries = []
    for group, members in groups.items():
        for label, make in members.items():
            evil = group == "raising or lying object" or (q.kind == "function" and any(w in label for w in EVIL_WORDS))
            if group.startswith("function"):  # the hostile answer is the function itself, not its result
                make = _const(make)
            words = FUNCTION_WORDS.get(label, "") if group.startswith("function") and not layer else ""
            tries.append(Try(qid, "hostile", label, make, group=group, words=words, evil=evil))
    if q.kind == "function":
        tries += [
            Try(qid, "hostile", label, _const(f), group=SLOW_GROUP, words="too slow", limit=0.2)
            for label, f in [("sleeps past the limit", _sleeps), ("endless loop", _endless)]
        ]
    return tries


# --------------------------------------------------------------------------
# All tries of a question, and how one try went
# --------------------------------------------------------------------------


def _making(mistake, reference, dtype):
    """A learner's function with the mistake that ``mistake`` (a ``Model``) models: what the model returns, in the
    question's dtype, and the right answer where the model does not apply (it returns None or raises)."""

    def answer(*args, **kwargs):
        try:
            made = mistake.make(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception:  # the mistake cannot be made with these inputs
            made = None
        if made is None:
            return reference(*args, **kwargs)
        made = np.asarray(made)
        return made if dtype is None else made.astype(dtype)

    return answer


def mistake_tries(qid, q) -> list[Try]:
    """Every model of a mistake the question declares (its ``mistakes``) as a wrong answer that makes that mistake,
    whose feedback must give that model's hint: the value itself (numeric and array questions), or a function
    returning what the model returns (function questions; a hint given by a predicate on the output, or a layer
    to write, has no answer to build from it)."""
    tries = []
    for n, (mistake, hint) in enumerate(getattr(q, "mistakes", ())):
        if q.kind == "function":
            if not isinstance(mistake, Model) or isinstance(q.reference(), type):
                continue
            make = _const(_making(mistake, own_code_answer(qid), q.dtype))
        elif q.kind == "numeric":
            value, want = float(mistake()), float(q.reference())
            if value == want if q.integer else abs(value - want) <= q.rtol * abs(want):
                continue  # within the tolerance: not a wrong answer, and the grader drops its hint
            make = _const(value)
        else:
            value = np.asarray(mistake(), dtype=np.float64)
            if _within(value, q.reference(), q.tolerance()):
                continue
            make = _const(value)
        tries.append(Try(qid, "wrong", f"model of mistake {n}", make, group="mistake model", words=hint))
    return tries


def known_mistakes(qid):
    """The realistic wrong answers, each with the words its feedback must contain."""
    return [
        Try(
            qid,
            "wrong",
            f"known mistake {n} ({words})",
            answer.make if isinstance(answer, Lazy) else _const(answer),
            group="known mistake",
            words=words,
        )
        for n, (answer, words) in enumerate(QUESTIONS[qid].known_mistakes)
    ]


BUILDERS = {"numeric": numeric_tries, "choice": choice_tries, "array": array_tries, "function": function_tries}


def tries(qid) -> list[Try]:
    """Every try of question ``qid``: correct forms, wrong answers (the known mistakes among them), hostile inputs."""
    q = QUESTIONS[qid]
    return BUILDERS[q.kind](qid, q) + mistake_tries(qid, q) + known_mistakes(qid) + hostile_tries(qid, q)


def all_tries() -> list[Try]:
    return [t for qid in QUESTIONS for t in tries(qid)]


@dataclass
class Result:
    problem: str | None  # what is wrong with how the grader handled the try; None: nothing
    fallback: bool = False  # an evil input got the engine's last resort ("could not check ...") naming its error
    seconds: float = 0.0


def judge(t: Try, verdict, out: str, raised=None, warned=()) -> Result:
    """How the grader handled ``t``: ``verdict`` and printed ``out`` of ``check``, the exception it let out
    (``raised``) and the warnings raised by the grader's own code (``warned``)."""
    if raised is not None:
        return Result(f"check raised {type(raised).__name__}: {raised}")
    lines = out.splitlines()
    if QUESTIONS[t.qid].kind == "choice" and lines[1:] == QUESTIONS[t.qid].explained().splitlines():
        lines = lines[:1]  # a solved choice question explains every option, one per line
    if len(lines) != 1 or not lines[0].startswith(f"{t.qid} "):
        return Result(f"expected one line of feedback, got {len(lines)}: {out[:300]!r}")
    line = lines[0]
    last_resort = "could not check" in line or "could not inspect" in line
    fallback = last_resort and t.evil and ("evil" in line or "Liar" in line)
    if not fallback and (last_resort or "Traceback" in line or "_TimeUp" in line):
        return Result(f"grader-internal error: {line}")
    if warned:
        w = warned[0]
        return Result(f"the grader warned: {w.category.__name__}: {w.message} ({w.filename}:{w.lineno})")
    if t.category == "correct":
        ok = bool(verdict) and line.startswith(f"{t.qid} ✓ correct")
        return Result(None if ok else f"correct answer rejected: {line}", fallback)
    if bool(verdict) or "✓" in line:
        return Result(f"{t.category} input accepted: {line}", fallback)
    if t.category == "wrong" and "✗" not in line:
        return Result(f"wrong answer not marked wrong: {line}", fallback)
    if t.words and t.words not in line:
        return Result(f"feedback lacks {t.words!r}: {line}", fallback)
    if t.group == "mistake model" and not line.endswith(t.words):  # the model's hint, last, and no other
        return Result(f"feedback does not end with the hint {t.words!r}: {line}", fallback)
    if "✗" not in line and "not answered yet" not in line:
        return Result(f"no verdict in: {line}", fallback)
    return Result(None, fallback)


_GRADERS: dict = {}  # time limit -> the grader of the tries with it (one runner each: spawned workers are reused)


def run(t: Try) -> Result:
    """Put ``t`` to ``grading.check`` (looked up when called) with a fresh record of progress and judge it.

    Progress is kept in memory only while it runs: the tries must not touch a learner's progress file."""
    if t.limit not in _GRADERS:
        _GRADERS[t.limit] = grading.Grader(None, time_limit=t.limit)
    with grading.use_grader(_GRADERS[t.limit]):
        return _run(t)


def _run(t: Try) -> Result:
    verdict = raised = None
    out = io.StringIO()
    start = time.perf_counter()
    try:
        grading.reset()
        answer = t.make()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                verdict = grading.check(t.qid, answer)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # nothing may get out of check
                raised = exc
    finally:
        grading.reset()
    ours = [w for w in caught if Path(w.filename).resolve().is_relative_to(GRADER)]
    result = judge(t, verdict, out.getvalue(), raised, ours)
    result.seconds = time.perf_counter() - start
    return result
