"""The grader's feedback: expected values out of the
notebook's reach, numeric feedback that does not give the answer away, every real dtype
read and complex values refused, messages that are right and specific, chapter
arguments normalised. Each test starts from an input a learner may well give."""

import copy
import itertools
import linecache
import math
import os
import re
import zlib
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
import torch

import grading
import posenc
from grading import QUESTIONS, check, feedback as feedback_module, runner
from grading.feedback import Model, verify_array
from grading.kinds import CORRECT, WRONG, Array, Numeric
from tests.support.grading_session import feedback
from tools.grading_battery import LyingArray  # the battery's lying subclass: one definition

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

NUMERIC = [q for q, question in QUESTIONS.items() if question.kind == "numeric"]


def own_frequencies(d_model, base=10000.0):
    """A correct answer to 02.5 that does not call posenc."""
    return base ** (-2.0 * np.arange((d_model + 1) // 2) / d_model)


def fake_frequencies(d_model, base=10000.0):
    return np.full((d_model + 1) // 2, 0.5)


# --------------------------------------------------------------------------
# Expected values cannot be changed from the notebook
# --------------------------------------------------------------------------


def test_the_bank_computes_with_its_own_copy_of_posenc():
    from grading.reference import posenc as private

    assert private is not posenc and private.__file__ == posenc.__file__
    assert private.frequencies is not posenc.frequencies
    assert private._engine is not posenc._engine and private._checks is not posenc._checks  # its own private modules


def test_patching_posenc_makes_no_wrong_answer_right_and_no_right_answer_wrong(monkeypatch, capsys):
    right_row = posenc.sinusoidal([4], 6)[0]
    # every frequency 0.5 (turns per position 0.5 / 2 pi, as the split hi + lo = 0 + f)
    monkeypatch.setattr(
        posenc._engine, "turns", lambda d, base: ((0.0,) * ((d + 1) // 2), (0.25 / np.pi,) * ((d + 1) // 2))
    )
    patched_row = posenc.sinusoidal([4], 6)[0]
    # a patched helper of the engine reaches posenc.sinusoidal: references to the functions would not help
    assert not np.allclose(patched_row, right_row)
    monkeypatch.setattr(posenc, "frequencies", fake_frequencies)

    for qid, right, wrong in [
        ("02.3", 0.01, posenc.frequencies(512)[128]),
        ("02.2", right_row, patched_row),
        ("02.5", own_frequencies, lambda d, base=10000.0: posenc.frequencies(d, base)),
    ]:
        verdict, out = feedback(capsys, qid, right)
        assert verdict, out
        verdict, out = feedback(capsys, qid, wrong)
        assert not verdict and "✗" in out, out

    monkeypatch.setattr(posenc, "sinusoidal", lambda positions, d_model, *a, **k: np.zeros((len(positions), d_model)))
    assert feedback(capsys, "02.2", right_row)[0]
    assert not feedback(capsys, "02.2", np.zeros(6))[0]


def test_patching_posenc_from_inside_the_learners_function_changes_nothing(monkeypatch, capsys):
    monkeypatch.setattr(posenc, "frequencies", posenc.frequencies)  # restored after the test, whatever happens

    def sneaky(d_model, base=10000.0):
        posenc.frequencies = fake_frequencies
        return fake_frequencies(d_model, base)

    verdict, out = feedback(capsys, "02.5", sneaky)
    assert not verdict, out
    assert feedback(capsys, "02.5", own_frequencies)[0]
    assert feedback(capsys, "02.3", 0.01)[0]
    assert not feedback(capsys, "02.3", 0.5)[0]


def test_checking_an_answer_leaves_the_learners_random_numbers_alone():
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    for qid, answer in [("05.3", 475), ("05.4", 0), ("05.3", 476)]:
        check(qid, answer)
    assert torch.equal(torch.rand(3), expected)


# --------------------------------------------------------------------------
# Numeric feedback says direction and rough size, never the answer
# --------------------------------------------------------------------------

NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def numbers_in(message):
    return [float(n) for n in NUMBER.findall(message)]


def readings(x, n):
    """What a learner could compute from their guess ``x`` and a number ``n`` in the message:
    ``n`` read as a ratio, a difference or a percentage."""
    values = [x * n, x + n, x - n] + ([x / n] if n else [])
    values += [x / (1 + s * n / 100) for s in (1, -1) if n != s * -100]
    return [v for v in values if math.isfinite(v)]


def solves(question, value) -> bool:
    want = float(question.reference())
    return value == want if question.integer else math.isclose(value, want, rel_tol=question.rtol)


def wrong_answers(question):
    want = float(question.reference())
    answers = [want * f for f in (3.7, 1e4, 0.02, 1.05, 0.93, 1.4, 0.6, 25, -1, -3.7)]
    if question.integer:
        answers += [want + 1, want - 1, round(want * 1.4)]
    return answers


@pytest.mark.parametrize("qid", NUMERIC)
def test_no_numeric_message_holds_a_number_to_compute_the_answer_from(qid):
    question = QUESTIONS[qid]
    for x in wrong_answers(question):
        status, message = question.judge(x)
        assert status == WRONG, (x, message)
        assert "times the right value" not in message and "0.0%" not in message, message
        leaks = [(n, v) for n in numbers_in(message) for v in readings(x, n) if solves(question, v)]
        assert not leaks, f"{qid}: {x!r} → {message!r} gives the answer via {leaks}"


def leaky_how_far(x, want, *_, **__):
    """Leaky numeric feedback: a ratio to three digits, or a percentage, enough to home in on the answer."""
    if want != 0 and x != 0 and (x > 0) != (want > 0):
        return "the sign is wrong."
    ratio = x / want
    size = f"about {ratio:.3g} times the right value" if ratio > 1.5 or ratio < 0.67 else f"by {abs(ratio - 1):.1%}"
    return f"too {'high' if x > want else 'low'} ({size})."


def blind_attack(question, start, guesses=3, width=400):
    """Can a learner who knows nothing hit the answer in ``guesses`` tries, each worked out from the
    numbers in the previous message (read as a ratio, a difference or a percentage, rounded for a
    whole-number question)? Every reading is tried, so this is an upper bound for such a learner.

    Only numbers that depend on the answer count: those absent from the message the same guess
    gets when the right answer moves by 1% (by 1 for a whole number). Fixed wording ("a factor
    between 2 and 10") and the learner's own value echoed back carry nothing about the answer.
    """
    moved = question.reference() + 1 if question.integer else float(question.reference()) * 1.01
    decoy = Numeric(
        question.qid,
        question.title,
        lambda: moved,
        rtol=question.rtol,
        integer=question.integer,
        mistakes=question.mistakes,
    )
    tries = [start]
    for _ in range(guesses):
        following = []
        for x in tries:
            status, message = question.judge(x)
            if status == CORRECT:
                return True
            informative = Counter(numbers_in(message)) - Counter(numbers_in(decoy.judge(x)[1]))
            for value in sorted({v for n in informative for v in readings(x, n)}):
                following += [value, float(round(value))] if question.integer else [value]
        tries = following[:width]
    return False


def solved_by_blind_guessing():
    return [qid for qid in NUMERIC if any(blind_attack(QUESTIONS[qid], start) for start in (1.0, 1e-3, 1e3))]


def test_blind_guessing_from_the_feedback_solves_no_numeric_question(monkeypatch):
    assert NUMERIC and set(NUMERIC) == {q for q, question in QUESTIONS.items() if isinstance(question, Numeric)}
    assert solved_by_blind_guessing() == []
    monkeypatch.setattr(grading.kinds, "how_far", leaky_how_far)  # the same attack against leaky wording
    assert len(solved_by_blind_guessing()) >= 13


@pytest.mark.parametrize(
    "x,words",
    [
        (0.2, "too high, by more than a factor of 10"),
        (0.05, "too high, by a factor between 2 and 10"),
        (0.015, "too high, by less than a factor of 2"),
        (0.0103, "too high, but close: within 10%; it must be within 0.1% of the right value"),
        (0.0097, "too low, but close"),
        (0.002, "too low, by a factor between 2 and 10"),
        (-0.01, "the sign is wrong (the size is right)"),
        (-0.5, "the sign is wrong."),
    ],
)
def test_numeric_feedback_words(x, words, capsys):
    verdict, out = feedback(capsys, "02.3", x)
    assert not verdict and words in out, out


def test_named_mistakes_are_kept_and_said_only_when_undoing_them_gives_the_answer(capsys):
    want = QUESTIONS["04.5"].reference()
    assert "factor of 2" in feedback(capsys, "04.5", 2 * want)[1]
    assert "factor of 2" in feedback(capsys, "04.5", want / 2)[1]
    assert "square of the right value" in feedback(capsys, "04.5", want**2)[1]
    out = feedback(capsys, "04.5", 2.02 * want)[1]  # 1% away from twice the answer: no hint
    assert "factor of 2" not in out and "by a factor between 2 and 10" in out, out
    assert "factor of 2" in feedback(capsys, "06.1", 2 * 257)[1]
    assert "factor of 2" not in feedback(capsys, "06.1", 2 * 257 + 2)[1]
    assert "off by one" in feedback(capsys, "05.3", 475)[1]


# --------------------------------------------------------------------------
# Every real dtype is read; complex input is refused
# --------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
    "qid,answer",
    [
        ("10.10", torch.tensor(0.25, dtype=torch.bfloat16)),
        ("10.10", torch.tensor([0.25], dtype=torch.float16)),
        ("10.10", np.float16(0.25)),
        ("10.10", np.array([[0.25]], dtype=np.float16)),
        ("10.10", np.longdouble(0.25)),
        ("05.3", np.int16(476)),
        ("05.3", np.uint16(476)),
        ("05.3", torch.tensor(476, dtype=torch.int32)),
        ("05.3", np.float16(476)),
        ("05.3", torch.tensor(476.0, dtype=torch.float16)),
        ("09.2", torch.tensor(QUESTIONS["09.2"].reference(), dtype=torch.bfloat16)),
        ("09.2", torch.tensor(QUESTIONS["09.2"].reference(), dtype=torch.float16)),
        ("09.2", QUESTIONS["09.2"].reference().astype(np.float16)),
        ("09.2", QUESTIONS["09.2"].reference().astype(np.float32).tolist()),
        ("04.1", torch.from_numpy(QUESTIONS["04.1"].reference()).float()),
    ],
)
def test_every_real_dtype_is_read(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert verdict, out


@pytest.mark.filterwarnings("error")  # a ComplexWarning would fail the test
@pytest.mark.parametrize(
    "qid,answer",
    [
        ("02.2", QUESTIONS["02.2"].reference() + 1e-3j),
        ("02.2", QUESTIONS["02.2"].reference().astype(np.complex64)),
        ("02.2", list(QUESTIONS["02.2"].reference() + 0j)),
        ("02.2", torch.tensor(QUESTIONS["02.2"].reference() + 0.5j)),
        ("02.2", np.array(list(QUESTIONS["02.2"].reference() + 0j), dtype=object)),
        ("02.3", 0.01 + 0j),
        ("02.3", np.complex128(0.01)),
        ("02.3", torch.tensor(0.01 + 0j)),
        ("02.3", [0.01 + 1e-9j]),
    ],
)
def test_complex_input_is_refused_with_a_message(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert not verdict and "complex" in out and "could not check" not in out, out


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(
    "qid,answer,words",
    [
        (
            "02.5",
            lambda d, base=10000.0: torch.from_numpy(own_frequencies(d, base)).to(torch.bfloat16),
            "torch tensor of dtype torch.bfloat16; return a numpy array (.float().numpy()",
        ),
        (
            "02.5",
            lambda d, base=10000.0: torch.from_numpy(own_frequencies(d, base)).half(),
            "torch tensor of dtype torch.float16",
        ),
        ("02.5", lambda d, base=10000.0: own_frequencies(d, base).astype(np.float16), "right to float16 precision"),
        ("02.5", lambda d, base=10000.0: own_frequencies(d, base) + 0j, "complex"),
        (
            "08.2",
            lambda x, p, layout="interleaved": posenc.apply_rope(x[None], [p], layout=layout)[0].astype(np.complex128),
            "complex",
        ),
    ],
)
def test_function_outputs_of_any_dtype_get_a_message(qid, answer, words, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert not verdict and words in out and "could not check" not in out, out


# --------------------------------------------------------------------------
# Each message is right and specific
# --------------------------------------------------------------------------


def test_a_whole_number_up_to_rounding_is_that_number(capsys):
    assert feedback(capsys, "01.4", 8.000000000000002)[0]
    assert feedback(capsys, "06.1", 257 * (1 + 1e-15))[0]
    verdict, out = feedback(capsys, "01.4", 8.5)
    assert not verdict and "whole number; you gave 8.5." in out, out
    verdict, out = feedback(capsys, "06.1", 257.00001)
    assert not verdict and "you gave 257.00001." in out, out


def test_a_close_whole_number_says_close_not_zero_percent(capsys):
    verdict, out = feedback(capsys, "06.3", 14654)
    assert not verdict and "0.0%" not in out and "too high, but close" in out and "must be exact" in out, out


def test_values_equal_to_float32_precision_are_named_not_printed_twice():
    want = np.array([0.5, 1.1939439123456789])
    message = verify_array(want.astype(np.float32), want, atol=1e-8)
    assert (
        message == "element [1] is right to float32 precision, but this question asks for an error below 1e-08: "
        "compute in float64 and return float64."
    ), message


def test_a_question_that_asks_for_float16_is_not_told_to_use_float64():
    want = np.array([0.84147098, 1.0])
    message = verify_array((want + 3.1e-4).astype(np.float16), want, dtype=np.float16, atol=3e-4)
    assert message == ("element [0] is 0.84179688, expected 0.84147098 (off by 0.00033; it must be within 0.0003)."), (
        message
    )


def test_a_wrong_element_is_printed_with_digits_enough_to_differ():
    want = np.array([1.19394391, 2.0])
    message = verify_array(want + [3e-8, 0], want, atol=1e-8)
    got, expected = re.search(r"is (\S+), expected (\S+) \(off by 3e-08; it must be within 1e-08\)", message).groups()
    assert got != expected and float(got) != float(expected), message
    assert "must be exact" in verify_array(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol=0.0)


@pytest.mark.parametrize(
    "qid,answer",
    [
        ("01.1", "Answer: AC"),
        ("01.1", "answer is A, C"),
        ("01.1", "My answer: a and c"),
        ("01.1", "ANSWER = CA"),
        ("02.1", "The answer is B"),
        ("02.1", "option B"),
        ("03.4", "Answers: A and B"),
    ],
)
def test_a_leading_answer_word_is_skipped(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert verdict, out


def test_an_exception_without_a_message_reads_cleanly(capsys):
    def frequencies(d, base=10000.0):
        raise NotImplementedError

    verdict, out = feedback(capsys, "02.5", frequencies)
    assert not verdict and "your code raised NotImplementedError for " in out and "  " not in out, out


def test_a_word_is_refused_as_a_whole_not_letter_by_letter(capsys):
    verdict, out = feedback(capsys, "01.1", "I think AC")
    assert not verdict and "'THINK' is not a letter" in out and "unknown option" not in out, out
    verdict, out = feedback(capsys, "01.1", "Answer: AE")
    assert not verdict and "'AE' is not a letter or a group of letters" in out, out
    verdict, out = feedback(capsys, "01.1", "A E")
    assert not verdict and "unknown option E: the options are A, B, C, D." in out, out


def test_lists_are_counted_in_words_and_a_one_item_list_is_its_number(capsys):
    for answer in ([0.01], (0.01,), [np.float32(0.01)], [[0.01]], [torch.tensor(0.01)]):
        verdict, out = feedback(capsys, "02.3", answer)
        assert verdict, (answer, out)
    assert "expected one number, got a list of 2 items." in feedback(capsys, "02.3", [0.01, 0.02])[1]
    assert "expected one number, got an empty tuple." in feedback(capsys, "02.3", ())[1]
    assert "1 of 6 elements is wrong" in feedback(capsys, "02.2", QUESTIONS["02.2"].reference() + [0, 0, 0, 0, 0, 1])[1]


def test_close_answers_are_told_the_tolerance(capsys):
    assert "it must be within 0.1% of the right value" in feedback(capsys, "02.3", 0.0102)[1]
    out = feedback(capsys, "02.2", QUESTIONS["02.2"].reference() + 2e-4)[1]
    assert "Close, but each element must be within 0.0001" in out, out
    out = feedback(capsys, "03.1", QUESTIONS["03.1"].reference() * 1.002)[1]
    assert "each element must be within 0.1% of the right value" in out, out


# --------------------------------------------------------------------------
# Chapter arguments are normalised
# --------------------------------------------------------------------------


@pytest.mark.parametrize("chapter", ["2", 2.0, 2, " 02", "02", "02 ", np.int64(2)])
def test_chapter_arguments_are_normalised(chapter, capsys):
    check("02.3", 0.01)
    capsys.readouterr()
    grading.summary(chapter)
    n = sum(qid.startswith("02.") for qid in QUESTIONS)
    assert f"Chapter 02: 1 of {n} solved, 0 attempted, {n - 1} untried." in capsys.readouterr().out
    assert grading.progress(chapter)["02.3"] == "solved"
    with pytest.raises(AssertionError, match=r"chapter 02: not all answers are correct: 02\.1 \(untried\)"):
        grading.assert_all_correct(chapter)


@pytest.mark.parametrize("chapter", ["99", 2.5, True, "two", "", [2]])
def test_an_unknown_chapter_names_the_chapters(chapter, capsys):
    known = ", ".join(sorted({q[:2] for q in QUESTIONS}))
    chapters = f"chapter must be one of {known} (or left out for the whole course), not "
    grading.summary(chapter)
    out = capsys.readouterr().out
    assert out.startswith(f"summary: {chapters}") and out.count("\n") == 1, out
    assert grading.progress(chapter) == {} and capsys.readouterr().out.startswith(f"progress: {chapters}")
    with pytest.raises(AssertionError, match=re.escape(chapters)):
        grading.assert_all_correct(chapter)


# --------------------------------------------------------------------------
# Answers are compared as plain arrays; iterables of numbers are read
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer,words",
    [
        (lambda p, d: np.ma.masked_all((len(p), d)), "masked array with masked (missing) values"),
        (lambda p, d: np.zeros((len(p), d)).view(LyingArray), "element [0, 1] is 0, expected 1"),
        (lambda p, d: np.full((len(p), d), None), "dtype object"),
    ],
)
def test_array_tricks_are_not_accepted_by_a_function_question(answer, words, capsys):
    verdict, out = feedback(capsys, "07.3", answer)
    assert not verdict and "07.3 ✗" in out and words in out, out


def test_a_masked_array_without_masked_values_is_its_data(capsys):
    right = posenc.sinusoidal([4], 6)[0]
    assert feedback(capsys, "02.2", np.ma.array(right))[0]
    assert feedback(capsys, "01.3", lambda x: np.ma.array(x + posenc.sinusoidal(len(x), x.shape[1])))[0]


@pytest.mark.parametrize(
    "answer,words",
    [
        (np.ma.masked_all(6), "masked (missing) values"),
        (np.zeros(6).view(LyingArray), "6 of 6 elements are wrong"),
        (np.array([None] * 6), "not numbers (dtype object)"),
        ([object()] * 6, "not numbers"),
        ({0.5, 0.25}, "a set has no order"),
    ],
)
def test_array_tricks_are_not_accepted_by_an_array_question(answer, words, capsys):
    verdict, out = feedback(capsys, "02.2", answer)
    assert not verdict and "02.2 ✗" in out and words in out, out


def test_a_lying_one_element_array_is_read_as_its_value(capsys):
    want = float(QUESTIONS["01.2"].reference())
    verdict, out = feedback(capsys, "01.2", np.array([want * 3]).view(LyingArray))
    assert not verdict and "too high" in out, out
    assert not feedback(capsys, "01.2", np.ma.masked_all(1))[0]


@pytest.mark.parametrize(
    "make",
    [
        lambda v: (x for x in v),
        lambda v: map(float, v),
        lambda v: iter(v.tolist()),
        lambda v: [Fraction(x) for x in v],
        lambda v: filter(lambda x: True, v),
    ],
)
def test_iterables_of_numbers_are_read(make, capsys):
    right = posenc.sinusoidal([4], 6)[0]
    verdict, out = feedback(capsys, "02.2", make(right))
    assert verdict, out
    verdict, out = feedback(capsys, "02.2", make(right[::-1].copy()))
    assert not verdict and "elements are wrong" in out, out


def test_an_endless_iterator_is_refused_after_a_bounded_read(capsys, monkeypatch):
    monkeypatch.setattr(feedback_module, "ITEMS_READ", 1000)
    verdict, out = feedback(capsys, "02.2", itertools.count())
    assert not verdict and "more than 1,000 values" in out, out


# --------------------------------------------------------------------------
# A learner's function that raises: the message quotes the line of the learner's code that raised
# --------------------------------------------------------------------------


@pytest.fixture(params=[pytest.param(m, marks=pytest.mark.slow) if m == "spawn" else m for m in runner.METHODS])
def method(request, grader_with):
    """Each worker start method, the setting of the test's grader: forked (the worker inherits the kernel's
    linecache) and spawned (it has none, and cloudpickle renames the code's file)."""
    grader = grader_with(method=request.param)
    if request.param == "spawn":
        grader.runner.warm_up()
        assert grader.runner.wait_for_spare()
    return request.param


def notebook_cell(monkeypatch, source, name, namespace=None):
    """Run ``source`` as IPython runs a cell: compiled under a file name of its own that exists only in
    linecache (ipykernel's /tmp/ipykernel_<pid>/<hash>.py), in the notebook's ``__main__`` namespace; return
    what it defines as ``name``."""
    filename = f"/tmp/ipykernel_{os.getpid()}/{zlib.crc32(source.encode())}.py"
    monkeypatch.setitem(linecache.cache, filename, (len(source), None, source.splitlines(keepends=True), filename))
    namespace = namespace if namespace is not None else {"__name__": "__main__", "np": np, "math": math}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


PAIR_OFF_BY_ONE = """\
def sinusoidal_table(positions, d_model, layout="interleaved"):
    positions = np.asarray(positions, dtype=np.float64)
    omega = 10000.0 ** (-2.0 * np.arange(d_model // 2) / d_model)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        angle = positions * omega[i // 2 + 1]
        pe[:, i] = np.sin(angle)
        pe[:, i + 1] = np.cos(angle)
    return pe
"""


def test_an_exception_names_the_learners_line_in_the_cell(method, monkeypatch, capsys):
    f = notebook_cell(monkeypatch, PAIR_OFF_BY_ONE, "sinusoidal_table")
    verdict, out = feedback(capsys, "02.6", f)
    assert not verdict and out.startswith("02.6 ✗ your code raised IndexError: index 4 is out of bounds"), out
    assert out.rstrip().endswith(
        "for 11 positions up to 10 and d_model = 8, layout = 'interleaved', at line 6 of your cell: "
        "angle = positions * omega[i // 2 + 1]"
    ), out


def test_the_deepest_line_of_the_learners_code_is_quoted_not_numpys_or_the_graders(method, monkeypatch, capsys):
    """The error is raised inside numpy, called from a helper in another cell: the helper's line is quoted."""
    namespace = {"__name__": "__main__", "np": np}
    notebook_cell(
        monkeypatch,
        "def angles(p, w):\n    # one row per position\n    return np.outer(p, w).reshape(len(p), 2 * len(w))\n",
        "angles",
        namespace,
    )
    f = notebook_cell(
        monkeypatch,
        "def table(positions, d_model):\n"
        "    w = 10000.0 ** (-2.0 * np.arange(d_model // 2) / d_model)\n"
        "    a = angles(np.asarray(positions, dtype=float), w)\n"
        "    return np.where(np.arange(d_model) % 2, np.cos(a), np.sin(a))\n",
        "table",
        namespace,
    )
    verdict, out = feedback(capsys, "07.3", f)
    assert not verdict and "your code raised ValueError: cannot reshape" in out, out
    assert out.rstrip().endswith(", at line 3 of your cell: return np.outer(p, w).reshape(len(p), 2 * len(w))"), out


def test_a_layer_that_raises_in_forward_gets_the_line_of_forward(method, monkeypatch, capsys):
    layer = notebook_cell(
        monkeypatch,
        """\
class Embed(torch.nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", torch.zeros(8, d_model))

    def forward(self, tokens):
        return self.tokens(tokens) * math.sqrt(self.pe.shape[1]) + self.pe[: tokens.shape[1]]
""",
        "Embed",
        {"__name__": "__main__", "torch": torch, "math": math},
    )
    verdict, out = feedback(capsys, "05.7", layer)
    assert not verdict and "your code raised RuntimeError" in out, out
    assert out.rstrip().endswith(
        ", at line 8 of your cell: return self.tokens(tokens) * math.sqrt(self.pe.shape[1]) "
        "+ self.pe[: tokens.shape[1]]"
    ), out


def test_code_whose_lines_are_unknown_gets_the_message_without_a_line(capsys):
    namespace = {"__name__": "__main__", "np": np}
    exec("def frequencies(d, base=10000.0):\n    return np.arange(d)[d]\n", namespace)  # no linecache entry
    verdict, out = feedback(capsys, "02.5", namespace["frequencies"])
    assert not verdict and out == (
        "02.5 ✗ your code raised IndexError: index 512 is out of bounds for axis 0 with "
        "size 512 for d_model = 512, base = 10000.\n"
    ), out


def test_an_exception_raised_by_the_learner_on_purpose_quotes_the_raise(monkeypatch, capsys):
    f = notebook_cell(
        monkeypatch,
        "def rotation(k, d):\n    if d > 6:\n        raise NotImplementedError('later')\n    return np.eye(d)\n",
        "rotation",
    )
    verdict, out = feedback(capsys, "04.2", f)
    assert not verdict and out.rstrip().endswith("at line 3 of your cell: raise NotImplementedError('later')"), out


# --------------------------------------------------------------------------
# A hint is true: a mistake is named only where it explains the failure
# --------------------------------------------------------------------------

FUNCTIONS = [qid for qid, q in QUESTIONS.items() if q.kind == "function"]
OWN_MODULE = {"05.7"}  # its mistakes' models need the learner's own token table: predicates that check as much


def rope_in_float32(x, p, layout="interleaved"):
    """08.2 right, but returned in float32."""
    return posenc.apply_rope(np.asarray(x)[None], [p], layout=layout)[0].astype(np.float32)


def rope_backwards(x, p, layout="interleaved"):
    """08.2 rotated by -p·ω_i, written as a loop over pairs."""
    out, d = np.array(x, dtype=np.float64), len(x)
    for i in range(d // 2):
        angle = -p * 10000.0 ** (-2.0 * i / d)
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        out[a] = x[a] * math.cos(angle) - x[b] * math.sin(angle)
        out[b] = x[a] * math.sin(angle) + x[b] * math.cos(angle)
    return out


def test_0802_a_right_rotation_in_float32_is_told_so_without_a_hint_at_p_0(capsys):
    verdict, out = feedback(capsys, "08.2", rope_in_float32)
    assert not verdict and "p = 0," in out and "right to float32 precision" in out, out
    assert "Hint" not in out, out  # at p = 0 nothing rotates: neither -p·ω_i nor float32 angles explain it
    verdict, out = feedback(capsys, "08.2", rope_backwards)
    assert not verdict and "p = 1," in out and "Hint: you rotated by -p·ω_i" in out, out


@pytest.mark.parametrize("qid", sorted(set(FUNCTIONS) - OWN_MODULE))
def test_right_values_returned_in_float32_get_no_hint(qid, capsys):
    """The check says the values agree only to float32 precision; no bug is named (01.3 was told that its
    error grows with the position)."""
    q = QUESTIONS[qid]
    reference = q.reference()

    def in_float32(*args, **kwargs):
        out = np.asarray(reference(*args, **kwargs))
        return out.astype(np.float32).astype(np.float64) if out.dtype.kind == "f" else out

    verdict, out = feedback(capsys, qid, in_float32)
    assert "Hint" not in out, out


def test_every_coding_mistake_is_a_model_or_checks_both_conditions_itself():
    predicates = {qid for qid in FUNCTIONS for m, _ in QUESTIONS[qid].mistakes if not isinstance(m, Model)}
    assert predicates == OWN_MODULE


def right_output(q, case):
    return np.asarray(q.call(q.reference(), *copy.deepcopy(case.args)), dtype=np.float64)


def near_but_failing(q, made):
    """Outputs within the question's tolerance of ``made`` or just beyond it, as a learner might return them."""
    tol = q.atol + q.rtol * np.abs(made)
    step = np.where(tol > 0, 1.5 * tol, 1.0)  # a whole-number question: one off
    outs = [made.astype(np.float32).astype(np.float64), made + step, made - step, made + 0.9 * tol]
    return [out if q.dtype is None else out.astype(q.dtype) for out in outs]


@pytest.mark.parametrize("qid", sorted(set(FUNCTIONS) - OWN_MODULE))
def test_a_mistake_whose_model_gives_the_right_answer_is_never_named(qid):
    """Over the question's own test inputs: wherever a mistake's model gives the right answer (within the
    tolerance), a failing output near it is never told that mistake's hint, unless another mistake with the same
    hint gives a wrong answer there (one that can explain the failure)."""
    q = QUESTIONS[qid]
    seen = 0
    for case in q.cases(np.random.default_rng(zlib.crc32(qid.encode()))):
        if case.raises:  # the right answer raises here: no output to compare
            continue
        want = right_output(q, case)
        wrong_here = {}  # hint -> does some mistake with that hint give a wrong answer for this case?
        coinciding = []
        for mistake, hint in q.mistakes:
            try:
                made = mistake.make(*copy.deepcopy(case.args))
            except Exception:
                continue
            if made is None:
                continue
            made = np.asarray(made, dtype=np.float64)
            cast = made if q.dtype is None else made.astype(q.dtype)
            if q.verify(cast, case) is None and made.shape == want.shape:
                coinciding.append((mistake, hint, made))
            else:
                wrong_here[hint] = True
        for mistake, hint, made in coinciding:
            for out in near_but_failing(q, made):
                if q.verify(out, case) is None:
                    continue  # not a failing answer
                seen += 1
                assert not q.explains(mistake, out, case), (qid, case.label, hint)
                message = q._problem(case, case.args, out, None)
                assert hint not in message or wrong_here.get(hint), (qid, case.label, message)
    if qid == "08.2":
        assert seen > 0  # -p·ω_i at p = 0, among others


def test_0507_a_right_layer_off_by_more_than_the_tolerance_gets_no_hint(capsys):
    reference = QUESTIONS["05.7"].reference()

    class Off(reference):
        def forward(self, tokens):
            return super().forward(tokens) + 1e-4

    verdict, out = feedback(capsys, "05.7", Off)
    assert not verdict and "wrong value" in out and "Hint" not in out, out


@pytest.mark.parametrize(
    "question,near",
    [
        (Numeric("99.1", "a number", lambda: 1.0, rtol=1e-3, mistakes=[(lambda: 1.0009, "a hint")]), 1.0015),
        (
            Array("99.2", "an array", lambda: [1.0, 2.0], atol=1e-3, mistakes=[(lambda: [1.0, 2.0009], "a hint")]),
            [1.0, 2.0015],
        ),
    ],
)
def test_a_number_or_array_mistake_within_the_tolerance_of_the_answer_is_never_named(question, near):
    status, message = question.judge(near)  # within the tolerance of the mistake, not of the answer
    assert status == WRONG and "a hint" not in message, message


# --------------------------------------------------------------------------
# How far off: the largest error of an array, how close a close number is, no answer given away
# --------------------------------------------------------------------------


def test_an_array_answer_is_told_its_largest_error_against_the_tolerance(capsys):
    want = QUESTIONS["02.2"].reference()
    out = feedback(capsys, "02.2", want + [3e-4, 0, 0, 0.05, 0, 0])[1]
    assert (
        "2 of 6 elements are wrong; the first is element [0] (too high); the largest error, at element [3], is "
        "between 0.01 and 0.1. Each element must be within 0.0001." in out
    ), out
    out = feedback(capsys, "02.2", want + [0, 0, 0, 0, 0, 3e-4])[1]
    assert "1 of 6 elements is wrong: element [5] is too high, by between 1e-4 and 1e-3. Close," in out, out
    out = feedback(capsys, "03.1", QUESTIONS["03.1"].reference() * [1, 1.3, 1.002, 1, 1])[1]
    assert "the largest error, at element [1], is between 10% and 100% of the right value. Each element" in out, out
    message = verify_array(np.array([1.0 + 3e-8, 2.0 + 3.2e-4, 3.0]), np.array([1.0, 2.0, 3.0]), atol=1e-8)
    assert message.endswith("it must be within 1e-08); the largest error is 0.00032, at element [1]."), message


@pytest.mark.parametrize(
    "factor,words",
    [
        (1.003, "too high, but close: within 1%; it must be within 0.1% of the right value."),
        (0.996, "too low, but close: within 1%;"),
        (1.03, "too high, but close: within 10%;"),
    ],
)
def test_a_close_number_is_told_how_close(factor, words, capsys):
    want = QUESTIONS["02.4"].reference()
    out = feedback(capsys, "02.4", want * factor)[1]
    assert words in out and "rounded" not in out, out
    out = feedback(capsys, "02.4", float(f"{want:.3g}"))[1]  # 0.3% off: the answer to three digits
    assert "within 1%" in out and "It is the right value rounded to 3 significant digits: give more digits." in out


def test_0204_the_missing_pair_is_named_without_the_answer(capsys):
    out = feedback(capsys, "02.4", 1 / 10000)[1]
    assert "does not exist" in out and not re.search(r"255|256|510|512", out), out
