"""What the grader's test modules share: a fresh record of progress for each test, and one check's output.

``fresh_progress`` is a fixture of the whole suite (conftest.py lists this module in ``pytest_plugins``); a
grader's test module asks for it for every one of its tests with
``pytestmark = pytest.mark.usefixtures("fresh_progress")``, and imports ``feedback`` if it needs it. The grader
is imported when a test needs it, not when pytest starts: by then conftest.py has set the session's progress file.
"""

import pytest


@pytest.fixture
def fresh_progress(monkeypatch, tmp_path):
    """No progress recorded before the test: the public functions use a grader of its own, whose progress file is
    in ``tmp_path`` (the one they used before is back after it); a learner's function gets 5 s over all its
    inputs. Yields that grader."""
    import grading

    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 5.0)
    # no fsync: hundreds of checks per module
    with grading.use_grader(grading.Grader(tmp_path / "progress.json", durable=False)) as grader:
        yield grader


def feedback(capsys, qid, answer):
    """(verdict, printed text) of one check."""
    from grading import check

    verdict = check(qid, answer)
    return verdict, capsys.readouterr().out
