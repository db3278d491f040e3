"""The grader of the practice notebooks: a question bank and ``check``.

In a notebook::

    from grading import check, summary
    answer = posenc.frequencies(512)[128]
    check("02.3", answer)      # prints one line of feedback; True if correct
    summary("02")              # "Chapter 02: 6 of 7 correct." and what is left

Four kinds of question:

* ``Numeric``   one number, within a relative tolerance; says too high / too
                low, off by a factor of 2, or names a known mistake.
* ``Choice``    one letter or a set of letters ("B", "ac", ["A", "C"]).
* ``Array``     an array of numbers; checks shape, then names the first wrong
                element.
* ``Function``  a function (or a class) the learner writes. It is called on
                many seeded random inputs in a worker thread with a time limit
                and compared with ``posenc``; exceptions, wrong types, wrong
                shapes, NaN and changed inputs each get their own message.

Expected answers are computed from ``posenc`` when a question is checked, never
typed in. An answer left as ``...`` (the placeholder of the exercise
notebooks) is "not answered yet". ``check`` never lets an exception of its own
reach the learner: whatever it is given, it prints a message.
"""

from __future__ import annotations

import copy
import ctypes
import inspect
import math
import numbers
import re
import threading
import time
import zlib
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

import posenc

__all__ = ["check", "summary", "assert_all_correct", "progress", "reset", "QUESTIONS"]

CORRECT, WRONG, UNANSWERED = "correct", "wrong", "unanswered"
TIME_LIMIT = 10.0  # seconds a learner's function may take over all its test inputs

QUESTIONS: dict[str, "Question"] = {}
_status: dict[str, str] = {}  # question id -> latest status


# --------------------------------------------------------------------------
# The public functions
# --------------------------------------------------------------------------

class Verdict:
    """What ``check`` returns: true when the answer is correct.

    Behaves like ``True``/``False`` in ``if`` and ``==``; in Jupyter it shows
    nothing, so a question cell ends with the feedback line alone.
    """

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self):
        return self.ok

    def __eq__(self, other):
        return self.ok == other

    def __hash__(self):
        return hash(self.ok)

    def __repr__(self):
        return repr(self.ok)

    def _ipython_display_(self):
        pass


def check(qid, answer) -> Verdict:
    """Grade ``answer`` to question ``qid``, print feedback, record progress."""
    question = QUESTIONS.get(qid) if isinstance(qid, str) else None
    if question is None:
        print(f"{qid!r} is not a question id; ids look like '02.3' ({len(QUESTIONS)} questions known).")
        return Verdict(False)
    try:
        if answer is Ellipsis:
            status, message = UNANSWERED, "replace the ... with your answer, then run this cell again."
        else:
            status, message = question.judge(answer)
    except Exception as exc:  # a bug of ours or an answer too strange to inspect
        status = WRONG
        message = f"the grader could not check this answer ({type(exc).__name__}: {_short(exc)})."
    _status[qid] = status
    mark = {CORRECT: "✓ correct", WRONG: "✗", UNANSWERED: "· not answered yet:"}[status]
    print(f"{qid} {mark}" + ("" if status == CORRECT and not message else f" {message}"))
    return Verdict(status == CORRECT)


def progress(chapter) -> dict[str, str]:
    """Status of every question of ``chapter``: correct, wrong, unanswered or unchecked."""
    chapter = _chapter(chapter)
    return {q: _status.get(q, "unchecked") for q in QUESTIONS if q.split(".")[0] == chapter}


def summary(chapter) -> None:
    """Print "n of m correct" for ``chapter`` and list what is not correct yet."""
    states = progress(chapter)
    if not states:
        print(f"No questions for chapter {chapter!r}.")
        return
    done = [q for q, s in states.items() if s == CORRECT]
    print(f"Chapter {_chapter(chapter)}: {len(done)} of {len(states)} correct.")
    for status, label in [(WRONG, "wrong"), (UNANSWERED, "not answered yet"),
                          ("unchecked", "not checked yet (run their cells)")]:
        ids = [q for q, s in states.items() if s == status]
        if ids:
            print(f"  {label}: {', '.join(ids)}")
    if len(done) == len(states):
        print("  All answers are correct.")


def assert_all_correct(chapter) -> None:
    """Raise AssertionError naming every question of ``chapter`` not answered correctly."""
    states = progress(chapter)
    bad = {q: s for q, s in states.items() if s != CORRECT}
    if not states or bad:
        listing = ", ".join(f"{q} ({s})" for q, s in bad.items()) or "no questions"
        raise AssertionError(f"chapter {chapter}: not all answers are correct: {listing}")


def reset() -> None:
    """Forget all recorded results (used by the tests)."""
    _status.clear()


def _chapter(chapter) -> str:
    return f"{chapter:02d}" if isinstance(chapter, int) else str(chapter)


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

def _short(exc, limit=160) -> str:
    text = str(exc).strip().splitlines()
    text = text[0] if text else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(x) -> str:
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


def _index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _close(a, b, rtol, atol=0.0) -> bool:
    return abs(a - b) <= atol + rtol * abs(b)


def _seed(qid: str) -> int:
    return zlib.crc32(qid.encode())


# --------------------------------------------------------------------------
# Question kinds
# --------------------------------------------------------------------------

class Question:
    kind = "?"

    def __init__(self, qid, title):
        self.qid, self.title = qid, title

    def judge(self, answer) -> tuple[str, str]:
        raise NotImplementedError

    def reference(self):
        """A correct answer (the tests check that it passes)."""
        raise NotImplementedError


class Numeric(Question):
    """One real number. ``mistakes``: (function giving a wrong value, hint)."""

    kind = "numeric"

    def __init__(self, qid, title, expected, *, rtol=1e-3, integer=False, mistakes=()):
        super().__init__(qid, title)
        self.expected, self.rtol, self.integer, self.mistakes = expected, rtol, integer, mistakes

    def reference(self):
        return self.expected()

    def judge(self, answer):
        x, problem = _as_number(answer)
        if problem:
            return WRONG, problem
        want = float(self.expected())
        if self.integer:
            if x != round(x):
                return WRONG, f"the answer is a whole number; you gave {x:g}."
            if x == want:
                return CORRECT, ""
        elif _close(x, want, self.rtol):
            return CORRECT, ""
        for value, hint in self.mistakes:
            if _close(x, float(value()), max(self.rtol, 1e-9)):
                return WRONG, hint
        return WRONG, _how_far(x, want)


def _as_number(answer):
    """(float, None) or (None, message)."""
    if isinstance(answer, torch.Tensor):
        if answer.numel() != 1:
            return None, f"expected one number, got {_describe(answer)}."
        answer = answer.item()
    if isinstance(answer, np.ndarray):
        if answer.size != 1:
            return None, f"expected one number, got {_describe(answer)}."
        answer = answer.reshape(()).item()
    if isinstance(answer, (bool, np.bool_)):
        return None, f"expected a number, got the bool {answer}."
    if isinstance(answer, str):
        return None, f"expected a number, got {_describe(answer)}: write the number without quotes."
    if isinstance(answer, (list, tuple)):
        return None, f"expected one number, got a {type(answer).__name__} of {len(answer)} items."
    if isinstance(answer, numbers.Complex) and not isinstance(answer, numbers.Real):
        return None, "expected a real number, got a complex one."
    if not isinstance(answer, numbers.Real):
        return None, f"expected a number, got {_describe(answer)}."
    x = float(answer)
    if math.isnan(x):
        return None, "your answer is NaN (not a number): check the computation that produced it."
    if math.isinf(x):
        return None, "your answer is infinite: check for a division by zero or an overflow."
    return x, None


