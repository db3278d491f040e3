"""The four kinds of question: Numeric, Choice, Array and Function."""

from __future__ import annotations

import copy
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

import posenc
from grading import reference
from grading.feedback import (  # (for Numeric, Choice and Array)
    Model,
    as_array,
    as_number,
    close_enough,
    code_objects,
    decade_text,
    describe,
    how_far,
    index_text,
    is_filled,
    is_ordinary,
    learner_lines,
    plain_value,
    raised_at,
    safely,
    same_value,
    seed_for,
    short_error,
    shown_digits,
    tolerance_text,
    verify_array,
    within_markdown,
)

# The verdicts grading.store records (UNCHECKABLE: the grader itself failed, which says nothing about the answer)
from grading.store import CORRECT, INTERRUPTED, UNCHECKABLE, WRONG  # noqa: F401
from posenc_course import choices
from posenc_course.arguments import ArgumentError
from posenc_course.choices import LETTERS, ChoiceQuestion

if TYPE_CHECKING:
    from grading.runner import Runner

UNANSWERED = "unanswered"  # the placeholder, or a function that returns None: nothing is recorded
# Seconds a learner's function may take over all its test inputs: each question's own ``limit`` (stated in its
# Accepted line), generous enough for honest beginner code (a Python double loop filling 05.7's table, say) on a
# slow, loaded laptop. A grader's ``time_limit``, when set, overrides every question's (the tests shorten it).
LIMIT = 30.0


@dataclass(frozen=True)
class Lazy:
    """An answer built when it is tried (an instance, a computed array), not when the bank is imported."""

    make: Callable[[], object]


class Question:
    """What every kind declares besides how it judges: the question's test data, kept next to it.

    ``known_mistakes``: realistic wrong answers, each ``(answer, words)``, ``words`` being what the feedback
    to it must contain (an answer that costs more than trivial work to build is given as ``Lazy(make)``);
    ``alternatives``: {label: answer}, correct answers written differently from the reference (where the
    question asks for the learner's own code, those that call the posenc function it tests are wrong);
    ``covers``: {label: predicate on a call's arguments}, what the question's text promises its test inputs
    include. Every kind takes them as keyword arguments (``**declared``), next to its own ``mistakes``. The
    grader does not use them: the battery of tries (tools/grading_battery.py) is built from them.

    ``states``: {a number as the question's texts type it: a function computing it}, for every result the
    learner reads about the question (its stem, options and Why in the notebook, its feedback here), e.g.
    ``{"less than 0.18": lambda: 1000 * posenc.frequencies(512)[240]}``. The grader does not use them either:
    tests/test_numbers_in_prose.py checks each with ``posenc_course.prose.says`` and fails on a typed result
    that no function states.
    """

    kind = "?"

    def __init__(self, qid, title, *, known_mistakes=(), alternatives=None, covers=None, states=None):
        self.qid, self.title = qid, title
        self.known_mistakes = list(known_mistakes)
        self.alternatives = dict(alternatives or {})
        self.covers = dict(covers or {})
        self.states = dict(states or {})
        self.found_by = None  # (function, args) that finds it in a bank, set by the bank that registers it

    def judge(self, answer, runner: Runner | None = None) -> tuple[str, str]:
        """(status, message) for ``answer``; learner code runs in ``runner``'s workers (a grader's own)."""
        raise NotImplementedError

    def __reduce_ex__(self, protocol):
        """A question of the bank is sent to a spawned worker by its id: the worker has its own bank."""
        return self.found_by or object.__reduce_ex__(self, protocol)

    def reference(self):
        """A correct answer (the tests check that it passes)."""
        raise NotImplementedError

    def tolerance(self) -> dict:
        """What the grader accepts: {"atol", "rtol", "dtype", "integer"} ({} for a choice question)."""
        return {}

    def requirement(self) -> str | None:
        """The sentence, in markdown, that says what the question accepts. ``make_exercises`` puts it into the
        question's text in solutions/ and exercises/ (tests/test_grading_bank.py checks that the grader accepts
        just inside the tolerance and rejects just outside it). None for a choice question: its text says
        "Choose one" or "Choose all that apply" instead."""
        return None


