"""The elimination bot (tools/grading_bot.py): select every option, drop the letters the feedback names.

Against the grader it must solve no multi-select question within its tries; against feedback that names the
letters to drop (a leaky grader, the kind the course must not be) it solves every one on the second try, so a bot that
could not read feedback would fail here.
"""

import pytest

import grading
from grading import QUESTIONS
from tools import grading_bot

pytestmark = pytest.mark.usefixtures("fresh_progress")  # every test: progress of its own


def names_the_wrong_letters(qid, answer):
    """Leaky feedback that names the letters to drop: "B and D are not right."."""
    q = QUESTIONS[qid]
    wrong = sorted(set(answer) - q.correct)
    print(f"{qid} ✓ correct" if set(answer) == q.correct else f"{qid} ✗ {' and '.join(wrong)} are not right.")
    return set(answer) == q.correct


MULTI_SELECT = [qid for qid, q in QUESTIONS.items() if q.kind == "choice" and len(q.correct) > 1]


def test_every_multi_select_question_is_tried():
    qids = grading_bot.multi_select()
    assert sorted(qids) == sorted(MULTI_SELECT) and len(qids) >= 14


def test_the_bot_solves_nothing_against_the_grader(capsys):
    runs = [grading_bot.eliminate(qid) for qid in grading_bot.multi_select()]
    assert [r.qid for r in runs if r.solved_at is not None] == []
    assert all(len(r.answers) == grading_bot.TRIES and r.answers[0] == QUESTIONS[r.qid].letters for r in runs)
    assert grading.progress("01")["01.1"] == "wrong"


def test_the_bot_solves_everything_when_feedback_names_the_letters():
    runs = [grading_bot.eliminate(qid, check=names_the_wrong_letters) for qid in grading_bot.multi_select()]
    assert [r.solved_at for r in runs] == [2] * len(MULTI_SELECT)


def test_the_report_says_none_and_returns_0(capsys):
    assert grading_bot.main([]) == 0
    out = capsys.readouterr().out
    expected = f"elimination bot: solved within 3 tries 0 of {len(MULTI_SELECT)} multi-select questions"
    assert out.startswith(expected), out
    assert grading.progress("01")["01.1"] == "untried"  # the bot's tries are not the learner's progress


def test_named_letters_reads_capitals_standing_alone():
    assert grading_bot.named_letters("B and D are not right. D: hint", "ABCD") == {"B", "D"}
    assert grading_bot.named_letters("Attn(PX) = P·Attn(X), E", "ABCD") == set()
