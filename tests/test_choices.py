"""The choice engine (posenc_course/choices.py): what a set of letters is told, and which questions are refused.

The grader's wording of these judgements, read from typed answers, is tested in test_grading_kinds.py; the
quizzes' rendering of them, clicked in a browser, in test_quizzes.py.
"""

import itertools

import pytest

from grading import QUESTIONS
from posenc_course.choices import Choice, ChoiceQuestion
from posenc_course.quizzes import QUIZZES

ONE = ChoiceQuestion("Which?", (Choice("a", False, "not a"), Choice("b", True, "b it is"), Choice("c", False, "not c")))
SEVERAL = ChoiceQuestion(
    "Which hold?",
    (Choice("a", True, "a holds"), Choice("b", False, "b fails"), Choice("c", True, "c holds")),
    nudge="Test each.",
)


def test_graded_questions_and_quizzes_are_questions_of_the_one_engine():
    assert all(isinstance(q, ChoiceQuestion) for q in QUESTIONS.values() if q.kind == "choice")
    assert all(isinstance(q, ChoiceQuestion) for qs in QUIZZES.values() for q in qs)


def test_letters_key_and_explanations_follow_the_order_of_the_choices():
    assert (ONE.letters, ONE.key, SEVERAL.key) == ("ABC", {"B"}, {"A", "C"})
    assert ONE.explanations == {"A": "not a", "B": "b it is", "C": "not c"}
    assert SEVERAL.explained().splitlines() == ["  A (right): a holds", "  B (wrong): b fails", "  C (right): c holds"]


def test_one_right_letter_each_letter_earns_its_own_explanation():
    right = ONE.judgement({"B"})
    assert right.correct and right.why == "b it is" and right.message.endswith(ONE.explained())
    wrong = ONE.judgement({"C"})
    assert not wrong.correct and wrong.why == "not c" and wrong.message == "C is not right. C: not c"
    several = ONE.judgement({"A", "B"})
    assert not several.correct and several.message == "choose exactly one letter." and several.why == ""


def test_several_right_letters_no_wrong_set_names_a_letter():
    wrong_sets = [
        set(s) for n in range(1, 3) for s in itertools.combinations("ABC", n) if set(s) != {"A", "C"}
    ]  # every set short of all three
    said = {(j.correct, j.message, j.why) for j in map(SEVERAL.judgement, wrong_sets)}
    assert said == {(False, "not the right set of options. Test each.", "")}
    every = SEVERAL.judgement({"A", "B", "C"})
    assert not every.correct and every.message.startswith("you chose every option") and every.why == ""
    solved = SEVERAL.judgement({"C", "A"})
    assert solved.correct and solved.message == "— why each option is right or wrong:\n" + SEVERAL.explained()


def test_unknown_letters_are_named():
    j = ONE.judgement({"A", "Z"})
    assert not j.correct and j.message == "unknown option Z: the options are A, B, C."


@pytest.mark.parametrize(
    "choices, nudge, message",
    [
        ((Choice("a", True, "x"),), "", "2 to 8 choices, not 1"),
        ((Choice("a", False, "x"), Choice("b", False, "y")), "", "at least one choice correct"),
        ((Choice("a", True, "x"), Choice("b", False, " ")), "", "B has none"),
        ((Choice("a", True, "x"), Choice("b", True, "y")), "", "needs a nudge"),
    ],
)
def test_malformed_questions_are_refused(choices, nudge, message):
    with pytest.raises(ValueError, match=message):
        ChoiceQuestion("Which?", choices, nudge=nudge)