def _fixed(expected):
    """Call ``expected()`` once, now (when the bank is imported), without touching the learner's torch RNG.

    Expected values are computed from the grader's private copy of posenc
    (``grading.reference``) and kept, so nothing done later in the notebook
    can move them.
    """
    with torch.random.fork_rng(devices=[]):
        return expected()


def _mistake_values(question, convert, hit):
    """(value, hint) of the question's named mistakes, computed on first use and kept; a mistake whose value is
    within the tolerance of the right answer (``hit``) is left out, as it cannot explain a wrong answer.

    Not at import: a bank module may name helpers it defines further down.
    """
    if not hasattr(question, "_mistake_cache"):
        values = [(convert(_fixed(value)), hint) for value, hint in question.mistakes]
        question._mistake_cache = [(value, hint) for value, hint in values if not hit(value)]
    return question._mistake_cache


class Numeric(Question):
    """One real number, within ``rtol`` (or exact with ``integer``).

    ``mistakes``: (function giving a wrong value, hint); the hint is given to an
    answer within the tolerance of that value. Any other wrong number gets its
    direction and a coarse size only (see ``how_far``).
    """

    kind = "numeric"

    def __init__(self, qid, title, expected, *, rtol=1e-3, integer=False, mistakes=(), **declared):
        super().__init__(qid, title, **declared)
        self.rtol, self.integer, self.mistakes = rtol, integer, mistakes
        self._reference = _fixed(expected)
        self._want = float(self._reference)

    def reference(self):
        return self._reference

    def tolerance(self) -> dict:
        return {"atol": 0.0, "rtol": 0.0 if self.integer else self.rtol, "dtype": None, "integer": self.integer}

    def requirement(self) -> str:
        if self.integer:
            return "**Accepted:** the exact whole number."
        return f"**Accepted:** a number {within_markdown(0.0, self.tolerance()['rtol'])}."

    def _hit(self, x, value) -> bool:
        return x == value if self.integer else close_enough(x, value, self.rtol)

    def judge(self, answer, runner=None):
        x, problem = as_number(answer)
        if problem:
            return WRONG, problem
        if self.integer:
            whole = round(x)
            if abs(x - whole) > 1e-9 * max(1.0, abs(x)):  # 8.000000000000002 is 8; 8.5 is not
                return WRONG, f"the answer is a whole number; you gave {shown_digits(x, whole, least=6)[0]}."
            x = float(whole)
        if self._hit(x, self._want):
            return CORRECT, ""
        for value, hint in _mistake_values(self, float, lambda value: self._hit(value, self._want)):
            if self._hit(x, value):
                return WRONG, hint
        return WRONG, how_far(x, self._want, self.rtol, integer=self.integer)


