"""What the grader's test modules share: a fresh record of progress for each test, and one check's output.

Import both names into a test module (``from grading_session import feedback, fresh_progress``):
pytest then uses the fixture there, for every test of that module.
"""

import pytest

import grading
from grading import check


@pytest.fixture(autouse=True)
def fresh_progress(monkeypatch):
    """No progress recorded before or after the test; a learner's function gets 5 s over all its inputs."""
    grading.reset()
    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 5.0)
    yield
    grading.reset()


def feedback(capsys, qid, answer):
    """(verdict, printed text) of one check."""
    verdict = check(qid, answer)
    return verdict, capsys.readouterr().out
