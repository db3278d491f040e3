"""The question bank says what it grades, and grades what it says.

Every question's text in solutions/ and exercises/ carries the sentence
``requirement(question)`` ("**Accepted:** ... within ... of the exact value"),
derived from the grader's own parameters; the grader accepts answers just
inside that tolerance and rejects answers just outside it, in the stated dtype
only. The test inputs cover what the texts promise, and the hints of 07.7 say
the right numbers.
"""

import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

import make_exercises
import posenc
from grading import QUESTIONS, check
from grading.bank.common import STATED, requirement, tolerance
from grading_tries import own_code_answer
from support.grading_session import fresh_progress  # noqa: F401  (an autouse fixture)

ROOT = Path(__file__).resolve().parent.parent
NON_CHOICE = [q for q, question in QUESTIONS.items() if question.kind != "choice"]
FUNCTIONS = [q for q, question in QUESTIONS.items() if question.kind == "function"]


def verdict(qid, answer, capsys):
    ok = check(qid, answer)
    return bool(ok), capsys.readouterr().out


# --------------------------------------------------------------------------
# The text states the tolerance, dtype and shape the grader uses
# --------------------------------------------------------------------------

def question_text(folder, qid):
    """The markdown a learner reads for ``qid``: from its "## Question" heading to its check cell,
    without solution regions, whitespace collapsed."""
    path = next((ROOT / folder).glob(f"{qid[:2]}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    start = next(n for n, c in enumerate(cells) if c.cell_type == "markdown"
                 and c.source.startswith(f"## Question {qid}"))
    end = next(n for n, c in enumerate(cells) if c.cell_type == "code" and f'check("{qid}"' in c.source)
    assert start < end, qid
    text = "\n".join(make_exercises.strip_markdown(c.source) for c in cells[start:end] if c.cell_type == "markdown")
    return " ".join(text.split())


@pytest.mark.parametrize("folder", ["solutions", "exercises"])
@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_the_text_states_what_the_grader_accepts(qid, folder):
    text, question = question_text(folder, qid), QUESTIONS[qid]
    if question.kind == "choice":
        single = len(question.correct) == 1
        assert bool(re.search(r"Choose (one|the one true statement)\.", text)) == single, text
        assert single or "Choose all that apply." in text or ("Choose two." in text and len(question.correct) == 2)
        return
    line = requirement(question)
    assert line.startswith("**Accepted:** ")
    assert line in text, f"{qid}: the text lacks\n  {line}\n{text}"
    # no other tolerance anywhere in the question that could contradict the stated one
    stated = re.findall(r"within (\$[^$]+\$|[\d.]+ %)", line)
    assert set(re.findall(r"within (\$[^$]+\$|[\d.]+ %)", text)) <= set(stated), text


def test_every_function_question_states_its_verifier():
    assert sorted(STATED) == sorted(FUNCTIONS)


def test_the_dtype_named_in_a_function_question_is_the_one_enforced():
    """A question whose requirement names a dtype must insist on it (02.6 used to accept float32)."""
    named = {q: STATED[q]["dtype"] for q in FUNCTIONS if STATED[q]["dtype"] is not None}
    assert named == {"02.6": np.float64, "03.7": np.float32, "05.7": np.float32, "06.4": np.float16}


# --------------------------------------------------------------------------
# ... and the grader accepts just inside that tolerance, and rejects just outside
# --------------------------------------------------------------------------

NUMERIC = [q for q in NON_CHOICE if QUESTIONS[q].kind == "numeric"]
ARRAYS = [q for q in NON_CHOICE if QUESTIONS[q].kind == "array"]


@pytest.mark.parametrize("qid", NUMERIC)
def test_numeric_tolerance_is_the_stated_one(qid, capsys):
    want, tol = float(QUESTIONS[qid].reference()), tolerance(QUESTIONS[qid])
    if tol["integer"]:
        inside, outside = [int(want), float(want)], [want + 1, want - 1, want + 0.5]
    else:
        r = tol["rtol"]
        inside, outside = [want * (1 + r / 2), want * (1 - r / 2)], [want * (1 + 2 * r), want * (1 - 2 * r)]
    for answer in inside:
        ok, out = verdict(qid, answer, capsys)
        assert ok, out
    for answer in outside:
        ok, out = verdict(qid, answer, capsys)
        assert not ok, f"{answer!r} accepted: {out}"


def _allowed(want, tol):
    return tol["atol"] + tol["rtol"] * np.abs(want)


@pytest.mark.parametrize("qid", ARRAYS)
def test_array_tolerance_is_the_stated_one(qid, capsys):
    want = np.asarray(QUESTIONS[qid].reference(), dtype=np.float64)
    allowed = _allowed(want, tolerance(QUESTIONS[qid]))
    signs = np.where(np.arange(want.size).reshape(want.shape) % 2, -1.0, 1.0)
    ok, out = verdict(qid, want + 0.5 * signs * allowed, capsys)
    assert ok, out
    for index in np.ndindex(want.shape):  # one element just outside, wherever it is
        answer = want.copy()
        answer[index] += 2 * allowed[index] + 1e-12
        ok, out = verdict(qid, answer, capsys)
        assert not ok, f"element {index} off by twice the tolerance was accepted: {out}"


def _perturbed(qid, change):
    """A learner's function: a correct answer (own code where the question asks for it), with ``change(out)``
    applied to each result."""
    reference = own_code_answer(qid)
    if qid == "05.7":  # a class: perturb what forward returns
        class Perturbed(reference):
            def forward(self, tokens):
                return torch.from_numpy(change(super().forward(tokens).numpy()))
        return Perturbed

    def answer(*args, **kwargs):
        return change(np.asarray(reference(*args, **kwargs)))
    return answer


def _shift(delta, where=None):
    """Add ``delta`` (a function of the exact values) to every element, or to element [0, ...] only."""
    def change(out):
        exact = out.astype(np.float64)
        moved = exact + (delta(exact) if where is None else 0)
        if where is not None:
            moved.flat[0] += delta(exact).flat[0]
        return moved.astype(out.dtype)
    return change


@pytest.mark.parametrize("qid", FUNCTIONS)
def test_function_tolerance_and_dtype_are_the_stated_ones(qid, capsys):
    tol = tolerance(QUESTIONS[qid])
    dtype = tol["dtype"] or np.dtype(np.float64)
    eps = np.finfo(dtype).eps
    ok, out = verdict(qid, own_code_answer(qid), capsys)
    assert ok, out
    if tol["atol"] > 4 * eps:  # room to move inside the tolerance after rounding to the dtype
        ok, out = verdict(qid, _perturbed(qid, _shift(lambda v: 0.4 * _allowed(v, tol))), capsys)
        assert ok, out
    if tol["atol"] or tol["rtol"]:
        outside = _shift(lambda v: 3 * _allowed(v, tol) + 2 * eps * np.maximum(1, np.abs(v)), where=0)
    else:  # exact: the next representable number is already wrong
        def outside(out):
            out = out.copy()
            out.flat[0] = np.nextafter(out.flat[0], np.inf)
            return out
    ok, out = verdict(qid, _perturbed(qid, outside), capsys)
    assert not ok, f"one element just outside the tolerance was accepted: {out}"
    if tol["dtype"] is not None:  # the stated dtype and no other, even when the values are closer
        other = np.float32 if dtype == np.float64 else np.float64
        ok, out = verdict(qid, _perturbed(qid, lambda out: out.astype(other)), capsys)
        assert not ok and dtype.name in out, out  # the message names the dtype asked for
    elif 0 < tol["atol"] < 1e-7:  # "float64 precision: float32 is not enough"
        ok, out = verdict(qid, _perturbed(qid, lambda out: out.astype(np.float32)), capsys)
        assert not ok, out


def test_0206_wants_float64_and_says_why(capsys):
    accurate_float32 = lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout=layout, dtype=np.float32)  # noqa: E731
    ok, out = verdict("02.6", accurate_float32, capsys)
    assert not ok and "float64" in out and "float32" in out, out