class Choice(Question, ChoiceQuestion):
    """Multiple choice, judged by the course's one choice engine (``posenc_course.choices``, which says what
    each answer is told). ``correct`` is a string of letters.

    Every option has an explanation: ``hints`` for the wrong ones, ``right`` for the right ones (a question may
    give all of them in ``hints``). They are shown once the question is solved, or when the learner asks to see
    the answer (``grading.reveal``); a wrong try never names which letters to drop. The options' texts are in
    the notebook, so the engine's choices carry the explanations only.
    """

    kind = "choice"
    FILLER = {
        "AND",
        "OR",
        "ANSWER",
        "ANSWERS",
        "IS",
        "ARE",
        "THE",
        "MY",
        "OPTION",
        "OPTIONS",
        "CHOICE",
        "CHOICES",
        "LETTER",
        "LETTERS",
    }  # "Answer: A and C", "my answer is B"

    def __init__(self, qid, title, letters, correct, hints=None, *, right=None, nudge="", **declared):
        Question.__init__(self, qid, title, **declared)
        letters, correct = letters.upper(), set(correct.upper())
        explanations = {**(hints or {}), **(right or {})}
        if letters != LETTERS[: len(letters)]:
            raise ValueError(f"{qid}: the options are lettered in order from A, not {letters!r}")
        stray = sorted((correct | set(explanations)) - set(letters))
        if stray:
            raise ValueError(f"{qid}: {', '.join(stray)} is not one of the options {letters}")
        try:
            ChoiceQuestion.__init__(
                self,
                title,
                [choices.Choice("", letter in correct, explanations.get(letter, "")) for letter in letters],
                nudge=nudge,
            )
        except ArgumentError as error:  # the bank's author reads it: name the question by its id
            raise ValueError(f"{qid}: {error.message}") from None

    @property
    def correct(self) -> frozenset[str]:
        return self.key

    def reference(self):
        return "".join(sorted(self.key))

    def judge(self, answer, runner=None):
        chosen, problem = self._letters(answer)
        if problem is None and chosen - set(self.letters):
            problem = self.judgement(chosen).message  # names the unknown letters
        if problem:  # no choice could be read: a typo costs no try
            return UNANSWERED, f"{problem} (Not counted as a try.)"
        verdict = self.judgement(chosen)
        return (CORRECT if verdict.correct else WRONG), verdict.message

    def _letters(self, answer):
        """The set of letters chosen, or a message. Words such as "Answer:" or "and" are skipped;
        any other word is refused as a whole rather than read letter by letter."""
        example = "'B'" if len(self.key) == 1 else "'AC'"
        if isinstance(answer, (list, tuple, set, frozenset)) and all(isinstance(a, str) for a in answer):
            answer = " ".join(answer)
        if not isinstance(answer, str):
            return None, f"give the letter(s) as a string, e.g. {example}; got {describe(answer)}."
        tokens = [t for t in re.split(r"[\s,;/+&()\[\].:=\-'\"]+", answer.upper()) if t and t not in self.FILLER]
        if not tokens:
            return None, f"no letter given: write e.g. {example}."
        chosen = set()
        for token in tokens:
            if not token.isalpha():
                return None, f"{token!r} is not an option letter; write e.g. {example}."
            if len(token) > 1 and not set(token) <= set(self.letters):
                return None, (
                    f"{token!r} is not a letter or a group of letters: write only the letters "
                    f"of your choice, e.g. {example} (the options are {', '.join(self.letters)})."
                )
            chosen |= set(token)
        return chosen, None


class Array(Question):
    """An array of numbers, compared element-wise with the expected one (``atol + rtol·|expected|``)."""

    kind = "array"

    def __init__(self, qid, title, expected, *, atol=1e-6, rtol=0.0, mistakes=(), **declared):
        super().__init__(qid, title, **declared)
        self.atol, self.rtol, self.mistakes = atol, rtol, mistakes
        self._want = np.asarray(_fixed(expected), dtype=np.float64)
        self._want.setflags(write=False)

    def reference(self):
        return self._want.copy()

    def tolerance(self) -> dict:
        return {"atol": self.atol, "rtol": self.rtol, "dtype": None, "integer": False}

    def requirement(self) -> str:
        return (
            f"**Accepted:** an array of shape `{self._want.shape}`, each element "
            f"{within_markdown(self.atol, self.rtol)}."
        )

    def _hit(self, value) -> bool:
        """Is ``value`` within the tolerance of the right answer?"""
        want = self._want
        return value.shape == want.shape and bool(np.all(np.abs(value - want) <= self.atol + self.rtol * np.abs(want)))

    def judge(self, answer, runner=None):
        want = self._want
        got, problem = as_array(answer)
        if problem:
            return WRONG, problem
        if got.shape != want.shape:
            return WRONG, f"expected an array of shape {want.shape}, got shape {got.shape}."
        if np.isnan(got).any():
            return WRONG, f"element {index_text(np.argwhere(np.isnan(got))[0])} is NaN."
        bad = np.abs(got - want) > self.atol + self.rtol * np.abs(want)
        if not bad.any():
            return CORRECT, ""
        for other, hint in _mistake_values(self, lambda v: np.asarray(v, dtype=np.float64), self._hit):
            if other.shape == got.shape and np.allclose(got, other, rtol=self.rtol, atol=self.atol):
                return WRONG, hint
        where = np.argwhere(bad)[0]
        high = got[tuple(where)] > want[tuple(where)]
        # the largest error against the tolerance, its size said by its power of ten only (relative to the right
        # value when the tolerance is): more would let a learner compute the element instead of their answer
        relative = self.rtol and not self.atol
        error = np.abs(got - want) / (np.abs(want) if relative else 1.0)
        worst = np.unravel_index(np.argmax(np.where(bad, error, -1.0)), want.shape)
        size = decade_text(float(error[worst]), percent=relative)
        n = int(bad.sum())
        said = (
            f"1 of {bad.size} elements is wrong: element {index_text(where)} is too {'high' if high else 'low'}, "
            f"by {size}{' of the right value' if relative else ''}."
            if n == 1
            else f"{n} of {bad.size} elements are wrong; the first is element {index_text(where)} (too "
            f"{'high' if high else 'low'}); the largest error, at element {index_text(worst)}, is {size}"
            f"{' of the right value' if relative else ''}."
        )
        if error[worst] > 1e-2 * (1.0 if relative else max(1.0, np.abs(want).max())):
            return WRONG, f"{said} Each element must be {tolerance_text(self.rtol, self.atol)}."
        return WRONG, (
            f"{said} Close, but each element must be {tolerance_text(self.rtol, self.atol)}: give more decimals "
            "(compute the values instead of typing them)."
        )