def _how_far(x, want) -> str:
    if want != 0 and x != 0 and (x > 0) != (want > 0):
        return "the sign is wrong."
    if want == 0 or x == 0:
        return "too high." if x > want else "too low."
    ratio = x / want
    if _close(ratio, 2.0, 0.01) or _close(ratio, 0.5, 0.01):
        return f"off by a factor of 2 (too {'high' if ratio > 1 else 'low'})."
    if 0 < abs(want) != 1 and _close(math.log(abs(x)) / math.log(abs(want)), 2.0, 0.01):
        return "that is the square of the right value: is the exponent doubled (2·(2i)/d instead of 2i/d)?"
    size = f"about {ratio:.3g} times the right value" if ratio > 1.5 or ratio < 0.67 else f"by {abs(ratio - 1):.1%}"
    return f"too {'high' if x > want else 'low'} ({size})."


class Choice(Question):
    """Multiple choice. ``correct`` is a string of letters; ``hints`` explain wrong letters."""

    kind = "choice"

    def __init__(self, qid, title, letters, correct, hints=None):
        super().__init__(qid, title)
        self.letters, self.correct, self.hints = letters.upper(), set(correct.upper()), hints or {}

    def reference(self):
        return "".join(sorted(self.correct))

    def judge(self, answer):
        chosen, problem = self._letters(answer)
        if problem:
            return WRONG, problem
        options = ", ".join(self.letters)
        unknown = sorted(chosen - set(self.letters))
        if unknown:
            return WRONG, f"unknown option {', '.join(unknown)}: the options are {options}."
        if len(self.correct) == 1 and len(chosen) > 1:
            return WRONG, "choose exactly one letter."
        wrong = sorted(chosen - self.correct)
        if wrong:
            names = ", ".join(wrong[:-1]) + " and " + wrong[-1] if len(wrong) > 1 else wrong[0]
            hint = self.hints.get(wrong[0], "read that option again.")
            return WRONG, f"{names} {'is' if len(wrong) == 1 else 'are'} not right. {wrong[0]}: {hint}"
        missing = len(self.correct - chosen)
        if missing:
            return WRONG, f"right so far, but {missing} more option{'s' if missing > 1 else ''} {'apply' if missing > 1 else 'applies'}."
        return CORRECT, ""

    def _letters(self, answer):
        example = "'B'" if len(self.correct) == 1 else "'AC'"
        if isinstance(answer, (list, tuple, set, frozenset)) and all(isinstance(a, str) for a in answer):
            answer = " ".join(answer)
        if not isinstance(answer, str):
            return None, f"give the letter(s) as a string, e.g. {example}; got {_describe(answer)}."
        tokens = [t for t in re.split(r"[\s,;/+&()\[\].:]+", answer.upper()) if t and t not in ("AND", "OR")]
        if not tokens:
            return None, f"no letter given: write e.g. {example}."
        chosen = set()
        for token in tokens:
            if not token.isalpha():
                return None, f"{token!r} is not an option letter; write e.g. {example}."
            chosen |= set(token)
        return chosen, None


class Array(Question):
    """An array of numbers, compared element-wise with ``expected()``."""

    kind = "array"

    def __init__(self, qid, title, expected, *, atol=1e-6, rtol=0.0, mistakes=()):
        super().__init__(qid, title)
        self.expected, self.atol, self.rtol, self.mistakes = expected, atol, rtol, mistakes

    def reference(self):
        return self.expected()

    def judge(self, answer):
        want = np.asarray(self.expected(), dtype=np.float64)
        got, problem = _as_array(answer)
        if problem:
            return WRONG, problem
        if got.shape != want.shape:
            return WRONG, f"expected an array of shape {want.shape}, got shape {got.shape}."
        if np.isnan(got).any():
            return WRONG, f"element {_index(np.argwhere(np.isnan(got))[0])} is NaN."
        bad = np.abs(got - want) > self.atol + self.rtol * np.abs(want)
        if not bad.any():
            return CORRECT, ""
        for value, hint in self.mistakes:
            other = np.asarray(value(), dtype=np.float64)
            if other.shape == got.shape and np.allclose(got, other, rtol=self.rtol, atol=self.atol):
                return WRONG, hint
        where = np.argwhere(bad)[0]
        high = got[tuple(where)] > want[tuple(where)]
        close = " Close: give more decimals (compute the values instead of typing them)." \
            if np.abs(got - want).max() <= 1e-2 * max(1.0, np.abs(want).max()) else ""
        return WRONG, (f"{int(bad.sum())} of {bad.size} elements are wrong; the first is element "
                       f"{_index(where)} (too {'high' if high else 'low'}).{close}")


def _as_array(answer):
    """(float64 array, None) or (None, message)."""
    if answer is None or isinstance(answer, (str, bytes, bool, dict)) or callable(answer):
        return None, f"expected an array of numbers, got {_describe(answer)}."
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().cpu().numpy()
    try:
        arr = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return None, f"could not read your answer as an array of numbers ({_short(exc)})."
    return arr, None


@dataclass
class Case:
    """One set of test inputs for a Function question."""

    args: tuple
    label: str           # how the message names these inputs
    raises: type | None = None  # the call must raise this exception type
    note: str = ""       # added to the message if the learner's code raises here


class Function(Question):
    """A function (or class) written by the learner, run on many random inputs.

    ``cases(rng)`` lists the inputs; ``call(f, *args)`` runs the learner's
    code (default ``f(*args)``); ``verify(out, case)`` returns a message or
    None; ``mistakes`` are (predicate(out, case), hint) pairs consulted when
    verify fails, to name a known bug.
    """

    kind = "function"

    def __init__(self, qid, title, reference, cases, verify, *, call=None, mistakes=()):
        super().__init__(qid, title)
        self._reference, self.cases, self.verify, self.mistakes = reference, cases, verify, mistakes
        self.call = call or (lambda f, *args: f(*args))

    def reference(self):
        return self._reference

    def judge(self, f):
        if isinstance(f, type) and issubclass(f, nn.Module) and f.forward is nn.Module.forward:
            return UNANSWERED, f"the class {f.__name__} has no forward method yet."
        if not callable(f):
            return WRONG, f"expected a function, got {_describe(f)}."
        cases = self.cases(np.random.default_rng(_seed(self.qid)))
        runs, timed_out = _run(lambda args: self.call(f, *args), cases, TIME_LIMIT)
        for n, (case, out, exc, given) in enumerate(runs):
            where = f"for {case.label}"
            if exc is not None and not (case.raises and isinstance(exc, case.raises)):
                note = f" ({case.note})" if case.note else ""
                return WRONG, f"your code raised {type(exc).__name__}: {_short(exc)} {where}{note}."
            if not _same(given, case.args):
                return WRONG, (f"your code changed its input {where}. Do not modify the arguments "
                               "(e.g. write x + pe, not x += pe).")
            if exc is not None:
                continue
            if out is None:
                if n == 0:
                    return UNANSWERED, "your function returns None (no code yet, or a missing return)."
                return WRONG, f"your function returned None {where}."
            if case.raises:
                return WRONG, (f"{where} your code should raise {case.raises.__name__} ({case.note}), "
                               f"but it returned {_describe(out)}.")
            problem = self.verify(out, case)
            if problem:
                hints = [hint for test, hint in self.mistakes if _safely(test, out, case)]
                return WRONG, f"{where}: {problem}" + (f" Hint: {hints[0]}" if hints else "")
        if timed_out:
            return WRONG, (f"too slow: only {len(runs)} of {len(cases)} test inputs finished within "
                           f"{TIME_LIMIT:g} s (an endless loop, or a loop that could be vectorised?).")
        return CORRECT, f"on all {len(cases)} random test inputs."


