"""How the suite is cut into units of work for pytest-xdist (conftest.py at the repository's root)."""

from __future__ import annotations

import pytest

import conftest


def test_a_test_goes_with_its_file_unless_grouped():
    assert conftest.scope_of("tests/test_a.py::test_b") == "tests/test_a.py"
    assert conftest.scope_of("tests/test_a.py::test_b[x-y]") == "tests/test_a.py"
    assert conftest.scope_of("tests/test_a.py::test_b[x@y]") == "tests/test_a.py"  # an "@" in a parameter
    assert conftest.scope_of("tests/test_a.py::test_b[x-dark]@browser-book-dark") == "browser-book-dark"


class Collected:
    def __init__(self):
        self.items = []

    def pytest_collection_finish(self, session):
        self.items = list(session.items)


@pytest.fixture(scope="module")
def browser_items():
    """The browser tests of the built book as the suite orders them (collected, not run)."""
    collected = Collected()
    code = pytest.main(
        ["tests/test_browser_book.py", "--collect-only", "-qq", "-p", "no:randomly"], plugins=[collected]
    )
    assert code == 0
    return collected.items


def test_the_dark_half_of_the_visits_is_a_unit_of_its_own(browser_items):
    """Every test asking for a dark or printed visit is in the dark unit, and no other: else one worker would
    make both halves of the visits (VISIT_GROUPS in test_browser_book.py)."""
    from tests import test_browser_book as book

    dark = set(book.VISIT_GROUPS["dark"])
    wrong = []
    for item in browser_items:
        if item.path.name != "test_browser_book.py":
            continue
        mode = getattr(item, "callspec", None) and item.callspec.params.get("mode")
        asks_dark = mode in dark or item.originalname in {
            "test_dark_mode_puts_no_figure_or_table_on_a_light_panel",
            "test_printed_page_cuts_nothing_and_quizzes_carry_answers",
        }
        if asks_dark != (conftest.unit(item) == "browser-book-dark"):
            wrong.append(item.nodeid)
    assert not wrong, wrong
    assert sum(conftest.unit(i) == "browser-book-dark" for i in browser_items) > len(book.PAGES)


def test_the_dark_unit_is_handed_out_early_but_after_the_light_one(browser_items):
    """The light half first (it builds the book), the dark half after it; both in LONGEST (a unit not listed there
    is handed out after every listed one, and so could start last)."""
    order = list(dict.fromkeys(conftest.unit(i) for i in browser_items))
    assert order == ["test_browser_book.py", "browser-book-dark"], order
    assert conftest.LONGEST.index("test_browser_book.py") == 0
    assert 0 < conftest.LONGEST.index("browser-book-dark") < len(conftest.LONGEST) // 2


GROUPED = """
import time
import pytest

LATER = pytest.mark.xdist_group("later")


def test_first():
    time.sleep(2)  # long enough for the other worker to take the next unit


@pytest.mark.parametrize("half", ["now", pytest.param("later", marks=LATER)])
@pytest.mark.parametrize("n", range(4))
def test_half(n, half):
    pass
"""


@pytest.mark.slow  # two xdist workers started in a fresh pytest: seconds
def test_a_group_runs_on_a_worker_of_its_own_beside_its_file(tmp_path):
    """End to end, as make test runs: pytest -n 2 --dist loadgroup with this conftest. The grouped tests of a file run
    together, on the other worker than the file's other tests (with pytest 9.2 and pytest-xdist 3.8 they did not: the
    group's name never reached the scheduler, and nothing failed)."""
    import re
    from pathlib import Path

    from tests.support.pytest_run import run_pytest

    root = Path(conftest.__file__).parent
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    done = run_pytest(
        ["test_grouped.py", "-p", "conftest", "-n", "2", "--dist", "loadgroup", "-v"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(root)},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = dict((test, worker) for worker, test in re.findall(r"\[(gw\d)\] .*?PASSED (\S+)", done.stdout))
    assert len(ran) == 9, done.stdout[-3000:]
    later = {w for t, w in ran.items() if "-later]" in t}
    rest = {w for t, w in ran.items() if "-later]" not in t}
    assert len(later) == 1 and len(rest) == 1 and later != rest, ran
    assert all(t.endswith("@later") for t in ran if "-later]" in t), ran