@dataclass
class Case:
    """One set of test inputs for a Function question."""

    args: tuple
    label: str  # how the message names these inputs
    raises: type | None = None  # the call must raise this exception type
    note: str = ""  # added to the message if the learner's code raises here


class Function(Question):
    """A function (or class) written by the learner, run on many random inputs.

    Everything the question accepts is declared here, once: ``returns`` (what
    the question's text says the function returns, e.g. "numpy array of shape
    `(n, d_model)`", without an article), the tolerance ``atol`` and ``rtol``
    and the ``dtype`` insisted on (None: any real dtype). The question's
    "Accepted" line is written from them (``requirement``),
    and so is its checker: each case's output must equal ``expected(*args)``
    within ``atol``, unless a ``verify(out, case, *, atol, rtol, dtype)`` of
    the question's own is given (it receives the declared tolerance).

    ``cases(rng)`` lists the inputs; ``call(f, *args)`` runs the learner's
    code (default ``f(*args)``); ``mistakes`` are (mistake, hint) pairs consulted
    when the check fails, to name a known bug: a ``feedback.Model`` (what code
    with the bug returns), named only where it explains the failure, or (where
    no model can be computed from the case's inputs) a predicate(out, case)
    that checks as much itself. ``own_code``:
    the question asks the learner to write the formula, so a function that
    calls the ``posenc`` function the reference calls is wrong even when its
    values are right.

    Every case runs, in a worker that ``grading.runner`` can stop for real, and
    each output is verified there; "correct" means every case ran and passed.
    """

    kind = "function"

    def __init__(
        self,
        qid,
        title,
        reference,
        cases,
        *,
        returns,
        expected=None,
        verify=None,
        atol=0.0,
        rtol=0.0,
        dtype=None,
        call=None,
        mistakes=(),
        own_code=False,
        limit=LIMIT,
        **declared,
    ):
        super().__init__(qid, title, **declared)
        if (expected is None) == (verify is None):
            raise ValueError(f"{qid}: give exactly one of expected (the exact value of a case) and verify")
        if verify is None and rtol:
            raise ValueError(f"{qid}: the array check takes an absolute tolerance only; give verify for rtol")
        self.returns, self.atol, self.rtol = returns, atol, rtol
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.limit = limit
        self._reference, self.cases, self.mistakes = reference, cases, mistakes
        self._expected, self._verify = expected, verify
        self.call = call or (lambda f, *args: f(*args))
        self.own_code = own_code

    def verify(self, out, case):
        """A message for what is wrong with ``out``, the output for ``case``, or None."""
        if self._verify is not None:
            return self._verify(out, case, atol=self.atol, rtol=self.rtol, dtype=self.dtype)
        want = np.asarray(self._expected(*case.args), dtype=np.float64)
        return verify_array(out, want, dtype=self.dtype, atol=self.atol)

    def reference(self):
        return self._reference

    def tolerance(self) -> dict:
        return {"atol": self.atol, "rtol": self.rtol, "dtype": self.dtype, "integer": False}

    def requirement(self) -> str:
        returns = self.returns if self.dtype is None else f"{self.dtype.name} {self.returns}"
        precision = " (float64 precision: float32 is not enough)" if 0 < self.atol < 1e-7 else ""
        n = len(self.cases(np.random.default_rng(0)))
        return (
            f"**Accepted:** a {returns}, each element {within_markdown(self.atol, self.rtol)}{precision}; "
            f"all {n} test inputs within {self.limit:g} s in total."
        )

    def judge(self, f, runner=None):
        """``runner``: where the learner's code runs (a grader's ``runner``; required)."""
        if runner is None:
            raise TypeError(f"{self.qid}: a function question runs the learner's code in a grader's runner; none given")
        if isinstance(f, type) and issubclass(f, nn.Module) and f.forward is nn.Module.forward:
            return UNANSWERED, f"the class {f.__name__} has no forward method yet."
        if isinstance(self._reference, type) and isinstance(f, nn.Module):
            name = type(f).__name__
            return WRONG, (
                f"you passed an instance of your layer, {name}(...); pass the class itself, "
                f"check({self.qid!r}, {name}): the grader builds its own layers from it."
            )
        if not callable(f):
            return WRONG, f"expected a function, got {describe(f)}."
        cases = self.cases(np.random.default_rng(seed_for(self.qid)))
        limit = runner.limit(self.limit)
        lines = learner_lines(f)  # read here: a spawned worker has no copy of the kernel's notebook cells
        outcome = runner.run(lambda report: self._run_cases(f, cases, report, lines), limit)
        if outcome.printed:  # the learner's own prints, sent back by the worker
            print(outcome.printed, end="" if outcome.printed.endswith("\n") else "\n")
        if outcome.unsent:
            return WRONG, (
                "your function could not be sent to the worker process that runs it "
                f"({_short_text(outcome.unsent)}): define it, and what it uses, in the notebook or in an "
                "importable module, without open files, locks or generators."
            )
        if outcome.result is None and not outcome.started:  # the grader's failure: the job never reached a worker
            return UNCHECKABLE, "the worker process that runs your function could not start"
        if outcome.timed_out:
            return WRONG, (
                f"too slow: {outcome.done} of {len(cases)} test inputs finished within {limit:g} s "
                "(an endless loop, or a loop that could be vectorised?)."
            )
        if outcome.result is None:
            label = cases[min(outcome.done, len(cases) - 1)].label
            return WRONG, f"the process running your function stopped for {label}: {outcome.died}."
        status, message = outcome.result
        if status == CORRECT and self.own_code and f is not self._reference:
            called = sorted(_posenc_calls(f) & (_posenc_calls(self._reference) or _posenc_public()))
            if called:
                return WRONG, (
                    "this question asks you to write the formula yourself; your function calls "
                    + " and ".join(f"posenc.{name}" for name in called)
                    + "."
                )
        return status, message

    def _run_cases(self, f, cases, report, lines=None):
        """(status, message) after running ``f`` on every case; runs in the worker, calls report() per case.
        ``lines``: the lines of the learner's code, read in the kernel (``feedback.learner_lines``)."""
        first_none = None  # the first case for which f returned None
        for case in cases:
            given = copy.deepcopy(case.args)
            try:
                out, exc = self.call(f, *given), None
            except BaseException as error:  # SystemExit and friends are answers too
                out, exc = None, error
            if first_none is not None and (exc is not None or out is not None):
                return WRONG, (
                    f"your function returned None for {first_none.label} (is a return missing in one branch?)."
                )
            try:
                problem = self._problem(case, given, out, exc, lines)
            except Exception as error:  # an output whose own methods raise or lie; the grader's bug otherwise
                if is_ordinary(out):
                    raise
                return WRONG, (
                    f"the grader could not inspect what your function returned for {case.label} "
                    f"({type(error).__name__}: {short_error(error)}); return a plain array or tensor."
                )
            if problem:
                return WRONG, problem
            if exc is None and out is None and first_none is None:
                first_none = case
            report()
        if first_none is not None:
            return UNANSWERED, "your function returns None (no code yet, or a missing return)."
        return CORRECT, f"on all {len(cases)} random test inputs."

    def _problem(self, case, given, out, exc, lines=None):
        """What is wrong with one run (output ``out`` or exception ``exc``), or None."""
        where = f"for {case.label}"
        if exc is not None and not (case.raises and isinstance(exc, case.raises)):
            expected = f"; a {case.raises.__name__} was expected here" if case.raises else ""
            note = f" ({case.note})" if case.note else ""
            text = _exception_text(exc)
            return f"your code raised {type(exc).__name__}{': ' + text if text else ''} {where}{expected}{note}" + (
                raised_at(exc, lines) or "."
            )
        if not same_value(given, case.args):
            return f"your code changed its input {where}. Do not modify the arguments (e.g. write x + pe, not x += pe)."
        if exc is not None or out is None:  # the expected exception; or None, judged over all cases
            return None
        if case.raises:
            return (
                f"{where} your code should raise {case.raises.__name__} ({case.note}), but it returned {describe(out)}."
            )
        if isinstance(out, np.ndarray):  # compared as a plain array: a subclass's comparisons could lie
            out, problem = plain_value(out)
            if problem:
                return f"{where}: {problem}"
        problem = self.verify(out, case)
        if problem:
            hint = next((hint for mistake, hint in self.mistakes if self.explains(mistake, out, case)), None)
            return f"{where}: {problem}" + (f" Hint: {hint}" if hint else "")
        return None

    def explains(self, mistake, out, case) -> bool:
        """Does ``mistake`` explain ``out``, a wrong output for ``case``? A ``Model`` does where its own output is
        wrong for these inputs (beyond the tolerance: a mistake that changes nothing here cannot be why the answer
        failed) and the learner's output is within the tolerance of it (or shows its ``signature``)."""
        if not isinstance(mistake, Model):
            return safely(mistake, out, case)
        try:
            made = mistake.make(*copy.deepcopy(case.args))
            if made is None:
                return False
            made = np.asarray(made)
            if self.verify(made if self.dtype is None else made.astype(self.dtype), case) is None:
                return False  # the mistake gives the right answer here
            if mistake.signature is not None:
                return bool(mistake.signature(out, case))
            made = made.astype(np.float64)
            return (
                isinstance(out, np.ndarray)
                and out.dtype.kind in "fiu"
                and out.shape == made.shape
                and bool(np.all(np.abs(out.astype(np.float64) - made) <= self.atol + self.rtol * np.abs(made)))
            )
        except Exception:  # a model that does not apply to these inputs, or an output it cannot be compared with
            return False