def _run(call, cases, limit):
    """Run the learner's code on each case in a daemon thread; stop at the first exception.

    At the time limit the worker is told to stop: it starts no further case, and
    a pure-Python loop still running gets an exception injected so that it does
    not keep burning CPU (code blocked inside C, such as sleep, ends on its own).
    """
    runs, deadline = [], time.monotonic() + limit

    def work():
        try:
            for case in cases:
                if time.monotonic() > deadline:
                    return
                given = copy.deepcopy(case.args)
                try:
                    out = call(given)
                except BaseException as exc:  # noqa: BLE001 - SystemExit and friends too
                    runs.append((case, None, exc, given))
                    return
                runs.append((case, out, None, given))
        except _TimeUp:  # arrived between two calls: nothing to report
            pass

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(limit)
    done = list(runs)
    if worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(_TimeUp))
        return done, True
    return done, False


class _TimeUp(Exception):
    """Injected into a learner's code that ran past the time limit."""


def _same(a, b) -> bool:
    """Is ``a`` (what the learner got) still equal to ``b`` (a pristine copy)?"""
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(b, (tuple, list)):
        return isinstance(a, (tuple, list)) and len(a) == len(b) and all(map(_same, a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def _safely(test, *args) -> bool:
    try:
        return bool(test(*args))
    except Exception:
        return False


def _verify_array(out, want, *, dtype=None, atol=1e-8):
    """Message for the first problem of ``out`` against ``want`` (numpy), or None."""
    if isinstance(out, torch.Tensor):
        return "your function returned a torch tensor; return a numpy array."
    if not isinstance(out, np.ndarray):
        return f"your function returned {_describe(out)}; return a numpy array."
    if out.shape != want.shape:
        return f"expected shape {want.shape}, got {out.shape}."
    if out.dtype.kind not in "fiu":
        return f"expected an array of real numbers, got dtype {out.dtype}."
    if dtype is not None and out.dtype != dtype:
        return f"expected dtype {np.dtype(dtype)}, got {out.dtype}."
    if np.isnan(out).any():
        return f"element {_index(np.argwhere(np.isnan(out))[0])} is NaN."
    err = np.abs(out.astype(np.float64) - want)
    bad = err > atol
    if not bad.any():
        return None
    i = tuple(np.argwhere(bad)[0])
    msg = f"element {_index(i)} is {out[i]:.8g}, expected {want[i]:.8g}"
    if dtype is None and err.max() < 1e-5 and atol < 1e-6:
        msg += " (your values agree only to float32 precision: compute in float64)"
    return msg + "."


def _reference_verifier(reference, **options):
    return lambda out, case: _verify_array(out, np.asarray(reference(*case.args), dtype=np.float64), **options)


def _like(model, atol=1e-6):
    """A mistake predicate: the learner's output equals what the buggy ``model`` gives."""
    def test(out, case):
        other = np.asarray(model(*case.args), dtype=np.float64)
        return isinstance(out, np.ndarray) and out.shape == other.shape and np.allclose(out, other, atol=atol)
    return test


# --------------------------------------------------------------------------
# Models of real mistakes (used to name the bug in feedback)
# --------------------------------------------------------------------------

def _table(positions, d, omega=None, *, layout="interleaved", swap=False):
    """float64 sinusoidal table built from arbitrary frequencies ``omega``."""
    omega = posenc.frequencies(d) if omega is None else np.asarray(omega)
    angle = np.outer(np.asarray(positions, dtype=np.float64), omega)
    s, c = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    out = np.empty((angle.shape[0], 2 * angle.shape[1]))
    out[:, 0::2], out[:, 1::2] = s, c
    out = out[:, :d]
    return out[:, posenc.layout_permutation(d)] if layout == "concatenated" else out


def _doubled_omega(d, base=10000.0):
    """The loop ``for i in range(0, d, 2)`` with ``2 * i / d``: i is already 2k."""
    return base ** (-2.0 * np.arange(0, d, 2) / d)


def _float32_angles(positions, d):
    """The common PyTorch recipe: positions and angles in float32."""
    pos = torch.as_tensor(np.asarray(positions), dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    out = torch.zeros(pos.shape[0], d)
    out[:, 0::2] = torch.sin(pos * div)
    out[:, 1::2] = torch.cos(pos * div)[:, : d // 2]
    return out.double().numpy()


def _error_grows_with_position(out, case):
    """True when every row's error fits within float32 rounding of the angle p·ω (about p·6e-8)."""
    positions, d, layout = np.asarray(case.args[0]), case.args[1], (case.args[2:] or ["interleaved"])[0]
    if not isinstance(out, np.ndarray):
        return False
    err = np.abs(out.astype(np.float64) - posenc.sinusoidal(positions, d, layout=layout)).max(axis=1)
    return err.max() > 2e-7 and bool(np.all(err <= 1e-5 + 1e-6 * np.abs(positions)))


FLOAT32_HINT = ("the error grows with the position, the mark of angles p·ω computed in float32 "
                "(about p·6e-8 radians off). Form the angles in float64 and convert only the result.")
DOUBLED_HINT = ("your exponent is doubled: i counts (sin, cos) pairs, so ω_i = base^(-2i/d). "
                "If you loop over channels 0, 2, 4, ..., that channel index already is 2i.")
CONCAT_HINT = "you used the concatenated layout (all sines, then all cosines); this one interleaves sin, cos, sin, cos, ..."
SWAP_HINT = "sine and cosine are swapped: channel 2i holds the sine, channel 2i+1 the cosine."


def _pe_cases(rng, n_cases=24, max_pos=10**6, max_n=120, layouts=False):
    """Position arrays (some contiguous, some scattered and large) and d_model, odd and even;
    with ``layouts``, every fourth case asks for the concatenated layout."""
    cases = []
    widths = [8, 1, 2, 3, 5, 16, 7, 64, 33, 128, 129, 4]
    for k in range(n_cases):
        d = widths[k] if k < len(widths) else int(rng.integers(1, 130))
        n = int(rng.integers(1, max_n))
        if k % 3 == 0:
            positions = np.arange(n)
        else:
            positions = np.sort(rng.integers(0, max_pos, size=n))
            positions[0] = int(rng.integers(0, 50))
        odd = f"d_model = {d} is odd: there is one more sine column than cosine columns" if d % 2 else ""
        label = f"{n} positions up to {positions.max():,} and d_model = {d}"
        if layouts:
            layout = "concatenated" if k % 4 == 2 else "interleaved"
            cases.append(Case((positions, d, layout), f"{label}, layout = {layout!r}", note=odd))
        else:
            cases.append(Case((positions, d), label, note=odd))
    return cases


# --------------------------------------------------------------------------
# The question bank
# --------------------------------------------------------------------------

def _add(question):
    QUESTIONS[question.qid] = question


def _pe(p, d, **kw):
    return posenc.sinusoidal([p], d, **kw)[0]


# ---- Chapter 01: the order problem ----------------------------------------

_add(Choice("01.1", "why swapping words changes nothing", "ABCD", "AC", {
    "B": "the softmax normalises each row of scores; it does not sort anything.",
    "D": "Attn(PX) = P·Attn(X) holds exactly, up to floating-point rounding, at every d_model.",
}))


def _ch01_norm():
    return float(np.linalg.norm(_pe(1234, 16)))


_add(Numeric("01.2", "norm of PE(p)", _ch01_norm, mistakes=[
    (lambda: math.sqrt(16), "that is sqrt(d_model); there are d_model/2 pairs, each a unit vector (sin² + cos² = 1)."),
    (lambda: 16 / 2, "that is the squared norm d_model/2; take its square root."),
]))


def _add_positions(x):
    x = np.asarray(x)
    return x + posenc.sinusoidal(x.shape[0], x.shape[1])


def _cases_add_positions(rng):
    widths = [4, 1, 2, 3, 7, 16, 15, 33, 64, 5, 128, 9]
    cases = []
    for k in range(20):
        d = widths[k] if k < len(widths) else int(rng.integers(1, 100))
        n = int(rng.integers(1, 300))
        odd = f"d_model = {d} is odd" if d % 2 else ""
        cases.append(Case((rng.normal(size=(n, d)),), f"x of shape ({n}, {d})", note=odd))
    return cases


_add(Function("01.3", "add positions to token vectors", _add_positions, _cases_add_positions,
              _reference_verifier(_add_positions, atol=1e-8), mistakes=[
    (_like(lambda x: x + _table(np.arange(1, len(x) + 1), x.shape[1])), "your positions start at 1; the first token is position 0."),
    (_like(lambda x: x + _table(np.arange(len(x)), x.shape[1], layout="concatenated")), CONCAT_HINT),
    (_like(lambda x: posenc.sinusoidal(len(x), x.shape[1])), "you returned the encoding alone; add it to x."),
    (_like(lambda x: x + _table(np.arange(len(x)), x.shape[1], _doubled_omega(x.shape[1]))), DOUBLED_HINT),
]))


def _ch01_same_value():
    fractions = np.arange(20) / 20
    return int(np.flatnonzero(np.isclose(fractions, 2 / 5))[0])


_add(Numeric("01.4", "p / L at another length", _ch01_same_value, integer=True, mistakes=[
    (lambda: 2, "2 is the position at L = 5; at L = 20 the same value 0.4 names another position."),
    (lambda: 0.4 * 20 - 1, "off by one: p / L = 0.4 means p = 0.4·L, with positions counted from 0."),
]))


def _ch01_raw_ratio():
    d, last = 16, 1000 - 1
    return float(np.linalg.norm(np.full(d, float(last))) / np.sqrt(d))


_add(Numeric("01.5", "raw index versus token norm", _ch01_raw_ratio, mistakes=[
    (lambda: 1000.0, "positions start at 0: the last of L = 1000 tokens is at position 999."),
    (lambda: 999.0 * 4, "that is the norm of the position vector itself; divide by the token norm, 4."),
]))

_add(Choice("01.6", "the two simple repairs", "ABCDE", "ABD", {
    "C": "with p / L, neighbours are 1/L apart: the longer the sequence, the closer they get.",
    "E": "every entry is a sine or a cosine, so it stays in [-1, 1] at every position.",
}))

_add(Choice("01.7", "invariant or equivariant", "ABC", "B", {
    "A": "the outputs are the same vectors, but in the permuted order, not in the original one.",
    "C": "there is an exact rule: permute the input rows and the output rows permute the same way.",
}))


# ---- Chapter 02: the sinusoidal formula -----------------------------------

_add(Choice("02.1", "what i counts", "ABCD", "B", {
    "A": "if i ran over channels, 2i would run up to 2(d-1): the doubled-exponent bug.",
    "C": "the position is p; i selects a frequency.",
    "D": "heads have nothing to do with the encoding's formula.",
}))

_add(Array("02.2", "PE(4) for d_model = 6", lambda: _pe(4, 6), atol=1e-4, mistakes=[
    (lambda: _table([4], 6, _doubled_omega(6))[0], DOUBLED_HINT),
    (lambda: _table([4], 6, layout="concatenated")[0], CONCAT_HINT),
    (lambda: _table([4], 6, swap=True)[0], SWAP_HINT),
]))

_add(Numeric("02.3", "frequency of pair 128", lambda: posenc.frequencies(512)[128], mistakes=[
    (lambda: _doubled_omega(512)[128], DOUBLED_HINT),
    (lambda: posenc.frequencies(512)[128] / (2 * math.pi), "that is ω/2π, in cycles per position; the question asks for the angular frequency ω."),
    (lambda: posenc.wavelengths(512)[128], "that is the wavelength 2π/ω; the question asks for ω."),
]))

_add(Numeric("02.4", "lowest frequency", lambda: posenc.frequencies(512)[-1], mistakes=[
    (lambda: 1 / 10000, "1/10000 would be pair i = 256, which does not exist: the 256 pairs are i = 0 ... 255, so the exponent is -510/512."),
    (lambda: _doubled_omega(512)[-1], DOUBLED_HINT),
    (lambda: posenc.frequencies(512)[-2], "that is pair 254; the last pair is i = 255."),
]))


def _frequencies_cases(rng):
    cases = []
    for k in range(24):
        d = [512, 1, 2, 3, 7, 64][k] if k < 6 else int(rng.integers(1, 1100))
        base = [10000.0, 500000.0, 100.0][k % 3] if k < 12 else float(rng.uniform(2, 1e6))
        cases.append(Case((d, base), f"d_model = {d}, base = {base:g}",
                          note="odd d_model: there are ceil(d/2) pairs" if d % 2 else ""))
    return cases


_add(Function("02.5", "write frequencies", lambda d, base=10000.0: posenc.frequencies(d, base), _frequencies_cases,
              _reference_verifier(lambda d, base: posenc.frequencies(d, base), atol=1e-12), mistakes=[
    (_like(_doubled_omega, atol=1e-12), DOUBLED_HINT),
    (_like(lambda d, base: base ** (-np.arange((d + 1) // 2) / d), atol=1e-12), "the factor 2 in the exponent is missing: ω_i = base^(-2i/d)."),
    (lambda out, case: case.args[0] % 2 and np.shape(out) == (case.args[0] // 2,),
     "for odd d_model the last pair has a sine and no cosine, but it still has a frequency: return ceil(d/2) values."),
]))

def _pe_table(positions, d, layout="interleaved"):
    return posenc.sinusoidal(positions, d, layout=layout)


_add(Function("02.6", "write the table, both layouts", _pe_table, lambda rng: _pe_cases(rng, layouts=True),
              _reference_verifier(_pe_table, atol=1e-7),
              call=lambda f, positions, d, layout: f(positions, d, layout=layout), mistakes=[
    (_like(lambda p, d, layout: _table(p, d, _doubled_omega(d), layout=layout)), DOUBLED_HINT),
    (_like(lambda p, d, layout: _table(p, d, layout="concatenated")), CONCAT_HINT),
    (_like(lambda p, d, layout: _table(p, d) if layout == "concatenated" else None),
     "for layout='concatenated' return the ceil(d/2) sine columns first, then the floor(d/2) cosine "
     "columns; you returned the interleaved layout."),
    (_like(lambda p, d, layout: _table(p, d, layout=layout, swap=True)), SWAP_HINT),
    (_error_grows_with_position, FLOAT32_HINT),
]))


def _to_concatenated(table):
    table = np.asarray(table)
    return table[:, posenc.layout_permutation(table.shape[1])]


def _layout_cases(rng):
    cases = []
    for k in range(20):
        d = [6, 1, 2, 3, 7, 8, 65][k] if k < 7 else int(rng.integers(1, 200))
        n = int(rng.integers(1, 50))
        cases.append(Case((rng.normal(size=(n, d)),), f"a table of shape ({n}, {d})",
                          note=f"d_model = {d} is odd" if d % 2 else ""))
    return cases


_add(Function("02.7", "interleaved to concatenated", _to_concatenated, _layout_cases,
              _reference_verifier(_to_concatenated, atol=0.0), mistakes=[
    (_like(lambda t: t[:, np.argsort(posenc.layout_permutation(t.shape[1]))], atol=0), "you applied the inverse permutation (concatenated → interleaved)."),
    (_like(lambda t: np.concatenate([t[:, 1::2], t[:, 0::2]], axis=1), atol=0), "cosines first: the concatenated layout puts the sines (even channels) first."),
    (_like(lambda t: t, atol=0), "you returned the table unchanged."),
]))


# ---- Chapter 03: frequency analysis ---------------------------------------

_PAIRS_03 = [0, 64, 128, 192, 255]


def _doubled_wavelengths(d, base=10000.0):
    return 2 * math.pi / _doubled_omega(d, base)


_add(Array("03.1", "wavelengths of five pairs", lambda: posenc.wavelengths(512)[_PAIRS_03], rtol=1e-3, mistakes=[
    (lambda: np.r_[posenc.wavelengths(512)[_PAIRS_03[:-1]], 2 * math.pi * 10000],
     "your last value is 2π·10000, the wavelength of a pair i = 256 that does not exist; the last pair is i = 255."),
    (lambda: _doubled_wavelengths(512)[_PAIRS_03], DOUBLED_HINT),
    (lambda: posenc.frequencies(512)[_PAIRS_03], "these are the frequencies ω_i; the wavelength is 2π/ω_i."),
    (lambda: 1 / posenc.frequencies(512)[_PAIRS_03], "the factor 2π is missing: λ_i = 2π/ω_i."),
]))


def _ch03_cycles():
    return int(np.sum(posenc.wavelengths(512) <= 1000))


_add(Numeric("03.2", "pairs that cycle within 1000 positions", _ch03_cycles, integer=True, mistakes=[
    (lambda: 256 - _ch03_cycles(), "you counted the pairs that do NOT complete a cycle (wavelength above 1000)."),
    (lambda: int(np.sum(_doubled_wavelengths(512) <= 1000)), DOUBLED_HINT),
]))

_add(Choice("03.3", "PE(0) versus PE(1000)", "ABCD", "AB", {
    "C": "slow pairs change little between neighbours, but they are what tells far-apart positions apart.",
    "D": "ω_i = base^(-2i/d) decreases with i: small i means high frequency.",
}))

_add(Choice("03.4", "raising the base", "ABCD", "AB", {
    "C": "a larger base makes ω_i = base^(-2i/d) smaller for every i > 0: fewer pairs are fast, not more.",
    "D": "ω_0 = base^0 = 1 whatever the base.",
}))

_add(Numeric("03.5", "longest wavelength at base 500,000", lambda: posenc.wavelengths(128, 500000.0)[-1], mistakes=[
    (lambda: 2 * math.pi * 500000.0, "2π·base is a limit the encoding never reaches: the last pair is i = 63, exponent 126/128."),
    (lambda: _doubled_wavelengths(128, 500000.0)[-1], DOUBLED_HINT),
    (lambda: posenc.wavelengths(128)[-1], "that is the longest wavelength at base 10,000."),
]))

_add(Numeric("03.6", "float32 angle error at p = 10^6", lambda: float(np.spacing(np.float32(1e6))) / 2, mistakes=[
    (lambda: float(np.spacing(np.float32(1e6))), "that is the gap between neighbouring float32 numbers; rounding to the nearest is off by at most half of it."),
    (lambda: float(np.spacing(np.float64(1e6))) / 2, "that is the float64 value; the question is about float32."),
    (lambda: float(np.finfo(np.float32).eps), "that is the relative precision of float32 near 1; near 10^6 the gap is 10^6 times larger."),
]))

_add(Function("03.7", "accurate float32 table", lambda positions, d: posenc.sinusoidal(positions, d, dtype=np.float32),
              lambda rng: _pe_cases(rng, n_cases=20, max_pos=10**7, max_n=80),
              _reference_verifier(lambda positions, d: posenc.sinusoidal(positions, d), dtype=np.float32, atol=5e-7),
              mistakes=[
    (_error_grows_with_position, FLOAT32_HINT),
    (_like(lambda p, d: _table(p, d, _doubled_omega(d)), atol=1e-6), DOUBLED_HINT),
    (_like(lambda p, d: _table(p, d, layout="concatenated"), atol=1e-6), CONCAT_HINT),
]))


# ---- Chapter 04: linearity ------------------------------------------------

_add(Array("04.1", "T(k) for one pair", lambda: posenc.rotation(3, 8)[2:4, 2:4], atol=1e-6, mistakes=[
    (lambda: posenc.rotation(3, 8)[2:4, 2:4].T, "this is the transpose, the rotation by -k. Check with sin(a+b) = sin a cos b + cos a sin b."),
    (lambda: posenc.rotation(3, 2), "you rotated by k radians; pair i = 1 turns by k·ω_1."),
    (lambda: _rotation_block(3, _doubled_omega(8)[1]), DOUBLED_HINT),
]))


def _rotation_block(k, omega):
    c, s = math.cos(k * omega), math.sin(k * omega)
    return np.array([[c, s], [-s, c]])


def _rotation_cases(rng):
    fixed = {0: (3, 8), 1: (-2, 2), 2: (0.5, 4), 4: (1000, 6), 5: (-7, 64), 6: (2.25, 10)}
    cases = []
    for n in range(24):
        if n % 4 == 3:
            d = 2 * int(rng.integers(0, 40)) + 1
            cases.append(Case((int(rng.integers(-50, 50)), d), f"odd d_model = {d}", raises=ValueError,
                              note="no T(k) exists: the last channel is a sine without its cosine partner"))
            continue
        if n in fixed:
            k, d = fixed[n]
        else:
            d = 2 * int(rng.integers(1, 40))
            k = int(rng.integers(-10**4, 10**4)) if n % 2 else float(rng.uniform(-100, 100))
        cases.append(Case((k, d), f"k = {k:g}, d_model = {d}"))
    return cases


def _verify_rotation(out, case):
    return _verify_array(out, posenc.rotation(*case.args), atol=1e-8)


_add(Function("04.2", "write T(k)", lambda k, d: posenc.rotation(k, d), _rotation_cases, _verify_rotation, mistakes=[
    (_like(lambda k, d: posenc.rotation(k, d).T), "this is T(-k), the transpose: with (sin, cos) in a pair, the block is [[cos, sin], [-sin, cos]]."),
    (_like(lambda k, d: _block_diag(k, _doubled_omega(d))), DOUBLED_HINT),
    (_like(lambda k, d: posenc.rotation(k, d, layout="concatenated")), "that is T(k) for the concatenated layout; use the interleaved one."),
]))


def _block_diag(k, omegas):
    t = np.zeros((2 * len(omegas), 2 * len(omegas)))
    for i, w in enumerate(omegas):
        t[2 * i:2 * i + 2, 2 * i:2 * i + 2] = _rotation_block(k, w)
    return t


_add(Choice("04.3", "sine only", "ABCD", "AB", {
    "C": "two sines of different frequencies cannot produce cos(p·ω): that needs a cosine of the same frequency.",
    "D": "a sine is bounded by 1 whatever the position.",
}))

_add(Choice("04.4", "the two key properties", "ABCDE", "AB", {
    "C": "the sinusoidal encoding is fixed by a formula; nothing in it is learned.",
    "D": "the formula is defined at every position, but a model trained on short sequences has never seen "
         "the larger phases, and measured extrapolation is poor.",
    "E": "PE(p)·PE(q) = Σ cos((p - q)ω_i), which is not zero in general.",
}))


def _ch04_dot():
    return float(_pe(0, 64) @ _pe(7, 64))


_add(Numeric("04.5", "PE(p)·PE(p+7)", _ch04_dot, mistakes=[
    (lambda: 64 / 2, "that is PE(p)·PE(p) = d/2, the offset 0; the question asks for offset 7."),
    (lambda: _ch04_dot() / 32, "that is the cosine similarity (divided by the norms, d/2 = 32); give the plain dot product."),
    (lambda: float(np.sum(np.cos(7 * _doubled_omega(64)))), DOUBLED_HINT),
]))

_add(Choice("04.6", "odd d_model", "ABC", "B", {
    "A": "the last channel holds sin(p·ω) alone, and sin(a + b) is not a fixed multiple of sin(a) for all a.",
    "C": "the obstacle is the missing cosine partner, whatever k is.",
}))


def _ch04_concat():
    return posenc.rotation(2, 6, layout="concatenated")


_add(Array("04.7", "T(k) in the concatenated layout", _ch04_concat, atol=1e-6, mistakes=[
    (lambda: posenc.rotation(2, 6), "that is T(2) for the interleaved layout; permute rows and columns with posenc.layout_permutation(6)."),
    (lambda: posenc.rotation(2, 6)[np.ix_(*[np.argsort(posenc.layout_permutation(6))] * 2)], "you permuted the wrong way (with the inverse permutation)."),
    (lambda: _ch04_concat().T, "this is the transpose, T(-2)."),
]))


# ---- Chapter 05: learned versus fixed -------------------------------------

_add(Choice("05.1", "why learned tables stop at max_len", "ABCD", "AB", {
    "C": "then every later position gets the same vector, and the model can no longer tell them apart.",
    "D": "nn.Embedding takes any number of rows; the limit is the max_len the model was built and trained with.",
}))

_add(Choice("05.2", "600 tokens into a 512-position model", "ABCD", "ABC", {
    "D": "each row was trained on its own; nothing defines a vector for position 512 or later.",
}))


def _ch05_uncovered():
    table = posenc.LearnedPositionalEmbedding(1024, 8)
    return 1500 - table.embedding.num_embeddings


_add(Numeric("05.3", "positions without a learned row", _ch05_uncovered, integer=True, mistakes=[
    (lambda: _ch05_uncovered() - 1, "off by one: the positions are 0 ... 1499 and the table covers 0 ... 1023."),
    (lambda: _ch05_uncovered() + 1, "off by one: the positions are 0 ... 1499 and the table covers 0 ... 1023."),
    (lambda: 0, "every position from 1024 on has no row in the table."),
]))


def _ch05_params():
    return sum(p.numel() for p in posenc.LearnedPositionalEmbedding(512, 768).parameters() if p.requires_grad)


_add(Numeric("05.4", "parameters of a learned table", _ch05_params, integer=True, mistakes=[
    (lambda: 512 + 768, "the table has one row of d_model numbers per position: multiply."),
    (lambda: 0, "that is the sinusoidal encoding's count; the learned table is trained."),
    (lambda: 2 * 512 * 768, "one table, not two."),
]))

_add(Choice("05.5", "the trade-off", "ABCD", "A", {
    "B": "the formula is defined at every position, but models trained on short sequences extrapolate poorly in practice.",
    "C": "most current open LLMs use rotary embeddings (RoPE); BERT and GPT-2 used learned tables.",
    "D": "a learned position vector is a row lookup, no matrix product.",
}))

_add(Choice("05.6", "a learned weight on PE", "ABCD", "ABD", {
    "C": "w·PE(p) still depends on p only through PE(p).",
}))


class _TokenPositionEmbedding(nn.Module):
    """Reference for 05.7: sqrt(d)-scaled token embedding plus the sinusoidal encoding."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, d_model)
        self.positions = posenc.SinusoidalPositionalEncoding(d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, tokens):
        return self.positions(self.tokens(tokens) * self.scale)


def _layer_cases(rng):
    cases = []
    for k in range(12):
        vocab = int(rng.integers(2, 1000))
        d = [16, 7, 1, 2, 64, 33][k] if k < 6 else int(rng.integers(1, 70))
        batch = int(rng.integers(1, 4))
        seq = [15, 1, 600, 2500][k % 4] if k < 8 else int(rng.integers(1, 3000))
        tokens = torch.from_numpy(rng.integers(0, vocab, size=(batch, seq)))
        cases.append(Case((vocab, d, tokens), f"vocab_size = {vocab}, d_model = {d}, tokens of shape ({batch}, {seq})",
                          note="a fixed encoding has no length limit: build the table for the actual seq"
                          if seq > 512 else (f"d_model = {d} is odd" if d % 2 else "")))
    return cases


def _call_layer(cls, vocab, d, tokens):
    torch.manual_seed(0)
    module = cls(vocab, d)
    if not isinstance(module, nn.Module):
        return module, None
    module.eval()
    with torch.no_grad():
        return module, module(tokens)


def _verify_layer(result, case):
    module, out = result
    vocab, d, tokens = case.args
    if not isinstance(module, nn.Module):
        return f"calling your class should create a torch.nn.Module, got {_describe(module)}."
    tables = [m for m in module.modules() if isinstance(m, nn.Embedding) and tuple(m.weight.shape) == (vocab, d)]
    if len(tables) != 1:
        return f"expected one nn.Embedding(vocab_size, d_model) for the tokens, found {len(tables)}."
    extra = sum(p.numel() for p in module.parameters() if p.requires_grad) - vocab * d
    if extra:
        return (f"your module has {extra} trainable parameters besides the token embedding: the positional "
                "encoding must be fixed (computed, or a buffer), not learned.")
    if not isinstance(out, torch.Tensor):
        return f"forward returned {_describe(out)}; return a torch tensor."
    if tuple(out.shape) != (*tokens.shape, d):
        return f"forward should return shape {(*tokens.shape, d)}, got {tuple(out.shape)}."
    if out.dtype != torch.float32:
        return f"expected dtype float32, got {out.dtype}."
    got = out.double().numpy()
    if np.isnan(got).any():
        return f"element {_index(np.argwhere(np.isnan(got))[0])} is NaN."
    want = tables[0].weight.detach().double().numpy()[tokens.numpy()] * math.sqrt(d) + posenc.sinusoidal(tokens.shape[1], d)
    bad = np.abs(got - want) > 1e-3 + 1e-5 * np.abs(want)
    if bad.any():
        b, p, c = np.argwhere(bad)[0]
        return f"wrong value at batch {b}, position {p}, channel {c}: {got[b, p, c]:.6g}, expected {want[b, p, c]:.6g}."
    return None


def _layer_mistake(kind):
    def test(result, case):
        module, out = result
        vocab, d, tokens = case.args
        table = next(m for m in module.modules() if isinstance(m, nn.Embedding) and tuple(m.weight.shape) == (vocab, d))
        tok = table.weight.detach().double().numpy()[tokens.numpy()]
        pe = posenc.sinusoidal(tokens.shape[1], d)
        if kind == "clamped":  # from some position on, every row gets the same encoding
            part = out.double().numpy() - tok * math.sqrt(d)
            bad = np.flatnonzero(np.abs(part - pe).max(axis=(0, 2)) > 1e-3)
            return bad.size > 0 and bad[0] > 0 and np.allclose(part[:, bad[0]:], part[:, bad[0] - 1:bad[0]], atol=1e-3)
        model = {"unscaled": tok + pe,
                 "concatenated": tok * math.sqrt(d) + _table(np.arange(tokens.shape[1]), d, layout="concatenated"),
                 "only tokens": tok * math.sqrt(d)}[kind]
        return np.allclose(out.double().numpy(), model, atol=1e-3)
    return test


_add(Function("05.7", "token + position embedding layer", _TokenPositionEmbedding, _layer_cases, _verify_layer,
              call=_call_layer, mistakes=[
    (_layer_mistake("unscaled"), "scale the token embeddings by sqrt(d_model) before adding the positions."),
    (_layer_mistake("concatenated"), CONCAT_HINT),
    (_layer_mistake("only tokens"), "the positional encoding is missing."),
    (_layer_mistake("clamped"), "from some position on, every position gets the same vector: are positions clamped "
                                "to a max_len? A fixed encoding needs no length limit."),
]))


# ---- Chapter 06: precision and implementations -----------------------------
# (appended as one block; uses bug_zoo, the chapter's collection of real bugs)

import bug_zoo  # noqa: E402

_FORMATS_06 = ["float64", "float32", "float16", "bfloat16"]


def _first_inexact_integer(dtype):
    """The smallest non-negative integer that ``dtype`` cannot hold exactly."""
    bits = round(-math.log2(torch.finfo(dtype).eps)) + 1
    candidates = torch.arange(2 ** bits - 4, 2 ** bits + 4, dtype=torch.float64)
    exact = candidates.to(dtype).double() == candidates
    return int(candidates[~exact][0].item())


_add(Numeric("06.1", "first integer bfloat16 cannot hold", lambda: _first_inexact_integer(torch.bfloat16),
             integer=True, mistakes=[
    (lambda: _first_inexact_integer(torch.bfloat16) - 1, "that one is still exact (a power of two); the next integer is the first that is not."),
    (lambda: _first_inexact_integer(torch.float16), "that is float16's (11 significant bits); bfloat16 keeps only 8."),
    (lambda: _first_inexact_integer(torch.float32), "that is float32's (24 significant bits); bfloat16 keeps only 8."),
]))


def _ch06_first_collision():
    for letter, name in zip("ABCD", _FORMATS_06):
        rows = bug_zoo.low_precision_table([1000, 1001], 64, dtype=bug_zoo.TORCH_DTYPES[name])
        if np.array_equal(rows[0], rows[1]):
            return letter
    return "E"


_add(Choice("06.2", "positions 1000 and 1001", "ABCDE", _ch06_first_collision(), {
    "A": "float64 holds every integer up to 2^53 exactly.",
    "B": "float32 holds every integer up to 2^24 = 16,777,216 exactly.",
    "C": "float16 holds every integer up to 2048, so 1000 and 1001 stay distinct and so do their angles.",
    "D": "bfloat16 keeps 8 significant bits: between 512 and 1024 it holds only multiples of 4.",
    "E": "one of the formats has too few significant bits for positions near 1000.",
}))


def _ch06_collisions(n=20000, dtype=torch.float16):
    positions = torch.arange(n, dtype=torch.float64)
    return int(n - len(torch.unique(positions.to(dtype))))


_add(Numeric("06.3", "float16 collisions below 20,000", _ch06_collisions, integer=True, mistakes=[
    (lambda: 20000 - _ch06_collisions(), "that is the number of distinct vectors; the question asks how many positions lose their own."),
    (lambda: _ch06_collisions(dtype=torch.bfloat16), "that is the bfloat16 count; the question is about float16."),
    (lambda: 20000 - 2049, "not every position above 2048 collides: the spacing of float16 numbers is 2 up to 4096, "
                           "4 up to 8192, and so on, so some positions above 2048 keep their own vector."),
    (lambda: 0, "float16 holds every integer only up to 2048; above it, positions round onto each other."),
]))


def _half_table(positions, d):
    return posenc.sinusoidal(positions, d, dtype=np.float32).astype(np.float16)


def _collides(out, case):
    """True when distinct positions got identical rows (angles computed in half precision)."""
    positions = np.asarray(case.args[0])
    return (isinstance(out, np.ndarray) and out.ndim == 2 and out.shape[0] == len(positions)
            and len(np.unique(positions)) == len(positions) and bug_zoo.duplicate_rows(out) > 0
            and bug_zoo.duplicate_rows(posenc.sinusoidal(positions, case.args[1])) == 0)


def _float32_blur(out, case):
    """True when the error grows with the position, as with angles formed in float32."""
    positions, d = np.asarray(case.args[0]), case.args[1]
    if not isinstance(out, np.ndarray) or out.shape != (len(positions), d):
        return False
    err = np.abs(out.astype(np.float64) - posenc.sinusoidal(positions, d)).max(axis=1)
    return err.max() > 3e-4 and bool(np.all(err <= 5e-4 + 1e-6 * np.abs(positions)))


def _half_blur(out, case):
    """True when the error stays within what angles formed in float16 give (about 3 u p, u = 2^-11)."""
    positions, d = np.asarray(case.args[0]), case.args[1]
    if not isinstance(out, np.ndarray) or out.shape != (len(positions), d):
        return False
    err = np.abs(out.astype(np.float64) - posenc.sinusoidal(positions, d)).max(axis=1)
    return err.max() > 3e-4 and bool(np.all(err <= 2e-3 + 1.5e-3 * np.abs(positions)))


HALF_HINT = ("your angles p·ω seem to be computed in half precision: they are off by about p·1e-3 "
             "radians, and positions above 2048 round onto each other. Form the angles in float64 (or use posenc) "
             "and convert only the finished table with .astype(np.float16).")

_add(Function("06.4", "an accurate float16 table", _half_table,
              lambda rng: _pe_cases(rng, n_cases=20, max_pos=60000, max_n=100),
              _reference_verifier(lambda positions, d: posenc.sinusoidal(positions, d), dtype=np.float16, atol=3e-4),
              mistakes=[
    (_collides, HALF_HINT),
    (_float32_blur, FLOAT32_HINT),
    (_half_blur, HALF_HINT),
    (_like(lambda p, d: _table(p, d, layout="concatenated"), atol=1e-3), CONCAT_HINT),
]))


_MYSTERY_06 = 2
_VARIANT_LETTERS_06 = dict(zip(bug_zoo.VARIANTS, "ABCD"))

_add(Choice("06.5", "which variant made this table", "ABCD",
            _VARIANT_LETTERS_06[bug_zoo.identify_variant(bug_zoo.mystery_table(_MYSTERY_06))], {
    "A": "row 0 of an interleaved table alternates 0, 1, 0, 1, ...: look at row 0.",
    "B": "the row-0 pattern fits, but check the slowest frequency: read it off row 1 with atan2(last sine, last cosine).",
    "C": "with the cosines first, row 0 starts with ones (cos 0 = 1): look at row 0.",
    "D": "fairseq's slowest frequency is exactly 1/base; measure it from row 1 with atan2(last sine, last cosine).",
}))

_add(Choice("06.6", "what the doubled exponent passes", "ABCDE", "ABE", {
    "C": "pair i runs at the frequency of pair 2i, so the table differs from posenc by up to 2.",
    "D": "pair d/4 gets base^(-4(d/4)/d) = 1/base = 1e-4, not 0.01.",
}))


def _own_frequency(positions, d, base=10000.0):
    """Bug 3 for arbitrary positions: channel j uses base^(-j/d)."""
    angle = np.outer(np.asarray(positions, dtype=np.float64), base ** (-np.arange(d) / d))
    return np.where(np.arange(d) % 2 == 0, np.sin(angle), np.cos(angle))


_add(Function("06.7", "fix the buggy table", lambda positions, d: posenc.sinusoidal(positions, d),
              lambda rng: _pe_cases(rng, n_cases=20, max_pos=10**6, max_n=80),
              _reference_verifier(lambda positions, d: posenc.sinusoidal(positions, d), atol=1e-8),
              mistakes=[
    (_like(_own_frequency), "the cosine of pair i still uses the exponent (2i+1)/d: both channels of a pair "
                            "share ω_i = base^(-2i/d)."),
    (_like(lambda p, d: _table(p, d, _doubled_omega(d))), DOUBLED_HINT),
    (_like(lambda p, d: _table(p, d, swap=True)), SWAP_HINT),
    (_like(lambda p, d: _table(p, d, layout="concatenated")), CONCAT_HINT),
    (_error_grows_with_position, FLOAT32_HINT),
]))


def _add_batch_first(x):
    x = np.asarray(x)
    return x + posenc.sinusoidal(x.shape[1], x.shape[2])[None]


def _batch_first_cases(rng):
    cases = []
    shapes = [(4, 10, 8), (1, 12, 6), (7, 7, 16), (3, 5, 7), (10, 3, 4), (1, 1, 1), (2, 40, 33)]
    for k in range(16):
        batch, seq, d = shapes[k] if k < len(shapes) else (int(rng.integers(1, 9)), int(rng.integers(1, 60)),
                                                             int(rng.integers(1, 70)))
        note = "batch 1" if batch == 1 else ("batch equals seq" if batch == seq else "")
        cases.append(Case((rng.normal(size=(batch, seq, d)),),
                          f"x of shape (batch, seq, d_model) = ({batch}, {seq}, {d})", note=note))
    return cases


def _along_batch(x):
    """Bug 4: sequence b gets PE(b) at every position."""
    return x + posenc.sinusoidal(x.shape[0], x.shape[2])[:, None, :]


_add(Function("06.8", "add positions to a batch-first input", _add_batch_first, _batch_first_cases,
              _reference_verifier(_add_batch_first, atol=1e-8), mistakes=[
    (_like(_along_batch), "you added PE(b) to every token of sequence b: the positions run along axis 1 "
                          "(seq), and every sequence of the batch gets the same PE[:seq]."),
    (_like(lambda x: x + posenc.sinusoidal(1, x.shape[2])[None]), "every token got PE(0): take seq rows of the table, "
                                                                  "one per position."),
    (_like(lambda x: x + _table(np.arange(x.shape[1]), x.shape[2], layout="concatenated")[None]), CONCAT_HINT),
    (_like(lambda x: np.broadcast_to(posenc.sinusoidal(x.shape[1], x.shape[2]), x.shape)),
     "you returned the encoding alone; add it to x."),
]))


# ---- Chapter 07: rotary embeddings (RoPE) and ALiBi ------------------------
# (appended as one block)

_add(Choice("07.1", "why the RoPE score depends on s - p", "ABCD", "A", {
    "B": "the fastest pair turns a whole radian per position; nothing about RoPE needs small angles.",
    "C": "RoPE adds nothing to queries, keys or tokens: it only rotates queries and keys.",
    "D": "rotations do keep norms, but that alone says nothing about which positions the score depends on; "
         "the composition rule T(p)ᵀ T(s) = T(s - p) does.",
}))


def _rope_one(x, p, layout="interleaved"):
    return posenc.apply_rope(np.asarray(x, dtype=np.float64)[None], [p], layout=layout)[0]


def _rope_with(x, p, omega, layout="interleaved"):
    """RoPE of one vector with arbitrary frequencies ``omega`` (models of mistakes)."""
    x = np.asarray(x, dtype=np.float64)
    h = x.shape[0] // 2
    angle = p * np.asarray(omega[:h], dtype=np.float64)
    c, s = np.cos(angle), np.sin(angle)
    a, b = (x[0::2], x[1::2]) if layout == "interleaved" else (x[:h], x[h:])
    ra, rb = a * c - b * s, a * s + b * c
    if layout == "interleaved":
        return np.stack([ra, rb], -1).reshape(-1)
    return np.concatenate([ra, rb])


def _rope_cases(rng):
    widths = [2, 4, 8, 64, 6, 128, 10, 16]
    fixed_p = [0, 1, 5, 1000, 123_456, 7, 999_999, 3]
    cases = []
    for k in range(24):
        d = widths[k] if k < len(widths) else 2 * int(rng.integers(1, 100))
        p = fixed_p[k] if k < len(fixed_p) else int(rng.integers(0, 10**6))
        layout = "concatenated" if k % 3 == 2 else "interleaved"
        cases.append(Case((rng.normal(size=d), p, layout), f"d = {d}, p = {p:,}, layout = {layout!r}"))
    return cases


def _rope_float32(out, case):
    """True when the error grows with the position like float32 angles (about p·6e-8 radians)."""
    x, p, layout = case.args
    if not isinstance(out, np.ndarray) or out.shape != x.shape:
        return False
    err = np.abs(out.astype(np.float64) - _rope_one(x, p, layout)).max()
    return 1e-8 < err <= (1e-5 + 3e-7 * abs(p)) * np.abs(x).max()


_add(Function("07.2", "RoPE for one vector, both layouts", _rope_one, _rope_cases,
              lambda out, case: _verify_array(out, _rope_one(*case.args), atol=1e-8),
              call=lambda f, x, p, layout: f(x, p, layout=layout), mistakes=[
    (_like(lambda x, p, layout: _rope_one(x, -p, layout)),
     "you rotated by -p·ω_i: the rotated pair is (x_a cos - x_b sin, x_a sin + x_b cos)."),
    (_like(lambda x, p, layout: _rope_with(x, p, _doubled_omega(len(x)), layout)), DOUBLED_HINT),
    (_like(lambda x, p, layout: _rope_one(x, p) if layout == "concatenated" else None),
     "for layout='concatenated' pair i is channels (i, i + d/2); you paired neighbouring channels."),
    (_like(lambda x, p, layout: _rope_one(x, p, "concatenated") if layout == "interleaved" else None),
     "for layout='interleaved' pair i is channels (2i, 2i+1); you used the half-split pairs (i, i + d/2)."),
    (_rope_float32, FLOAT32_HINT),
]))

_add(Numeric("07.3", "ALiBi slope of head 3 of 16", lambda: posenc.alibi_slopes(16)[2], mistakes=[
    (lambda: 2.0 ** -3, "that is 2^(-h), the rule for 8 heads; for n heads the slopes are 2^(-8h/n)."),
    (lambda: posenc.alibi_slopes(16)[1], "heads are counted from h = 1 (the first slope is 2^(-8/n)), so head 3 has h = 3."),
    (lambda: posenc.alibi_slopes(16)[3], "that is head 4; head 3 has h = 3 in 2^(-8h/n)."),
    (lambda: 2.0 ** (-3 / 16), "the exponent is -8h/n: the factor 8 is missing."),
]))

_add(Choice("07.4", "equal RoPE scores", "ABCDE", "ABD", {
    "C": "the offsets are +7 and -7, and T(7) ≠ T(-7): RoPE, unlike PE(p)·PE(s), can tell ahead from behind.",
    "E": "the offsets are 2 and 4; RoPE depends on the difference s - p, not on the ratio.",
}))

_add(Numeric("07.5", "position-interpolation factor", lambda: 4096 / 16384, mistakes=[
    (lambda: 16384 / 4096, "that stretches positions further out; interpolation squeezes the new positions "
                           "into the trained range: multiply by L_train / L_new."),
    (lambda: 16384 - 4096, "the factor is a ratio of the two lengths, not their difference."),
    (lambda: 1 / 16384, "that is 1 / L_new, which would squeeze every position into [0, 1); the factor is L_train / L_new."),
]))


def _ch07_ntk_base():
    return 10000.0 * 4.0 ** (128 / 126)


_add(Numeric("07.6", "NTK-aware base", _ch07_ntk_base, mistakes=[
    (lambda: 10000.0 * 4, "with base·s the last pair slows down by only s^((d-2)/d); "
                          "the exponent d/(d-2) makes it exactly s."),
    (lambda: 10000.0 * 4.0 ** (126 / 128), "the exponent is upside down: d/(d-2), not (d-2)/d."),
    (lambda: 10000.0 / 4, "the base must grow: a larger base means slower pairs and longer wavelengths."),
]))


def _ch07_bias_row():
    return posenc.alibi_bias(4, 6)[1, 5]


_add(Array("07.7", "ALiBi bias of one query", _ch07_bias_row, atol=1e-6, mistakes=[
    (lambda: -_ch07_bias_row(), "the sign is wrong: ALiBi subtracts m·(i - j), a penalty for distant keys."),
    (lambda: _ch07_bias_row()[::-1], "the keys are in reverse order: key j = 0 is the farthest, key j = 5 the query itself."),
    (lambda: posenc.alibi_bias(4, 6)[2, 5], "that is head 3 (h = 3); head 2 has slope 2^(-8·2/4)."),
    (lambda: -2.0 ** -2 * (5 - np.arange(6)), "that slope, 2^(-2), is head 2 of 8 heads; with 4 heads it is 2^(-8·2/4)."),
]))

_add(Choice("07.8", "interpolation and a raised base", "ABCD", "AB", {
    "C": "that is position interpolation; a raised base leaves the fastest pair as it is and slows the last one by s.",
    "D": "the interpolated model still attends to the angle it learned for k, which now belongs to the offset s·k: "
         "it copies the token s·k back. Interpolation is meant to be followed by fine-tuning.",
}))
# ---- end of chapter 07 ------------------------------------------------------