# --------------------------------------------------------------------------
# The test inputs cover what the texts promise
# --------------------------------------------------------------------------

def cases(qid, seed=0):
    return QUESTIONS[qid].cases(np.random.default_rng(seed))


@pytest.mark.parametrize("seed", [0, 1])
def test_0103_any_n_includes_inputs_far_beyond_512_rows(seed):
    lengths = [case.args[0].shape[0] for case in cases("01.3", seed)]
    assert sum(n > 512 for n in lengths) >= 3 and max(lengths) >= 5000
    assert min(lengths) < 300


def test_0103_a_table_capped_at_512_rows_fails(capsys):
    def add_positions(x):  # a table of max_len = 512 rows built in advance: right up to 512 tokens
        table = posenc.sinusoidal(512, x.shape[1])
        return x + table[: x.shape[0]]

    assert np.array_equal(add_positions(np.zeros((512, 8))), posenc.sinusoidal(512, 8))

    ok, out = verdict("01.3", add_positions, capsys)
    assert not ok and "600" in out, out


def test_0103_check_stays_fast(capsys):
    import time
    start = time.perf_counter()
    ok, out = verdict("01.3", QUESTIONS["01.3"].reference(), capsys)
    assert ok, out
    assert time.perf_counter() - start < 2.0


def test_0205_any_base_above_one_includes_bases_near_one_and_huge_ones():
    bases = [case.args[1] for case in cases("02.5")]
    assert min(bases) < 1.01 and max(bases) >= 1e9