def _short_text(text, limit=160) -> str:
    text = (text.strip().splitlines() or [""])[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception_text(exc) -> str:
    try:
        return short_error(exc)
    except Exception:  # an exception whose str() fails
        return "(no message)"


def _posenc_calls(f) -> set[str]:
    """Names of the ``posenc`` functions that ``f`` refers to.

    Reads the code objects of ``f`` (nested functions and lambdas included), the
    names they use and what those names are bound to in its globals and closure
    (``posenc.sinusoidal``, ``import posenc as pe; pe.sinusoidal``, ``from posenc
    import sinusoidal``); helper functions of the same module (a notebook's other
    functions) or closure are read the same way. Runs none of the learner's code.
    """
    found, seen, todo = set(), set(), [f]
    home = getattr(f, "__globals__", None)
    while todo:
        obj = todo.pop()
        obj = obj.__func__ if isinstance(obj, types.MethodType) else obj
        if not isinstance(obj, (types.FunctionType, type)) or id(obj) in seen:
            continue  # only plain functions and classes: reading them cannot run learner code
        seen.add(id(obj))
        if obj.__module__ in _POSENC_NAMES:
            found.add(obj.__name__)
        if obj.__module__ in _POSENC_NAMES or isinstance(obj, type):
            continue
        names = set().union(*(c.co_names for c in code_objects(obj.__code__)))
        glb = obj.__globals__
        cells = [c.cell_contents for c in (obj.__closure__ or ()) if is_filled(c)]
        bound = [glb[n] for n in names if n in glb] + cells
        # posenc.sinusoidal, pe.sinusoidal: the attribute names
        if any(b is posenc or b is reference.posenc for b in bound):
            found |= {n for n in names if not n.startswith("_") and callable(getattr(posenc, n, None))}
        todo += cells + [
            b
            for b in bound
            if isinstance(b, types.FunctionType) and (b.__module__ in _POSENC_NAMES or b.__globals__ is home)
        ]
    return found


# the module the notebook imports, and the grader's private copy that the bank's references call
_POSENC_NAMES = {"posenc", reference.posenc.__name__}


def _posenc_public() -> set[str]:
    return {name for name in posenc.__all__ if callable(getattr(posenc, name))}
