"""The question kinds (grading/kinds.py): what a choice question says to a wrong and to a right answer; and
the bank that collects them (grading/bank/__init__.py).

A wrong set of letters to a multi-select question gets the same feedback whichever set it is (bar "you chose
every option"): nothing to eliminate letters by. A solved question, or one whose answer the learner asks to
see (``grading.reveal``), explains every option. The bank holds every chapter module's questions, in order,
each under its own chapter's id, and no module of the grader imports one that imports it back.
"""

import importlib
import itertools
from pathlib import Path

import pytest

import grading
from grading import QUESTIONS, check
from grading.bank import collect
from grading.kinds import Choice, Numeric
from tests.support.grading_session import feedback

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own

MULTI = [qid for qid, q in QUESTIONS.items() if q.kind == "choice" and len(q.correct) > 1]
SINGLE = [qid for qid, q in QUESTIONS.items() if q.kind == "choice" and len(q.correct) == 1]


def wrong_sets(q):
    return [
        "".join(s)
        for n in range(1, len(q.letters))
        for s in itertools.combinations(q.letters, n)
        if set(s) != q.correct
    ]


@pytest.mark.parametrize("qid", MULTI)
def test_every_wrong_set_gets_the_same_feedback_on_the_reasoning(qid, capsys):
    q = QUESTIONS[qid]
    said = {feedback(capsys, qid, letters)[1] for letters in wrong_sets(q)}
    assert said == {f"{qid} ✗ not the right set of options. {q.nudge}\n"}, said
    _, everything = feedback(capsys, qid, q.letters)
    assert everything.startswith(f"{qid} ✗ you chose every option: decide for each one") and q.nudge in everything


@pytest.mark.parametrize("qid", MULTI + SINGLE)
def test_a_solved_question_explains_every_option(qid, capsys):
    q = QUESTIONS[qid]
    verdict, out = feedback(capsys, qid, q.reference())
    lines = out.splitlines()
    assert verdict and lines[0] == f"{qid} ✓ correct — why each option is right or wrong:", out
    assert len(lines) == 1 + len(q.letters)
    for line, letter in zip(lines[1:], q.letters):
        state = "right" if letter in q.correct else "wrong"
        assert line == f"  {letter} ({state}): {q.explanations[letter]}"


@pytest.mark.parametrize("qid", SINGLE)
def test_a_wrong_single_letter_is_told_why(qid, capsys):
    q = QUESTIONS[qid]
    for letter in sorted(set(q.letters) - q.correct):
        verdict, out = feedback(capsys, qid, letter)
        assert not verdict and out == f"{qid} ✗ {letter} is not right. {letter}: {q.explanations[letter]}\n"


def test_reveal_shows_the_answer_and_summary_says_so(capsys):
    grading.reveal("03.3")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "03.3 answer: AB — why each option is right or wrong:"
    assert out.splitlines()[1:] == QUESTIONS["03.3"].explained().splitlines()
    grading.summary("03")
    assert "answer shown (grading.reveal): 03.3" in capsys.readouterr().out
    grading.reveal("03.2")
    assert "only the answers of choice questions" in capsys.readouterr().out
    grading.reveal("99.9")
    assert "is not a question id" in capsys.readouterr().out
    assert check("03.3", "AB")  # revealing does not block a later check


def test_an_option_without_explanation_or_a_multi_select_without_nudge_is_refused():
    with pytest.raises(ValueError, match="^x.1: every choice needs a reason .*; A, C have none"):
        Choice("x.1", "t", "ABC", "A", {"B": "b"})
    with pytest.raises(ValueError, match="^x.2: .*needs a nudge"):
        Choice("x.2", "t", "ABC", "AB", {"C": "c"}, right={"A": "a", "B": "b"})


def test_a_key_or_an_explanation_outside_the_options_is_refused():
    with pytest.raises(ValueError, match="^x.3: D is not one of the options ABC"):
        Choice("x.3", "t", "ABC", "D", {"A": "a", "B": "b", "C": "c"})
    with pytest.raises(ValueError, match="^x.4: E is not one of the options ABCD"):
        Choice("x.4", "t", "ABCD", "A", {"B": "b", "C": "c", "D": "d", "E": "e"}, right={"A": "a"})
    with pytest.raises(ValueError, match="^x.5: the options are lettered in order from A"):
        Choice("x.5", "t", "ABD", "A", {"B": "b", "D": "d"}, right={"A": "a"})


# --------------------------------------------------------------------------
# The bank: every chapter module's questions, collected without an import circle
# --------------------------------------------------------------------------

GRADER = Path(grading.__file__).resolve().parent


def test_the_bank_holds_every_chapter_modules_questions_in_order():
    modules = sorted(p.stem for p in (GRADER / "bank").glob("ch[0-9][0-9].py"))
    declared = [q for name in modules for q in importlib.import_module(f"grading.bank.{name}").QUESTIONS]
    assert len(modules) > 1 and list(QUESTIONS.values()) == declared
    assert all(qid == q.qid for qid, q in QUESTIONS.items())


def test_a_question_outside_its_chapter_or_declared_twice_is_refused():
    def numeric(qid):
        return Numeric(qid, "t", lambda: 1.0)

    with pytest.raises(ValueError, match=r"^ch04\.py declares question 05\.1: its ids are 04\.1, 04\.2, \.\.\.$"):
        collect([("ch04", [numeric("04.1"), numeric("05.1")])])
    with pytest.raises(ValueError, match=r"^ch04\.py declares question 04\.2 twice$"):
        collect([("ch04", [numeric("04.2"), numeric("04.2")])])
    assert list(collect([("ch04", [numeric("04.1")]), ("ch05", [numeric("05.1")])])) == ["04.1", "05.1"]


def test_a_function_question_runs_the_learners_code_only_in_a_graders_runner():
    question = QUESTIONS["02.5"]
    with pytest.raises(TypeError, match="^02.5: a function question runs the learner's code in a grader's runner"):
        question.judge(question.reference())
    assert question.judge(question.reference(), grading.current_grader().runner)[0] == "correct"
