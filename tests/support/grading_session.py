"""What the grader's test modules share: a fresh record of progress for each test, and one check's output.

Import both names into a test module (``from support.grading_session import feedback, fresh_progress``):
pytest then uses the fixture there, for every test of that module.
"""

import pytest

import grading
from grading import check


@pytest.fixture(autouse=True)
def fresh_progress(monkeypatch, tmp_path):
    """No progress recorded before the test (a progress file of its own, in ``tmp_path``; none after it); a
    learner's function gets 5 s over all its inputs."""
    grading._use_progress_file(tmp_path / "progress.json")
    monkeypatch.setattr(grading._store, "durable", False)  # no fsync: hundreds of checks per module
    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 5.0)
    yield
    grading._use_progress_file(None)


def feedback(capsys, qid, answer):
    """(verdict, printed text) of one check."""
    verdict = check(qid, answer)
    return verdict, capsys.readouterr().out