# --------------------------------------------------------------------------
# 07.7: each hint comes from its own mistake, and its numbers are right
# --------------------------------------------------------------------------

RIGHT_SLOPE = posenc.alibi_slopes(4)[1]  # head 2 of 4
ROW = posenc.alibi_bias(4, 6)[1, 5]
MISTAKES_0707 = [  # (a learner's wrong answer, computed as the learner would, and words of its hint)
    (-ROW, "the sign is wrong"),
    (ROW[::-1], "reverse order"),
    (posenc.alibi_bias(4, 6)[2, 5], "that is head 3"),                        # heads counted from 0
    (posenc.alibi_bias(4, 6)[0, 5], "belongs to head 1 of 4 heads"),          # head 1
    (-(2.0 ** -2) * (5 - np.arange(6)), "the rule for 8 heads, at h = 2"),    # 2^(-h), the 8-head rule
    (posenc.alibi_bias(8, 6)[1, 5], "the rule for 8 heads, at h = 2"),        # head 2 of an 8-head model
    (posenc.alibi_bias(4, 6)[3, 5], "that is head 4"),
    (-(5.0 - np.arange(6)), "the slope is missing"),
]
HINTS_0707 = [hint for _, hint in QUESTIONS["07.7"].mistakes]


@pytest.mark.parametrize("n", range(len(MISTAKES_0707)))
def test_0707_each_mistake_gets_exactly_its_own_hint(n, capsys):
    answer, words = MISTAKES_0707[n]
    ok, out = verdict("07.7", answer, capsys)
    assert not ok
    given = [hint for hint in HINTS_0707 if hint in out]
    assert len(given) == 1 and words in given[0] and out == f"07.7 ✗ {given[0]}\n", out


def test_0707_every_hint_is_reachable():
    reached = set()
    for answer, _ in MISTAKES_0707:
        reached |= {hint for hint in HINTS_0707 if np.allclose(answer, _hint_value(hint), atol=1e-6)}
    assert reached == set(HINTS_0707)


def _hint_value(hint):
    return next(value() for value, h in QUESTIONS["07.7"].mistakes if h == hint)


def _power(expression):
    """The value of "2^(-8·3/4)" or "2^(-6)" as written in a hint."""
    return 2.0 ** eval(expression.replace("·", "*"), {})  # eval of our own hint text


@pytest.mark.parametrize("hint", HINTS_0707, ids=range(len(HINTS_0707)))
def test_0707_the_numbers_in_each_hint_are_right(hint):
    wrong = np.asarray(_hint_value(hint))
    used = -wrong[0] / 5  # the slope the mistaken row was built with (key 0 is 5 positions back)
    powers = [_power(e) for e in re.findall(r"2\^\(([-\d·/ ]+)\)", hint)]
    for value in powers:  # every power of two named is the slope used, never the right one
        assert math.isclose(value, used) and not math.isclose(value, RIGHT_SLOPE), (hint, value)
    for h, n in re.findall(r"head (\d+)(?: of (\d+) heads)?", hint):  # "head 3" is head 3 of 4 heads
        slope = posenc.alibi_slopes(int(n or 4))[int(h) - 1]
        assert math.isclose(slope, used) or (h == "2" and not n), (hint, h, n)  # or the head asked for
    for h in re.findall(r"the rule for 8 heads, at h = (\d+)", hint):
        assert math.isclose(posenc.alibi_slopes(8)[int(h) - 1], used)
    if re.search(r"slope|head", hint):  # a hint about the slope names the one the learner used
        assert any(math.isclose(p, used) for p in powers) or (used == 1 and "m = 1" in hint), hint
