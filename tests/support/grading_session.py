"""What the grader's test modules share: a grader of its own for each test, and one check's output.

``fresh_progress``, ``time_limit`` and ``grader_with`` are fixtures of the whole suite (conftest.py lists this
module in ``pytest_plugins``); a grader's test module asks for ``fresh_progress`` for every one of its tests with
``pytestmark = pytest.mark.usefixtures("fresh_progress")``, and imports ``feedback`` if it needs it. The grader
is imported when a test needs it, not when pytest starts: by then conftest.py has set the session's progress file.
"""

import contextlib

import pytest


@pytest.fixture
def time_limit():
    """Seconds a learner's function gets over all its inputs in a test's grader. A test that needs another limit
    parametrizes this name, ``@pytest.mark.parametrize("time_limit", [1.0])``, which ``fresh_progress`` and
    ``grader_with`` then use."""
    return 5.0


@pytest.fixture
def fresh_progress(tmp_path, time_limit):
    """No progress recorded before the test: the public functions use a grader of its own (its settings:
    ``time_limit``, the runner's default start method), whose progress file is in ``tmp_path`` (the one they used
    before is back after it). Yields that grader."""
    import grading

    # no fsync: hundreds of checks per module
    grader = grading.Grader(tmp_path / "progress.json", durable=False, time_limit=time_limit)
    with grading.use_grader(grader):
        yield grader
    grader.runner.stop_spare()


@pytest.fixture
def grader_with(fresh_progress):
    """``grader_with(method="spawn")``: the public functions use, for the rest of the test, a grader with these
    settings (``time_limit`` left out: the test's) that keeps the test's progress file. Returns it."""
    import grading

    with contextlib.ExitStack() as stack:

        def lend(**settings):
            settings.setdefault("time_limit", fresh_progress.runner.time_limit)
            grader = grading.Grader(fresh_progress.store.path, durable=False, **settings)
            stack.callback(grader.runner.stop_spare)
            return stack.enter_context(grading.use_grader(grader))

        yield lend


def feedback(capsys, qid, answer):
    """(verdict, printed text) of one check."""
    from grading import check

    verdict = check(qid, answer)
    return verdict, capsys.readouterr().out
