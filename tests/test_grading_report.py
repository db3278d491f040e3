"""The maintainer's report (tools/grading_report.py) counts what the grader does wrong, and says so.

The full battery is ``make bench``'s; here the report runs on two quick questions, with the real grader and
with graders broken on purpose, so that a report that counted nothing, or counted a wrong outcome as right,
would fail.
"""

import re

import pytest

import grading
from tools import grading_battery as battery, grading_report

QIDS = ["01.2", "01.1"]  # a numeric and a choice question: a few hundred tries in well under a second
FIGURES = re.compile(
    r"correct answers rejected: (\d+) of (\d+); wrong answers accepted: (\d+) of (\d+); "
    r"hostile inputs handled: (\d+) of (\d+)"
)


def report(capsys, qids=QIDS):
    """(return code of main, the six figures, the printed text)."""
    code = grading_report.main(list(qids))
    out = capsys.readouterr().out
    return code, tuple(int(n) for n in FIGURES.search(out).groups()), out


def sizes(qids=QIDS):
    every = [t for qid in qids for t in battery.tries(qid)]
    return {c: sum(t.category == c for t in every) for c in battery.CATEGORIES}


def test_the_real_grader_passes_and_every_try_is_counted(capsys):
    n = sizes()
    assert min(n.values()) >= 10
    code, figures, out = report(capsys)
    assert code == 0, out
    assert figures == (0, n["correct"], 0, n["wrong"], n["hostile"], n["hostile"]), out


def _accepts_everything(qid, answer):
    print(f"{qid} ✓ correct.")
    return True


def _rejects_everything(qid, answer):
    print(f"{qid} ✗ wrong.")
    return False


def _raises(qid, answer):
    raise RuntimeError("a bug in the grader")


def _talks_too_much(qid, answer):
    print(f"{qid} ✗ wrong.\nTraceback (most recent call last): ...")
    return False


@pytest.mark.parametrize(
    "broken,expected",
    [
        # (correct answers rejected, wrong answers accepted, hostile inputs handled)
        (_accepts_everything, ("none", "all", "none")),
        (_rejects_everything, ("all", "known", "all")),  # a known mistake must be told its own hint
        (_raises, ("all", "all", "none")),
        (_talks_too_much, ("all", "all", "none")),
    ],
)
def test_a_broken_grader_is_counted_and_fails_the_report(broken, expected, capsys, monkeypatch):
    monkeypatch.setattr(grading, "check", broken)
    n = sizes()
    known = sum(bool(t.words) for qid in QIDS for t in battery.tries(qid))  # known mistakes and models of mistakes
    share = {"all": lambda c: n[c], "none": lambda c: 0, "known": lambda c: known}
    code, figures, out = report(capsys)
    want = (
        share[expected[0]]("correct"),
        n["correct"],
        share[expected[1]]("wrong"),
        n["wrong"],
        share[expected[2]]("hostile"),
        n["hostile"],
    )
    assert figures == want, out
    assert code == 1, out
    assert expected[0] == "none" or f"  correct {QIDS[0]}-correct-" in out  # each failing try is named


def test_an_unknown_question_is_refused():
    with pytest.raises(SystemExit):
        grading_report.main(["99.9"])
